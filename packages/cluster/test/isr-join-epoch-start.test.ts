import { describe, expect, it } from "vitest";
import { sourceBatch, testCluster } from "./helpers";

/**
 * Kafka's `isFollowerInSync`: a follower joins the ISR only at or past the leader's epoch start offset, the
 * leader's log end when it was elected (`leaderEpochStartOffsetOpt`, set in `makeLeader`): that covers the
 * records the previous leader committed above the new leader's (lagging) high watermark. A read-only mirror
 * partition's leader epoch cache holds the source's epochs, not its own: an entry of the source's whose epoch
 * number is the destination's leader epoch is not where this leader's epoch starts.
 */
describe("ISR join at the leader's epoch start on a mirror partition", () => {
  it("a follower below the records the previous leader committed does not join, though a source epoch matches", () => {
    const { cluster, settle } = testCluster({ replicaLagTimeMaxMs: 10_000 });
    cluster.setReplicationLatency(100);
    cluster.controller.createTopic({
      name: "m",
      replicaAssignment: [[0, 1, 2]],
      configs: { "mirror.name": "dr", "min.insync.replicas": "2" },
    });
    settle(1_000);
    // The source's batches were written at the source's leader epoch 1.
    const src = (o: bigint) => sourceBatch(o, 1, `v${o}`);
    cluster.broker(0)!.appendAsIs("m", 0, [src(0n), src(1n), src(2n)]);
    settle(2_000);
    expect(cluster.broker(2)!.replica("m", 0)!.log.logEndOffset).toBe(3n);
    // Broker 2 is cut off; offsets 3..9 are committed by brokers 0 and 1 once it leaves the ISR.
    cluster.setReachable(2, false);
    for (let o = 3n; o < 10n; o++) cluster.broker(0)!.appendAsIs("m", 0, src(o));
    settle(2_000);
    expect(cluster.broker(1)!.replica("m", 0)!.log.logEndOffset).toBe(10n);
    for (let i = 0; i < 3_000 && cluster.controller.image.partition("m", 0)!.isr.includes(2); i++) settle(10);
    expect(cluster.controller.image.partition("m", 0)!.isr).toEqual([0, 1]);
    expect(cluster.broker(0)!.replica("m", 0)!.log.highWatermark).toBe(10n);
    // Leader 0 dies before broker 1 learns that high watermark (its next fetch is a round trip away);
    // broker 1 leads at the destination's epoch 1 (the source's epoch of every batch).
    cluster.crashBroker(0);
    settle(0);
    const p1 = cluster.broker(1)!.replica("m", 0)!;
    expect(p1.isLeader).toBe(true);
    expect(p1.leaderEpoch).toBe(1);
    // Broker 2 comes back with a full disk: it fetches from offset 3 but cannot store what it gets.
    cluster.setDiskFull(2, true);
    cluster.setReachable(2, true);
    let joinedShort: string | undefined;
    for (let i = 0; i < 200 && joinedShort === undefined; i++) {
      settle(10);
      const isr = cluster.controller.image.partition("m", 0)!.isr;
      const leo2 = cluster.broker(2)!.replica("m", 0)!.log.logEndOffset;
      if (isr.includes(2) && leo2 < 10n) joinedShort = `ISR [${isr}] with broker 2 at ${leo2}`;
    }
    // Leader 1 dies: only a replica holding offsets 3..9 (committed: leader 0's high watermark was 10) may lead.
    cluster.crashBroker(1);
    settle(0);
    const p2 = cluster.broker(2)!.replica("m", 0)!;
    expect({ joinedShort, leads: p2.isLeader, logEnd: p2.log.logEndOffset }).toEqual({
      joinedShort: undefined,
      leads: false,
      logEnd: 3n,
    });
  });
});
