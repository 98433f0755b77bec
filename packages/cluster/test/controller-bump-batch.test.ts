import { describe, expect, it } from "vitest";
import { ClusterError, Controller, type MetadataLogEntry, SeededRandom } from "../src/index";
import { testCluster } from "./helpers";

function controller(brokers = 3): Controller {
  const c = new Controller({ random: new SeededRandom(7) });
  for (let b = 0; b < brokers; b++) c.registerBroker(b);
  return c;
}

describe("Controller.bumpLeaderEpochsBatch", () => {
  it("bumps many partitions as one contiguous record set, one PartitionChange each, results in request order", () => {
    const c = controller();
    c.createTopic({ name: "a", numPartitions: 300 });
    c.createTopic({ name: "b", numPartitions: 2 });
    c.bumpLeaderEpochs([{ topic: "a", partition: 7, minLeaderEpoch: 20 }]);
    const leadersBefore = c.image.topic("a")!.partitions.map((p) => [p.leader, p.partitionEpoch]);
    const heard: MetadataLogEntry[] = [];
    c.subscribe((e) => heard.push(e), c.metadataLog().length);
    const requests = [
      ...Array.from({ length: 300 }, (_, i) => ({ topic: "a", partition: 299 - i, minLeaderEpoch: 4 })),
      { topic: "b", partition: 1, minLeaderEpoch: 0 },
    ];
    const results = c.bumpLeaderEpochsBatch(requests);
    expect(results).toHaveLength(301);
    expect(results[0]).toEqual({ topic: "a", partition: 299, leaderEpoch: 4 });
    // Partition 7 was at 20: at least one above it, whatever the minimum.
    expect(results[299 - 7]).toEqual({ topic: "a", partition: 7, leaderEpoch: 21 });
    expect(results[300]).toEqual({ topic: "b", partition: 1, leaderEpoch: 1 });
    expect(heard).toHaveLength(301);
    expect(heard.every((e) => e.record.type === "PartitionChange")).toBe(true);
    expect(heard.map((e) => e.offset)).toEqual(Array.from({ length: 301 }, (_, i) => heard[0]!.offset + i));
    for (const r of results) expect(c.image.partition(r.topic, r.partition)?.leaderEpoch).toBe(r.leaderEpoch);
    // Nothing else changed: same leaders, partition epochs up by one.
    expect(c.image.topic("a")!.partitions.map((p) => [p.leader, p.partitionEpoch])).toEqual(
      leadersBefore.map(([leader, partitionEpoch]) => [leader, partitionEpoch! + 1]),
    );
  });

  it("one unknown or leaderless partition gets its error; the others are bumped", () => {
    const c = controller();
    c.createTopic({ name: "t", replicaAssignment: [[0], [1], [2]] });
    c.fenceBroker(1); // t-1 loses its only replica: no leader
    const results = c.bumpLeaderEpochsBatch([
      { topic: "t", partition: 0, minLeaderEpoch: 5 },
      { topic: "t", partition: 1, minLeaderEpoch: 5 },
      { topic: "t", partition: 9, minLeaderEpoch: 5 },
      { topic: "nope", partition: 0, minLeaderEpoch: 5 },
      { topic: "t", partition: 2, minLeaderEpoch: 5 },
    ]);
    expect(results.map((r) => r.leaderEpoch ?? r.error?.errorName)).toEqual([
      5,
      "LEADER_NOT_AVAILABLE",
      "UNKNOWN_TOPIC_OR_PARTITION",
      "UNKNOWN_TOPIC_OR_PARTITION",
      5,
    ]);
    expect(results[1]!.error).toBeInstanceOf(ClusterError);
    expect(results[1]!.error?.retriable).toBe(true);
    expect(c.image.partition("t", 0)?.leaderEpoch).toBe(5);
    expect(c.image.partition("t", 2)?.leaderEpoch).toBe(5);
  });

  it("a partition named twice is bumped once, to the largest minimum, and both requests get that epoch", () => {
    const c = controller();
    c.createTopic({ name: "t", numPartitions: 1 });
    const before = c.metadataLog().length;
    const results = c.bumpLeaderEpochsBatch([
      { topic: "t", partition: 0, minLeaderEpoch: 9 },
      { topic: "t", partition: 0, minLeaderEpoch: 3 },
    ]);
    expect(results.map((r) => r.leaderEpoch)).toEqual([9, 9]);
    expect(c.metadataLog().length - before).toBe(1);
    expect(c.image.partition("t", 0)?.leaderEpoch).toBe(9);
  });

  it("the all-or-nothing bumpLeaderEpochs never hands out an epoch the partition does not end at", () => {
    const c = controller();
    c.createTopic({ name: "t", numPartitions: 1 });
    const epochs = c.bumpLeaderEpochs([
      { topic: "t", partition: 0, minLeaderEpoch: 9 },
      { topic: "t", partition: 0, minLeaderEpoch: 3 },
    ]);
    expect(epochs).toEqual([9, 9]);
    expect(c.image.partition("t", 0)?.leaderEpoch).toBe(9);
  });

  it("during a controller failover every result is NOT_CONTROLLER (retriable) and nothing is written", () => {
    const c = controller();
    c.createTopic({ name: "t", numPartitions: 2 });
    const before = c.metadataLog().length;
    c.setAvailable(false);
    const results = c.bumpLeaderEpochsBatch([
      { topic: "t", partition: 0, minLeaderEpoch: 2 },
      { topic: "t", partition: 1, minLeaderEpoch: 2 },
    ]);
    expect(results.map((r) => [r.error?.errorName, r.error?.retriable])).toEqual([
      ["NOT_CONTROLLER", true],
      ["NOT_CONTROLLER", true],
    ]);
    expect(c.metadataLog().length).toBe(before);
    c.setAvailable(true);
    expect(c.bumpLeaderEpochsBatch([{ topic: "t", partition: 0, minLeaderEpoch: 2 }])[0]?.leaderEpoch).toBe(
      2,
    );
  });

  it("every broker's leader replica takes the new epochs, so the old epoch is fenced", () => {
    const { cluster, settle } = testCluster();
    cluster.controller.createTopic({ name: "m", numPartitions: 6, replicationFactor: 3 });
    settle();
    const results = cluster.controller.bumpLeaderEpochsBatch(
      Array.from({ length: 6 }, (_, partition) => ({
        topic: "m",
        partition,
        minLeaderEpoch: 40 + partition,
      })),
    );
    settle();
    for (const r of results) {
      const leader = cluster.controller.image.partition("m", r.partition)!.leader;
      expect(cluster.broker(leader)?.replica("m", r.partition)?.leaderEpoch).toBe(40 + r.partition);
      expect(r.leaderEpoch).toBe(40 + r.partition);
    }
    cluster.close();
  });
});

describe("Broker.onLeadershipChange", () => {
  it("marks a leader epoch bump of a partition the broker keeps leading as epochBump; a new election is not", () => {
    const { cluster, settle } = testCluster();
    cluster.controller.createTopic({ name: "t", replicaAssignment: [[0, 1]] });
    settle();
    const heard: { broker: number; elected: boolean; epochBump: boolean; leaderEpoch: number }[] = [];
    for (const b of [0, 1]) {
      cluster.broker(b)?.onLeadershipChange((c) => {
        if (c.topic === "t")
          heard.push({ broker: b, elected: c.elected, epochBump: c.epochBump, leaderEpoch: c.leaderEpoch });
      });
    }
    cluster.controller.bumpLeaderEpochs([{ topic: "t", partition: 0, minLeaderEpoch: 5 }]);
    settle();
    expect(heard).toEqual([{ broker: 0, elected: true, epochBump: true, leaderEpoch: 5 }]);
    heard.length = 0;
    // Broker 0 stops: broker 1 is elected (no bump), broker 0 hears nothing more (it is gone).
    cluster.stopBroker(0);
    settle();
    expect(heard).toEqual([{ broker: 1, elected: true, epochBump: false, leaderEpoch: 6 }]);
  });
});
