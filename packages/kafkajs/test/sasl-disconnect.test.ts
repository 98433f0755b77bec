import * as net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KafkajsSourceCluster } from "../src/kafkajs-source";
import { Writer } from "../src/wire";

/**
 * A fake SASL_PLAINTEXT broker: ApiVersions, SaslHandshake and SaslAuthenticate for the admin client id,
 * Metadata v12 naming itself as broker 1; on the fetcher's connection the socket is closed when the
 * SaslAuthenticate request arrives (a broker shutting down, a dropped connection: a network failure, not a
 * refusal of the credentials).
 */
function frame(correlationId: number, body: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeInt32BE(4 + body.length, 0);
  head.writeInt32BE(correlationId, 4);
  return Buffer.concat([head, body]);
}

let server: net.Server;
let port = 0;

beforeAll(async () => {
  server = net.createServer((socket) => {
    let buffered = Buffer.alloc(0);
    socket.on("data", (chunk) => {
      buffered = Buffer.concat([buffered, chunk]);
      while (buffered.length >= 4 && buffered.length >= 4 + buffered.readInt32BE(0)) {
        const size = buffered.readInt32BE(0);
        const req = buffered.subarray(4, 4 + size);
        buffered = buffered.subarray(4 + size);
        const apiKey = req.readInt16BE(0);
        const correlationId = req.readInt32BE(4);
        const idLength = req.readInt16BE(8);
        const clientId = req.subarray(10, 10 + idLength).toString();
        if (apiKey === 18) {
          const w = new Writer().int16(0);
          const apis: [number, number, number][] = [
            [1, 12, 13],
            [3, 12, 12],
            [17, 0, 1],
            [36, 0, 1],
            [18, 0, 2],
          ];
          w.array(apis, (aw, [k, min, max]) => aw.int16(k).int16(min).int16(max)).int32(0);
          socket.write(frame(correlationId, w.finish()));
        } else if (apiKey === 17) {
          const w = new Writer().int16(0).array(["PLAIN"], (sw, m) => sw.string(m));
          socket.write(frame(correlationId, w.finish()));
        } else if (apiKey === 36) {
          if (clientId === "fetcher-client") {
            socket.destroy(); // the connection drops during authentication
            return;
          }
          const w = new Writer().int16(0).string(null).int32(0).int64(0n);
          socket.write(frame(correlationId, w.finish()));
        } else if (apiKey === 3) {
          const w = new Writer().noTags().int32(0);
          w.compactArray([1], (bw, id) =>
            bw.int32(id).compactString("127.0.0.1").int32(port).compactString(null).noTags(),
          );
          w.compactString("fake-cluster")
            .int32(1)
            .compactArray([], () => {})
            .noTags();
          socket.write(frame(correlationId, w.finish()));
        } else socket.destroy();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as net.AddressInfo).port;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

describe("a connection that drops during SASL authentication", () => {
  it("is a retriable failure of the fetch (as a disconnect at any other time), not a non-retriable authentication failure", async () => {
    const source = new KafkajsSourceCluster("m", {
      "bootstrap.servers": `127.0.0.1:${port}`,
      "security.protocol": "SASL_PLAINTEXT",
      "sasl.mechanism": "PLAIN",
      "sasl.jaas.config":
        'org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p";',
    });
    try {
      expect(await source.clusterId()).toBe("fake-cluster");
      let outcome: { retriable: boolean; name: string; message: string };
      try {
        const res = await source.fetch({
          clientId: "fetcher-client",
          brokerId: 1,
          maxBytes: 1 << 20,
          partitions: [
            {
              topic: "t",
              partition: 0,
              fetchOffset: 0n,
              lastFetchedEpoch: -1,
              currentLeaderEpoch: 0,
              maxBytes: 1 << 20,
            },
          ],
        });
        const e = res.partitions[0]!.error!;
        outcome = { retriable: e.retriable, name: e.errorName, message: e.message };
      } catch (error) {
        const e = error as { retriable: boolean; errorName: string; message: string };
        outcome = { retriable: e.retriable, name: e.errorName, message: e.message };
      }
      expect(outcome.retriable).toBe(true);
    } finally {
      await source.close();
    }
  }, 30_000);
});
