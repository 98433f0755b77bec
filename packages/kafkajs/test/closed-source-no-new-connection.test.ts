import { KafkaError } from "@cluster-mirror/protocol";
import { describe, expect, it } from "vitest";
import { KafkajsSourceCluster } from "../src/kafkajs-source";
import { fakeBroker } from "./fixtures/fake-fetch-broker";

/**
 * A call that needs a broker the source has no address for yet (a fetch from a broker learnt on the
 * mirror's previous connection, a leader the last Metadata answer named without its address) asks for
 * Metadata first. Closed while that is answered, the source must not connect to the broker afterwards:
 * `close` has dropped the connections it found, and nothing would ever close this one (kafkajs keeps a
 * timer running for each connection until it is closed).
 */
describe("a kafkajs source closed while a call learns a broker's address", () => {
  it("opens no connection to it after close: the call fails retriable", async () => {
    let source: KafkajsSourceCluster | undefined;
    let closing: Promise<void> | undefined;
    let metadataRequests = 0;
    const broker = await fakeBroker(
      () => ({ topics: [] }),
      // t-0 is led by node 2, which the first answer names no address for.
      [{ name: "t", errorCode: 0, partitions: 1, leaderId: 2 }],
      () => ({ errorCode: 0, offset: 7n }),
      (port) => {
        metadataRequests++;
        if (metadataRequests === 1) return [{ nodeId: 1, port }];
        // The lookup's Metadata request for node 2's address: the source is closed as it is answered.
        closing ??= source!.close();
        return [
          { nodeId: 1, port },
          { nodeId: 2, port },
        ];
      },
    );
    source = new KafkajsSourceCluster("m", { "bootstrap.servers": `127.0.0.1:${broker.port}` });
    try {
      const failure = await source.listOffsets("t", 0, -1n).then(
        () => undefined,
        (error: unknown) => error,
      );
      await closing;
      expect(metadataRequests).toBe(2);
      expect(failure).toBeInstanceOf(KafkaError);
      expect(failure).toMatchObject({ errorName: "BROKER_NOT_AVAILABLE", retriable: true });
      // The bootstrap connection alone: none to node 2, opened after the source was closed.
      expect(broker.accepted()).toBe(1);
    } finally {
      await source.close();
      await broker.close();
    }
  });
});
