import * as net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KafkajsSourceCluster } from "../src/kafkajs-source";
import { Writer } from "../src/wire";
import { frame, onRequests } from "./fixtures/fake-fetch-broker";

/**
 * A fake SASL_PLAINTEXT broker: ApiVersions, SaslHandshake and SaslAuthenticate for the admin client id,
 * Metadata v12 naming itself as broker 1; on the fetcher's connection the socket is closed when the
 * SaslAuthenticate request arrives (a broker shutting down, a dropped connection: a network failure, not a
 * refusal of the credentials).
 */

let server: net.Server;
let port = 0;

beforeAll(async () => {
  server = net.createServer((socket) => {
    onRequests(socket, ({ apiKey, correlationId, clientId }) => {
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
