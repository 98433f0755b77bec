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

describe("cleanup.policy=compact,delete: a segment compaction emptied", () => {
  it("does not stop retention.ms from deleting the old segments after it", async () => {
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
    await write("a", "a1");
    await write("a", "a2");
    await write("b", "b1");
    const log = leader.replica("t", 0)!.log;
    const values = () => [...log.batches()].flatMap((b) => decodeRecords(b).map((r) => r.value?.toString()));
    leader.runLogCleaner(); // compaction empties a1's segment (a2 supersedes it)
    expect(values()).toEqual(["a2", "b1"]);
    settle(70_000); // every record is now past retention.ms
    await write("c", "c1");
    leader.runLogCleaner();
    // Kafka deletes a2's and b1's segments (their newest records are 70 s old); the emptied segment before
    // them (no timestamp: Kafka would use its file's mtime) must not stop time retention for good.
    expect(values()).toEqual(["c1"]);
    expect(log.logStartOffset).toBe(3n);
    cluster.close();
  });

  it("compacts before retention.bytes, as Kafka's cleaner thread (clean, then deleteOldSegments): a key's only record is kept", async () => {
    const { cluster, settle, clock } = testCluster({ brokers: 1 });
    const size = keyed("k1", "v1", 0).length;
    cluster.controller.createTopic({
      name: "t",
      numPartitions: 1,
      configs: {
        "cleanup.policy": "compact,delete",
        "segment.ms": "1000",
        "retention.bytes": String(4 * size),
      },
    });
    settle();
    const leader = cluster.leaderFor("t", 0);
    const write = async (key: string, value: string) => {
      await leader.produce({ topic: "t", partition: 0, batch: keyed(key, value, clock.now()), acks: 1 });
      settle(1_500);
    };
    await write("k2", "v1"); // k2's only record
    await write("k1", "v1");
    await write("k1", "v2");
    await write("k1", "v3");
    await write("k3", "v1"); // active
    const log = leader.replica("t", 0)!.log;
    const values = () =>
      [...log.batches()].flatMap((b) =>
        decodeRecords(b).map((r) => `${r.key?.toString()}=${r.value?.toString()}`),
      );
    leader.runLogCleaner();
    // Compacted, the log holds 3 batches, under retention.bytes (4): Kafka deletes nothing. Retention first
    // measured 5 batches and deleted the oldest segment, k2's only record.
    expect(values()).toEqual(["k2=v1", "k1=v3", "k3=v1"]);
    cluster.close();
  });
});
