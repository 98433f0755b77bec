import { describe, expect, it } from "vitest";
import type { ClusterError } from "../src/index";
import { batch, testCluster } from "./helpers";

async function outcome(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return "acknowledged";
  } catch (e) {
    return (e as ClusterError).errorName ?? String(e);
  }
}

/**
 * Kafka's `Partition.maybeIncrementLeaderHW` (KAFKA-15583, Kafka 3.7+): a leader whose ISR is smaller than
 * the effective min.insync.replicas does not advance its high watermark, so a write held by fewer replicas
 * than min.insync.replicas is never acknowledged to an acks=all producer nor shown to consumers.
 */
describe("the high watermark under min.insync.replicas", () => {
  it("an acks=all write whose followers are fenced before fetching it is not acknowledged", async () => {
    const { cluster, settle } = testCluster();
    cluster.controller.createTopic({
      name: "t",
      replicaAssignment: [[0, 1, 2]],
      configs: { "min.insync.replicas": "2" },
    });
    settle();
    const leader = cluster.broker(0)!;
    const write = outcome(leader.produce({ topic: "t", partition: 0, batch: batch(["a"]), acks: -1 }));
    // Both followers die before fetching it: the ISR falls to the leader alone.
    cluster.crashBroker(1);
    cluster.crashBroker(2);
    settle(35_000);
    expect(cluster.controller.image.partition("t", 0)!.isr).toEqual([0]);
    // Kafka: HW stays (under min ISR), the produce times out; never "acknowledged" with one copy.
    expect(["REQUEST_TIMED_OUT", "NOT_ENOUGH_REPLICAS_AFTER_APPEND"]).toContain(await write);
    expect(leader.replica("t", 0)!.log.highWatermark).toBe(0n);
  });

  it("an acks=1 write under min.insync.replicas stays invisible to consumers until the ISR is back", async () => {
    const { cluster, settle } = testCluster();
    cluster.controller.createTopic({
      name: "t",
      replicaAssignment: [[0, 1, 2]],
      configs: { "min.insync.replicas": "2" },
    });
    settle();
    cluster.crashBroker(1);
    cluster.crashBroker(2);
    settle();
    const leader = cluster.broker(0)!;
    await leader.produce({ topic: "t", partition: 0, batch: batch(["a"]), acks: 1 });
    settle(1_000);
    expect(leader.replica("t", 0)!.log.highWatermark).toBe(0n);
    cluster.startBroker(1);
    settle(5_000);
    expect(cluster.controller.image.partition("t", 0)!.isr).toEqual([0, 1]);
    expect(leader.replica("t", 0)!.log.highWatermark).toBe(1n);
  });
});

/**
 * Kafka's `ReplicaState.updateFetchStateOrThrow`: a follower whose fetch offset reaches the leader's log end
 * as of its previous fetch was caught up at that previous fetch, so a follower that keeps up with a busy
 * leader (always one round trip behind) stays in the ISR; `isFollowerInSync` readmits a follower at the high
 * watermark (and the epoch start), not only one at the leader's log end.
 */
describe("followers of a busy leader", () => {
  it("a follower one round trip behind a steady stream of writes stays in the ISR", async () => {
    const { cluster, settle } = testCluster({ replicaLagTimeMaxMs: 10_000 });
    cluster.setReplicationLatency(100);
    cluster.controller.createTopic({ name: "t", replicaAssignment: [[0, 1, 2]] });
    settle(1_000);
    const leader = cluster.broker(0)!;
    const shrinks: string[] = [];
    for (let i = 0; i < 2_000; i++) {
      await leader.produce({ topic: "t", partition: 0, batch: batch([`v${i}`]), acks: 1 });
      settle(20);
      const isr = cluster.controller.image.partition("t", 0)!.isr;
      if (isr.length < 3) shrinks.push(`${i}: [${isr}]`);
    }
    expect(shrinks.slice(0, 3)).toEqual([]);
  });

  it("a follower that returns during a steady stream of writes rejoins the ISR", async () => {
    const { cluster, settle } = testCluster({ replicaLagTimeMaxMs: 10_000 });
    cluster.setReplicationLatency(100);
    cluster.controller.createTopic({ name: "t", replicaAssignment: [[0, 1, 2]] });
    settle(1_000);
    cluster.crashBroker(2);
    settle();
    const leader = cluster.broker(0)!;
    let i = 0;
    for (; i < 100; i++) {
      await leader.produce({ topic: "t", partition: 0, batch: batch([`v${i}`]), acks: 1 });
      settle(20);
    }
    cluster.startBroker(2);
    for (; i < 1_000; i++) {
      await leader.produce({ topic: "t", partition: 0, batch: batch([`v${i}`]), acks: 1 });
      settle(20);
    }
    expect(cluster.controller.image.partition("t", 0)!.isr).toEqual([0, 1, 2]);
  });
});

/**
 * Kafka's `isReplicaIsrEligible`: the leader proposes for the ISR only a broker that is unfenced and fetches
 * with its current broker epoch. What the leader knew of a fenced broker's fetches must not get it proposed.
 */
