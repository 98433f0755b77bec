import { encodeRecordBatch } from "@cluster-mirror/protocol";
import { describe, expect, it } from "vitest";
import type { ClusterError } from "../src/index";
import { batch, batchesOf, sourceBatch, split, testCluster } from "./helpers";

async function expectError(p: Promise<unknown> | (() => unknown), errorName: string): Promise<ClusterError> {
  try {
    await (typeof p === "function" ? p() : p);
  } catch (e) {
    expect(e).toBeInstanceOf(Error);
    expect((e as ClusterError).errorName).toBe(errorName);
    return e as ClusterError;
  }
  throw new Error(`expected ${errorName}`);
}

describe("produce and fetch with replication", () => {
  it("acknowledges acks=all once every ISR member has the batch, and followers hold the same bytes", async () => {
    const { cluster, settle } = testCluster();
    cluster.controller.createTopic({ name: "t", replicaAssignment: [[0, 1, 2]] });
    settle();
    const leader = cluster.leaderFor("t", 0);
    const acked = leader.produce({ topic: "t", partition: 0, batch: batch(["a", "b"]), acks: -1 });
    let done = false;
    void acked.then(() => {
      done = true;
    });
    await Promise.resolve();
    expect(done).toBe(false);
    expect(leader.replica("t", 0)?.log.highWatermark).toBe(0n);
    settle();
    const res = await acked;
    expect(res.baseOffset).toBe(0n);
    expect(res.lastOffset).toBe(1n);
    const fetched = leader.fetch({
      topic: "t",
      partition: 0,
      fetchOffset: 0n,
      maxBytes: 1 << 20,
      isolationLevel: "read_uncommitted",
    });
    expect(fetched.highWatermark).toBe(2n);
    const [b] = split(fetched.records);
    expect(b?.partitionLeaderEpoch).toBe(0);
    for (const id of [1, 2]) {
      const copies = batchesOf(cluster, id, "t");
      expect(copies.map((c) => c.buffer.equals(b!.buffer))).toEqual([true]);
      expect(cluster.broker(id)?.replica("t", 0)?.log.highWatermark).toBe(2n);
    }
  });

  it("refuses produce on a follower, unknown partitions, bad acks and fewer ISR than min.insync.replicas", async () => {
    const { cluster, settle } = testCluster();
    cluster.controller.createTopic({
      name: "t",
      replicaAssignment: [[0, 1, 2]],
      configs: { "min.insync.replicas": "2" },
    });
    settle();
    await expectError(
      cluster.broker(1)!.produce({ topic: "t", partition: 0, batch: batch(["x"]), acks: 1 }),
      "NOT_LEADER_OR_FOLLOWER",
    );
    await expectError(
      cluster.broker(0)!.produce({ topic: "t", partition: 7, batch: batch(["x"]), acks: 1 }),
      "UNKNOWN_TOPIC_OR_PARTITION",
    );
    await expectError(
      cluster.broker(0)!.produce({ topic: "t", partition: 0, batch: batch(["x"]), acks: 2 }),
      "INVALID_REQUIRED_ACKS",
    );
    cluster.crashBroker(1);
    cluster.crashBroker(2);
    settle();
    await expectError(
      cluster.broker(0)!.produce({ topic: "t", partition: 0, batch: batch(["x"]), acks: -1 }),
      "NOT_ENOUGH_REPLICAS",
    );
    // acks=1 still works with one replica.
    expect(
      (await cluster.broker(0)!.produce({ topic: "t", partition: 0, batch: batch(["x"]), acks: 1 }))
        .baseOffset,
    ).toBe(0n);
  });

  it("elects a new leader with a higher epoch when the leader crashes; nothing acknowledged is lost", async () => {
    const { cluster, settle } = testCluster();
    cluster.controller.createTopic({ name: "t", replicaAssignment: [[0, 1, 2]] });
    settle();
    const p = cluster.broker(0)!.produce({ topic: "t", partition: 0, batch: batch(["a"]), acks: -1 });
    settle();
    await p;
    cluster.crashBroker(0);
    settle();
    const leader = cluster.leaderFor("t", 0);
    expect(leader.brokerId).toBe(1);
    expect(leader.replica("t", 0)?.leaderEpoch).toBe(1);
    const q = leader.produce({ topic: "t", partition: 0, batch: batch(["b"]), acks: -1 });
    settle();
    expect((await q).baseOffset).toBe(1n);
    const epochs = batchesOf(cluster, 2, "t").map((b) => [b.baseOffset, b.partitionLeaderEpoch]);
    expect(epochs).toEqual([
      [0n, 0],
      [1n, 1],
    ]);
  });

  it("truncates a returning replica's unacknowledged tail to the new leader's log (diverging epoch)", async () => {
    const { cluster, settle } = testCluster();
    cluster.controller.createTopic({ name: "t", replicaAssignment: [[0, 1, 2]] });
    settle();
    const first = cluster.broker(0)!.produce({ topic: "t", partition: 0, batch: batch(["acked"]), acks: -1 });
    settle();
    await first;
    // The leader appends a batch no follower fetches before it crashes.
    void cluster
      .broker(0)!
      .produce({ topic: "t", partition: 0, batch: batch(["lost-1", "lost-2"]), acks: -1 })
      .catch(() => {});
    expect(batchesOf(cluster, 0, "t")).toHaveLength(2);
    cluster.crashBroker(0);
    settle();
    const q = cluster
      .leaderFor("t", 0)
      .produce({ topic: "t", partition: 0, batch: batch(["new"]), acks: -1 });
    settle();
    await q;
    cluster.startBroker(0);
    settle();
    const onLeader = batchesOf(cluster, 1, "t").map((b) => b.buffer.toString("hex"));
    const onReturned = batchesOf(cluster, 0, "t").map((b) => b.buffer.toString("hex"));
    expect(onReturned).toEqual(onLeader);
    expect(onLeader).toHaveLength(2);
    // Back in sync, broker 0 rejoins the ISR.
    expect(cluster.controller.image.partition("t", 0)?.isr).toEqual([0, 1, 2]);
  });

  it("shrinks the ISR when a follower stops fetching for replica.lag.time.max.ms", async () => {
    const { cluster, settle } = testCluster({ replicaLagTimeMaxMs: 10_000 });
    cluster.controller.createTopic({ name: "t", replicaAssignment: [[0, 1, 2]] });
    settle();
    // Broker 2 is cut off but not fenced: its fetches stop reaching the leader.
    cluster.setReachable(2, false);
    const p = cluster.broker(0)!.produce({ topic: "t", partition: 0, batch: batch(["a"]), acks: 1 });
    settle();
    await p;
    expect(cluster.controller.image.partition("t", 0)?.isr).toEqual([0, 1, 2]);
    settle(20_000);
    expect(cluster.controller.image.partition("t", 0)?.isr).toEqual([0, 1]);
    cluster.setReachable(2, true);
    settle(1000);
    expect(cluster.controller.image.partition("t", 0)?.isr).toEqual([0, 1, 2]);
  });

  it("keeps a mirror topic read-only until the mirror clears the flag", async () => {
    const { cluster, settle } = testCluster();
    cluster.controller.createTopic({
      name: "m",
      replicaAssignment: [[0, 1]],
      configs: { "mirror.name": "my-mirror" },
    });
    settle();
    const err = await expectError(
      cluster.broker(0)!.produce({ topic: "m", partition: 0, batch: batch(["x"]), acks: 1 }),
      "READ_ONLY_TOPIC",
    );
    expect(err.message).toContain("my-mirror");
    // Markers and mirrored batches still go in.
    cluster.broker(0)!.appendAsIs("m", 0, batch(["mirrored"]));
    cluster.broker(0)!.setReadOnly("m", 0, false);
    const r = await cluster
      .broker(0)!
      .produce({ topic: "m", partition: 0, batch: batch(["local"]), acks: 1 });
    expect(r.baseOffset).toBe(1n);
  });
});

