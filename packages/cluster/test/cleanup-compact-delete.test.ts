import { decodeRecords } from "@cluster-mirror/protocol";
import { describe, expect, it } from "vitest";
import { keyedRecord, testCluster } from "./helpers";

/**
 * A one-broker cluster with topic t (`cleanup.policy=compact,delete`, segment.ms 1 s, plus `configs`), a
 * write that puts each record in a segment of its own, and the log's records as `key=value`.
 */
function compactDeleteTopic(configs: Record<string, string>) {
  const { cluster, clock, settle } = testCluster({ brokers: 1 });
  cluster.controller.createTopic({
    name: "t",
    numPartitions: 1,
    configs: { "cleanup.policy": "compact,delete", "segment.ms": "1000", ...configs },
  });
  settle();
  const leader = cluster.leaderFor("t", 0);
  const write = async (key: string, value: string) => {
    await leader.produce({ topic: "t", partition: 0, batch: keyedRecord(key, value, clock.now()), acks: 1 });
    settle(1_500); // each record in a segment of its own (segment.ms)
  };
  const log = leader.replica("t", 0)!.log;
  const records = () =>
    [...log.batches()].flatMap((b) =>
      decodeRecords(b).map((r) => `${r.key?.toString()}=${r.value?.toString()}`),
    );
  return { cluster, settle, leader, write, log, records };
}

describe("cleanup.policy=compact,delete", () => {
  it("deletes segments past retention.ms and compacts what is left, as Kafka does for the pair", async () => {
    const { cluster, settle, leader, write, log, records } = compactDeleteTopic({ "retention.ms": "60000" });
    await write("old", "o1"); // offset 0: past retention.ms by the end
    settle(70_000);
    await write("a", "a1");
    await write("a", "a2");
    await write("b", "b1");
    await write("b", "b2"); // the active segment: never cleaned
    expect(records()).toEqual(["old=o1", "a=a1", "a=a2", "b=b1", "b=b2"]);
    leader.runLogCleaner();
    // Retention took the old segment (only compacting would keep "o1", its key's only record); compaction
    // took a1 (a later a2) and kept b1 until b2's segment is cleanable.
    expect(log.logStartOffset).toBe(1n);
    expect(records()).toEqual(["a=a2", "b=b1", "b=b2"]);
    cluster.close();
  });

  it("a segment compaction emptied does not stop retention.ms from deleting the old segments after it", async () => {
    const { cluster, settle, leader, write, log, records } = compactDeleteTopic({ "retention.ms": "60000" });
    await write("a", "a1");
    await write("a", "a2");
    await write("b", "b1");
    leader.runLogCleaner(); // compaction empties a1's segment (a2 supersedes it)
    expect(records()).toEqual(["a=a2", "b=b1"]);
    settle(70_000); // every record is now past retention.ms
    await write("c", "c1");
    leader.runLogCleaner();
    // Kafka deletes a2's and b1's segments (their newest records are 70 s old); the emptied segment before
    // them (no timestamp: Kafka would use its file's mtime) must not stop time retention for good.
    expect(records()).toEqual(["c=c1"]);
    expect(log.logStartOffset).toBe(3n);
    cluster.close();
  });

  it("compacts before retention.bytes, as Kafka's cleaner thread (clean, then deleteOldSegments): a key's only record is kept", async () => {
    const size = keyedRecord("k1", "v1", 0).length;
    const { cluster, leader, write, records } = compactDeleteTopic({ "retention.bytes": String(4 * size) });
    await write("k2", "v1"); // k2's only record
    await write("k1", "v1");
    await write("k1", "v2");
    await write("k1", "v3");
    await write("k3", "v1"); // active
    leader.runLogCleaner();
    // Compacted, the log holds 3 batches, under retention.bytes (4): Kafka deletes nothing. Retention first
    // measured 5 batches and deleted the oldest segment, k2's only record.
    expect(records()).toEqual(["k2=v1", "k1=v3", "k3=v1"]);
    cluster.close();
  });
});