describe("fenced followers and the ISR", () => {
  it("a follower that restarts rejoins at once, though another follower crashed at the log end just before", async () => {
    const { cluster, settle } = testCluster({ replicaLagTimeMaxMs: 30_000 });
    cluster.controller.createTopic({
      name: "t",
      replicaAssignment: [[0, 1, 2]],
      configs: { "min.insync.replicas": "2" },
    });
    settle();
    await Promise.all([
      cluster.broker(0)!.produce({ topic: "t", partition: 0, batch: batch(["a"]), acks: -1 }),
      Promise.resolve(settle(100)),
    ]);
    cluster.crashBroker(1);
    cluster.crashBroker(2);
    settle(100);
    cluster.startBroker(1);
    settle(1_000);
    // Broker 2 is down (fenced): only broker 1 may join. Proposing both is refused whole (INELIGIBLE_REPLICA).
    expect(cluster.controller.image.partition("t", 0)!.isr).toEqual([0, 1]);
    const write = cluster.broker(0)!.produce({ topic: "t", partition: 0, batch: batch(["b"]), acks: -1 });
    settle(1_000);
    expect((await write).baseOffset).toBe(1n);
  });

  it("a restarted follower does not rejoin the ISR on what it fetched before it was fenced", () => {
    const { cluster, settle } = testCluster({ replicaLagTimeMaxMs: 10_000 });
    cluster.controller.createTopic({ name: "t", replicaAssignment: [[0, 1, 2]] });
    settle();
    void cluster.broker(0)!.produce({ topic: "t", partition: 0, batch: batch(["a"]), acks: -1 });
    settle(100);
    cluster.crashBroker(2);
    settle();
    expect(cluster.controller.image.partition("t", 0)!.isr).toEqual([0, 1]);
    // Back (a new incarnation), but cut off before its first fetch reaches the leader.
    cluster.startBroker(2);
    cluster.setReachable(2, false);
    settle(6_000);
    expect(cluster.controller.image.partition("t", 0)!.isr).toEqual([0, 1]);
  });
});

describe("min.insync.replicas above the replication factor", () => {
  it("counts as the replication factor (Kafka's effectiveMinIsr): acks=all writes go through", async () => {
    const { cluster, settle } = testCluster();
    cluster.controller.createTopic({
      name: "t",
      replicaAssignment: [[0, 1]],
      configs: { "min.insync.replicas": "3" },
    });
    settle();
    const write = outcome(
      cluster.broker(0)!.produce({ topic: "t", partition: 0, batch: batch(["a"]), acks: -1 }),
    );
    settle(1_000);
    expect(await write).toBe("acknowledged");
    expect(cluster.broker(0)!.replica("t", 0)!.log.highWatermark).toBe(1n);
  });
});

/**
 * Kafka reads min.insync.replicas at each high watermark update, and its followers fetch again every
 * replica.fetch.wait.max.ms even when idle, so lowering the config lets a held high watermark move within a
 * fetch round. Ours fetch only when woken: the config change itself must move the high watermark.
 */
describe("min.insync.replicas lowered", () => {
  it("moves a high watermark held under the old value and acknowledges the acks=all write that waited", async () => {
    const { cluster, settle } = testCluster();
    cluster.controller.createTopic({
      name: "t",
      replicaAssignment: [[0, 1, 2]],
      configs: { "min.insync.replicas": "3" },
    });
    settle();
    const leader = cluster.broker(0)!;
    const write = outcome(
      leader.produce({ topic: "t", partition: 0, batch: batch(["a"]), acks: -1, timeoutMs: 30_000 }),
    );
    // Broker 2 dies before fetching it: broker 1 has it, the ISR is [0, 1], under min.insync.replicas=3.
    cluster.crashBroker(2);
    settle(1_000);
    expect(cluster.controller.image.partition("t", 0)!.isr).toEqual([0, 1]);
    expect(cluster.broker(1)!.replica("t", 0)!.log.logEndOffset).toBe(1n);
    expect(leader.replica("t", 0)!.log.highWatermark).toBe(0n);
    cluster.controller.incrementalAlterConfigs({ type: "topic", name: "t" }, [
      { op: "SET", name: "min.insync.replicas", value: "2" },
    ]);
    settle(1_000);
    expect(leader.replica("t", 0)!.log.highWatermark).toBe(1n);
    settle(1_000);
    expect(await write).toBe("acknowledged");
  });
});

/**
 * Kafka shrinks an ISR only in its `isr-expiration` task (every replica.lag.time.max.ms / 2), while a fetch
 * only expands it. Ours evaluates both at every fetch: a follower whose appends fail (a full disk) stays at
 * a high watermark held under min.insync.replicas, so it rejoined at once by the join rule (its end at the
 * high watermark) and left at once again (not caught up for replica.lag.time.max.ms), each ISR change
 * waking its fetch again: a loop of ISR changes at one instant, with no time passing.
 */
describe("a follower at a held high watermark that cannot catch up", () => {
  it("rejoins and leaves the ISR at most once per replica.lag.time.max.ms / 2, not in a loop", async () => {
    const { cluster, settle } = testCluster({ replicaLagTimeMaxMs: 10_000 });
    cluster.controller.createTopic({
      name: "t",
      replicaAssignment: [[0, 1, 2]],
      configs: { "min.insync.replicas": "2" },
    });
    settle();
    cluster.crashBroker(1);
    cluster.setDiskFull(2, true);
    settle(12_000);
    let proposals = 0;
    const alter = cluster.controller.alterPartition.bind(cluster.controller);
    cluster.controller.alterPartition = (...args: Parameters<typeof alter>) => {
      // Bounds the loop this test looks for (a refused proposal ends it).
      if (++proposals > 500) throw new Error("too many ISR proposals");
      return alter(...args);
    };
    await cluster.broker(0)!.produce({ topic: "t", partition: 0, batch: batch(["a"]), acks: 1 });
    settle(30_000);
    // Each join waits for a shrink and each shrink for the next expiration: a few changes in 30 s.
    expect(proposals).toBeLessThan(20);
    expect(cluster.broker(0)!.replica("t", 0)!.log.highWatermark).toBe(0n);
    cluster.setDiskFull(2, false);
    settle(10_000);
    expect(cluster.broker(0)!.replica("t", 0)!.log.highWatermark).toBe(1n);
  });
});
