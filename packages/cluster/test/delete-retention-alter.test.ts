import { describe, expect, it } from "vitest";
import { keyedRecord, testCluster } from "./helpers";

describe("delete.retention.ms altered to its largest value on a compacted topic", () => {
  it("the log cleaner keeps running (and keeps the tombstone)", async () => {
    const { cluster, clock, settle } = testCluster({ brokers: 1 });
    cluster.controller.createTopic({
      name: "t",
      numPartitions: 1,
      configs: { "cleanup.policy": "compact", "segment.ms": "1000" },
    });
    settle();
    // A valid value (a long, at least 0); the change now reaches the open log.
    cluster.controller.incrementalAlterConfigs({ type: "topic", name: "t" }, [
      { op: "SET", name: "delete.retention.ms", value: "9223372036854775807" },
    ]);
    settle();
    const leader = cluster.leaderFor("t", 0);
    for (const [k, v] of [
      ["a", "1"],
      ["a", null],
      ["b", "1"],
    ] as const) {
      await leader.produce({ topic: "t", partition: 0, batch: keyedRecord(k, v, clock.now()), acks: 1 });
      clock.advance(2_000);
    }
    // The cleaner threw a RangeError (a delete horizon past int64) out of runLogCleaner: the broker's
    // scheduled cleaner loop is not rescheduled after a throw, so no partition of the broker is cleaned again.
    expect(() => cluster.localBroker(0)!.runLogCleaner()).not.toThrow();
    const log = cluster.localBroker(0)!.replica("t", 0)!.log;
    expect([...log.batches()].map((b) => b.baseOffset)).toEqual([1n, 2n]);
  });
});
