import { describe, expect, it } from "vitest";
import type { ClusterError } from "../src/index";
import { batch, testCluster } from "./helpers";

describe("ListOffsets on a new leader that has not learnt its high watermark (KIP-207)", () => {
  it("answers OFFSET_NOT_AVAILABLE (retriable) until its followers fetched, then the committed end", async () => {
    const { cluster, scheduler, settle } = testCluster();
    cluster.controller.createTopic({ name: "t", replicaAssignment: [[0, 1, 2]] });
    settle();
    const leader = cluster.leaderFor("t", 0);
    const acked = leader.produce({ topic: "t", partition: 0, batch: batch(["a", "b"]), acks: -1 });
    const hw = (id: number) => cluster.broker(id)?.replica("t", 0)?.log.highWatermark;
    // One step at a time, until the leader commits: its followers have the records, not yet the new HW.
    for (let i = 0; i < 1000 && hw(leader.brokerId) !== 2n; i++) scheduler.run(0, 1);
    await acked;
    // The follower whose fetch completed the commit learnt the HW in its answer; the other has not.
    const followers = [0, 1, 2].filter((id) => id !== leader.brokerId);
    const behind = followers.filter((id) => hw(id) === 0n);
    expect(behind).toHaveLength(1);
    cluster.crashBroker(leader.brokerId);
    const next = cluster.leaderFor("t", 0);
    // The first live ISR member in replica order leads; this seed's run makes it the one behind.
    expect(next.brokerId).toBe(behind[0]);
    expect(next.replica("t", 0)?.log.logEndOffset).toBe(2n);
    let error: ClusterError | undefined;
    try {
      next.listOffsets("t", 0, -1n);
    } catch (e) {
      error = e as ClusterError;
    }
    // Its own HW (0) would say nothing is committed, though both acknowledged records are in its log.
    expect(error?.errorName).toBe("OFFSET_NOT_AVAILABLE");
    expect(error?.retriable).toBe(true);
    expect(next.listOffsets("t", 0, -2n).offset).toBe(0n);
    // Once the other in-sync follower fetched from it, the HW reaches the epoch start and is answered.
    settle();
    expect(next.listOffsets("t", 0, -1n).offset).toBe(2n);
  });

  it("stays unavailable for as long as the slow network keeps the new leader's followers away", async () => {
    const { cluster, clock, settle } = testCluster();
    cluster.controller.createTopic({ name: "t", replicaAssignment: [[0, 1, 2]] });
    settle();
    cluster.setReplicationLatency(400);
    const leader = cluster.leaderFor("t", 0);
    const start = clock.now();
    const acked = leader.produce({ topic: "t", partition: 0, batch: batch(["a"]), acks: -1 });
    let done = false;
    void acked.then(() => {
      done = true;
    });
    // One fetch brings the record, the next reports it: acks=-1 waits two latencies.
    while (!done) {
      settle(10);
      await Promise.resolve();
    }
    expect(clock.now() - start).toBeGreaterThanOrEqual(800);
    const hw = (id: number) => cluster.broker(id)?.replica("t", 0)?.log.highWatermark;
    const stale = [0, 1, 2].filter((id) => id !== leader.brokerId && hw(id) === 0n);
    expect(stale).toHaveLength(1);
    cluster.crashBroker(leader.brokerId);
    const next = cluster.leaderFor("t", 0);
    // The first live ISR member in replica order leads; with this assignment it is the one behind.
    expect(next.brokerId).toBe(stale[0]);
    const answer = () => {
      try {
        return next.listOffsets("t", 0, -1n).offset;
      } catch (e) {
        return (e as ClusterError).errorName;
      }
    };
    settle(300);
    expect(answer()).toBe("OFFSET_NOT_AVAILABLE");
    settle(1_000);
    expect(answer()).toBe(1n);
  });

  it("refuses a replication latency that is not a non-negative number", () => {
    const { cluster } = testCluster();
    for (const ms of [-1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => cluster.setReplicationLatency(ms)).toThrow(/replication latency must be a non-negative/);
    }
    expect(cluster.replicationLatency()).toBe(0);
  });
});
