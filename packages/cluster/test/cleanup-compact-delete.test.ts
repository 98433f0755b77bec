import { decodeRecords, encodeRecordBatch } from "@cluster-mirror/protocol";
import { describe, expect, it } from "vitest";
import { testCluster } from "./helpers";

const keyed = (key: string, value: string, ts: number) =>
  encodeRecordBatch({
    baseTimestamp: BigInt(ts),
    records: [
      {
        attributes: 0,
        offsetDelta: 0,
        timestampDelta: 0n,
        key: Buffer.from(key),
        value: Buffer.from(value),
        headers: [],
      },
    ],
  });

describe("cleanup.policy=compact,delete", () => {
  it("deletes segments past retention.ms and compacts what is left, as Kafka does for the pair", async () => {
    const { cluster, clock, settle } = testCluster({ brokers: 1 });
    cluster.controller.createTopic({
      name: "t",
      numPartitions: 1,
      configs: { "cleanup.policy": "compact,delete", "segment.ms": "1000", "retention.ms": "60000" },
    });
    settle();
    const leader = cluster.leaderFor("t", 0);
    const write = async (key: string, value: string) => {
      await leader.produce({ topic: "t", partition: 0, batch: keyed(key, value, clock.now()), acks: 1 });
      settle(1_500); // each record in a segment of its own (segment.ms)
    };
    await write("old", "o1"); // offset 0: past retention.ms by the end
    settle(70_000);
    await write("a", "a1");
    await write("a", "a2");
    await write("b", "b1");
    await write("b", "b2"); // the active segment: never cleaned
    const log = leader.replica("t", 0)!.log;
    const values = () => [...log.batches()].flatMap((b) => decodeRecords(b).map((r) => r.value?.toString()));
    expect(values()).toEqual(["o1", "a1", "a2", "b1", "b2"]);
    leader.runLogCleaner();
    // Retention took the old segment (only compacting would keep "o1", its key's only record); compaction
    // took a1 (a later a2) and kept b1 until b2's segment is cleanable.
    expect(log.logStartOffset).toBe(1n);
    expect(values()).toEqual(["a2", "b1", "b2"]);
    cluster.close();
  });
});
