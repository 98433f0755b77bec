import { describe, expect, it } from "vitest";
import { keyedRecord, testCluster } from "./helpers";

describe("min.compaction.lag.ms on a compacted topic", () => {
  it("the log cleaner leaves records younger than the lag readable, uncompacted", async () => {
    const { cluster, clock, settle } = testCluster({ brokers: 1 });
    cluster.controller.createTopic({
      name: "t",
      numPartitions: 1,
      configs: { "cleanup.policy": "compact", "segment.ms": "1000", "min.compaction.lag.ms": "60000" },
    });
    settle();
    const leader = cluster.leaderFor("t", 0);
    for (const [k, v] of [
      ["a", "1"],
      ["a", "2"],
      ["b", "1"],
    ] as const) {
      await leader.produce({ topic: "t", partition: 0, batch: keyedRecord(k, v, clock.now()), acks: 1 });
      clock.advance(2_000);
    }
    const broker = cluster.localBroker(0)!;
    const log = broker.replica("t", 0)!.log;
    // The config was accepted and then ignored: a@0 was compacted away 4 s after it was written.
    broker.runLogCleaner();
    expect([...log.batches()].map((b) => b.baseOffset)).toEqual([0n, 1n, 2n]);
    clock.advance(60_000);
    broker.runLogCleaner();
    expect([...log.batches()].map((b) => b.baseOffset)).toEqual([1n, 2n]);
  });
});
