import { describe, expect, it } from "vitest";
import { batch, testCluster } from "./helpers";
import { mirroredPartition } from "./mirrored-partition";

/**
 * Kafka's followers fetch all the time (a fetch waits at the leader until data arrives, and another follows
 * every `replica.fetch.wait.max.ms`), and a follower at the leader's log end is caught up however long ago
 * it fetched. Ours fetch when woken, so the leader must count an idle, caught-up follower as in sync.
 */
describe("an idle partition keeps its caught-up followers in the ISR", () => {
  for (const latencyMs of [0, 300]) {
    it(`through a long quiet and the first write after it (replication latency ${latencyMs} ms)`, async () => {
      const { cluster, settle } = testCluster({ replicaLagTimeMaxMs: 10_000 });
      cluster.setReplicationLatency(latencyMs);
      cluster.controller.createTopic({
        name: "t",
        replicaAssignment: [[0, 1, 2]],
        configs: { "min.insync.replicas": "3" },
      });
      settle();
      const first = cluster.broker(0)!.produce({ topic: "t", partition: 0, batch: batch(["a"]), acks: -1 });
      settle(2_000);
      expect((await first).baseOffset).toBe(0n);
      const epochAfterFirst = cluster.controller.image.partition("t", 0)!.partitionEpoch;
      // Every ISR change bumps the partition epoch: checked at each step, so a shrink undone at once counts.
      const isrChanges: string[] = [];
      const watch = (ms: number) => {
        for (let t = 0; t < ms; t += 50) {
          settle(50);
          const p = cluster.controller.image.partition("t", 0)!;
          if (p.isr.length < 3) isrChanges.push(`isr [${p.isr}]`);
        }
      };
      watch(45_000);
      // Written after 45 s of quiet, with min.insync.replicas=3: refused if any follower had been dropped.
      const second = cluster.broker(0)!.produce({ topic: "t", partition: 0, batch: batch(["b"]), acks: -1 });
      watch(2_000);
      expect((await second).baseOffset).toBe(1n);
      watch(30_000);
      expect(isrChanges).toEqual([]);
      expect(cluster.controller.image.partition("t", 0)!.partitionEpoch).toBe(epochAfterFirst);
    });
  }

  it("a follower that stops fetching (its broker is unreachable) still leaves the ISR after the next write", async () => {
    const { cluster, settle } = testCluster({ replicaLagTimeMaxMs: 10_000 });
    cluster.controller.createTopic({ name: "t", replicaAssignment: [[0, 1, 2]], configs: {} });
    settle();
    const first = cluster.broker(0)!.produce({ topic: "t", partition: 0, batch: batch(["a"]), acks: -1 });
    settle(1_000);
    await first;
    cluster.setReachable(2, false);
    settle(20_000);
    const second = cluster.broker(0)!.produce({ topic: "t", partition: 0, batch: batch(["b"]), acks: -1 });
    settle(20_000);
    expect((await second).baseOffset).toBe(1n);
    expect(cluster.controller.image.partition("t", 0)!.isr).toEqual([0, 1]);
  });
});

describe("an idle mirror partition keeps its caught-up followers in the ISR through a cut", () => {
  for (const latencyMs of [0, 300]) {
    // The followers' fetches were parked at the log end through the quiet: the cut answers them (it wakes
    // the followers), so they were caught up until the cut and have replica.lag.time.max.ms to fetch again.
    // Their catch-up time was left at their last fetch before the quiet: the first follower to fetch after
    // the cut had the other dropped from the ISR (it rejoined at its own fetch, a partition epoch later).
    it(`a mirror's cut after a long quiet drops no follower (replication latency ${latencyMs} ms)`, () => {
      const { cluster, settle, hex } = mirroredPartition({ replicaLagTimeMaxMs: 10_000 });
      cluster.setReplicationLatency(latencyMs);
      settle(45_000);
      expect(cluster.controller.image.partition("m", 0)!.isr).toEqual([0, 1, 2]);
      const epochBefore = cluster.controller.image.partition("m", 0)!.partitionEpoch;
      cluster.broker(0)!.truncateTo("m", 0, 1n);
      const isrChanges: string[] = [];
      for (let t = 0; t < 20_000; t += 50) {
        settle(50);
        const p = cluster.controller.image.partition("m", 0)!;
        if (p.isr.length < 3) isrChanges.push(`isr [${p.isr}]`);
      }
      expect(isrChanges).toEqual([]);
      expect(cluster.controller.image.partition("m", 0)!.partitionEpoch).toBe(epochBefore);
      expect(hex(1)).toEqual(hex(0));
      expect(hex(2)).toEqual(hex(0));
    });
  }
});