describe("leader truncation", () => {
  it("followers truncate to the leader's end when the leader's log was cut below theirs", async () => {
    const { cluster, settle } = testCluster();
    cluster.controller.createTopic({ name: "t", replicaAssignment: [[0, 1, 2]] });
    settle();
    for (const v of ["a", "b", "c"]) {
      const p = cluster.broker(0)!.produce({ topic: "t", partition: 0, batch: batch([v]), acks: -1 });
      settle();
      await p;
    }
    // A mirror aligning with its source truncates the leader's log; the followers must follow.
    cluster.broker(0)!.truncateTo("t", 0, 1n);
    expect(cluster.broker(0)!.followersTruncated("t", 0)).toBe(false);
    const other = encodeRecordBatch({
      baseOffset: 1n,
      partitionLeaderEpoch: 1,
      records: [
        {
          attributes: 0,
          offsetDelta: 0,
          timestampDelta: 0n,
          key: null,
          value: Buffer.from("other"),
          headers: [],
        },
      ],
    });
    settle();
    expect(cluster.broker(0)!.followersTruncated("t", 0)).toBe(true);
    cluster.broker(0)!.appendAsIs("t", 0, other);
    settle();
    const leaderBytes = batchesOf(cluster, 0, "t").map((b) => b.buffer.toString("hex"));
    expect(leaderBytes).toHaveLength(2);
    for (const id of [1, 2]) {
      expect(batchesOf(cluster, id, "t").map((b) => b.buffer.toString("hex"))).toEqual(leaderBytes);
    }
  });
});

describe("leader epochs on election (Kafka's Partition.makeLeader, KIP-320)", () => {
  it("a new leader answers for its own epoch before writing in it, also after a restart", async () => {
    const { cluster, settle } = testCluster();
    cluster.controller.createTopic({ name: "t", replicaAssignment: [[0, 1, 2]] });
    settle();
    const p = cluster.broker(0)!.produce({ topic: "t", partition: 0, batch: batch(["a", "b"]), acks: -1 });
    settle();
    await p;
    cluster.crashBroker(0);
    settle();
    const leader = cluster.leaderFor("t", 0);
    const epoch = leader.replica("t", 0)!.leaderEpoch;
    expect(epoch).toBe(1);
    // Its epoch starts at its log end: epoch 0 ends there, and the current epoch is answered with the end.
    expect(leader.offsetsForLeaderEpoch("t", 0, 0)).toEqual({ leaderEpoch: 0, endOffset: 2n });
    expect(leader.offsetsForLeaderEpoch("t", 0, epoch)).toEqual({ leaderEpoch: epoch, endOffset: 2n });
    expect(leader.replica("t", 0)!.log.epochEntries().at(-1)).toEqual({ epoch, startOffset: 2n });
    // A restarted leader (a new replica object, the same epoch or a later one) knows it as well.
    cluster.stopBroker(2);
    settle();
    cluster.stopBroker(1); // the last ISR member: the partition goes offline until it returns
    settle();
    cluster.startBroker(1);
    settle();
    const again = cluster.leaderFor("t", 0);
    const current = again.replica("t", 0)!.leaderEpoch;
    expect(again.offsetsForLeaderEpoch("t", 0, current)).toEqual({ leaderEpoch: current, endOffset: 2n });
  });

  it("a read-only mirror partition keeps only its source's epochs; its followers follow its truncations", async () => {
    const { cluster, settle } = testCluster();
    cluster.controller.createTopic({
      name: "m",
      replicaAssignment: [[0, 1, 2]],
      configs: { "mirror.name": "dr" },
    });
    settle();
    cluster.controller.bumpLeaderEpochs([{ topic: "m", partition: 0, minLeaderEpoch: 10 }]);
    settle();
    const leader = cluster.broker(0)!;
    leader.appendAsIs("m", 0, [sourceBatch(0n, 0, "a"), sourceBatch(1n, 0, "b"), sourceBatch(2n, 3, "c")]);
    settle();
    const log = leader.replica("m", 0)!.log;
    // The mirror's lastFetchedEpoch and last mirror epoch come from here: the destination's epoch 10 is not in it.
    expect(log.epochEntries()).toEqual([
      { epoch: 0, startOffset: 0n },
      { epoch: 3, startOffset: 2n },
    ]);
    expect(log.highWatermark).toBe(3n);
    // Aligning with its source, the leader drops epoch 3 below the followers' high watermark and mirrors a
    // different batch there: asked for epoch 3, above its latest, it answers with its log end.
    leader.truncateTo("m", 0, 2n);
    leader.appendAsIs("m", 0, sourceBatch(2n, 2, "c'"));
    settle();
    const onLeader = batchesOf(cluster, 0, "m").map((b) => b.buffer.toString("hex"));
    for (const id of [1, 2]) {
      expect(batchesOf(cluster, id, "m").map((b) => b.buffer.toString("hex"))).toEqual(onLeader);
    }
    expect(leader.followersTruncated("m", 0)).toBe(true);
  });
});
