import { describe, expect, it } from "vitest";
import type { ClusterError } from "../src/index";
import { clientCluster, expectKafkaError } from "./clients-helpers";
import { batch, testCluster } from "./helpers";

function expectNotController(fn: () => unknown): void {
  let error: unknown;
  try {
    fn();
  } catch (e) {
    error = e;
  }
  expect((error as ClusterError | undefined)?.errorName).toBe("NOT_CONTROLLER");
  expect((error as ClusterError).code).toBe(41);
  expect((error as ClusterError).retriable).toBe(true);
}

/** Resolves a promise's state without waiting for it: "pending", "ok" or the error name. */
function track(p: Promise<unknown>): { state: string } {
  const s = { state: "pending" };
  p.then(
    () => {
      s.state = "ok";
    },
    (e: ClusterError) => {
      s.state = e.errorName;
    },
  );
  return s;
}

describe("controller failover (a window with no active controller)", () => {
  it("refuses every mutating request with NOT_CONTROLLER while the image stays readable", () => {
    const { cluster, settle } = testCluster();
    const c = cluster.controller;
    c.createTopic({ name: "t", replicaAssignment: [[0, 1, 2]] });
    c.putMirror("m", {});
    settle();
    const before = c.metadataLog().length;
    c.setAvailable(false);
    expect(c.isAvailable).toBe(false);
    expectNotController(() => c.createTopic({ name: "u" }));
    expectNotController(() => c.deleteTopic("t"));
    expectNotController(() => c.createPartitions("t", 2));
    expectNotController(() =>
      c.incrementalAlterConfigs({ type: "topic", name: "t" }, [
        { name: "retention.ms", op: "SET", value: "1" },
      ]),
    );
    expectNotController(() => c.bumpLeaderEpochs([{ topic: "t", partition: 0, minLeaderEpoch: 5 }]));
    expectNotController(() => c.alterPartition("t", 0, { leader: 0, leaderEpoch: 0, isr: [0] }));
    expectNotController(() => c.putMirror("m2", {}));
    expectNotController(() => c.deleteMirror("m"));
    expectNotController(() => c.allocateProducerIds(10));
    expectNotController(() => c.electPreferredLeaders());
    expect(c.metadataLog().length).toBe(before);
    expect(c.image.partition("t", 0)?.leader).toBe(0);
    c.setAvailable(true);
    expect(c.bumpLeaderEpochs([{ topic: "t", partition: 0, minLeaderEpoch: 5 }])).toEqual([5]);
  });

  it("queues the fencing of a broker that crashed in the window; the new controller fences it", () => {
    const { cluster, settle } = testCluster({ replicaLagTimeMaxMs: 1000 });
    const c = cluster.controller;
    c.createTopic({ name: "t", replicaAssignment: [[0, 1, 2]] });
    settle();
    c.setAvailable(false);
    cluster.crashBroker(0);
    settle(5000);
    // Nobody fenced broker 0 and the leaders' ISR changes were refused: the metadata did not move.
    expect(c.image.brokers.get(0)?.fenced).toBe(false);
    expect(c.image.partition("t", 0)).toMatchObject({ leader: 0, isr: [0, 1, 2], leaderEpoch: 0 });
    expect(() => cluster.leaderFor("t", 0)).toThrow(/no running leader/);
    c.setAvailable(true);
    expect(c.image.brokers.get(0)?.fenced).toBe(true);
    expect(c.image.partition("t", 0)).toMatchObject({ leader: 1, isr: [1, 2], leaderEpoch: 1 });
    settle();
    expect(cluster.leaderFor("t", 0).brokerId).toBe(1);
  });

  it("a broker that crashed and restarted in the window is fenced, then registered again", () => {
    const { cluster, settle } = testCluster();
    const c = cluster.controller;
    c.createTopic({ name: "t", replicaAssignment: [[0, 1, 2]] });
    settle();
    c.setAvailable(false);
    cluster.crashBroker(0);
    cluster.startBroker(0);
    settle(100);
    const seen: string[] = [];
    const stop = c.subscribe((e) => seen.push(e.record.type), c.metadataLog().length);
    c.setAvailable(true);
    stop();
    expect(seen).toEqual(["FenceBroker", "PartitionChange", "UnfenceBroker"]);
    expect(c.image.brokers.get(0)?.fenced).toBe(false);
    expect(c.image.partition("t", 0)?.leader).toBe(1);
    settle(1000);
    expect([...(c.image.partition("t", 0)?.isr ?? [])].sort()).toEqual([0, 1, 2]);
  });
});

describe("controller failover seen by clients", () => {
  it("admin calls fail with the typed NOT_CONTROLLER error, and work again after the window", async () => {
    const { cluster, kafka, run } = clientCluster();
    const admin = kafka.admin();
    await run(admin.connect());
    cluster.controller.setAvailable(false);
    await expectKafkaError(
      run(admin.createTopics({ topics: [{ topic: "t", numPartitions: 1 }] })),
      "NOT_CONTROLLER",
    );
    cluster.controller.setAvailable(true);
    expect(await run(admin.createTopics({ topics: [{ topic: "t", numPartitions: 1 }] }))).toBe(true);
  });
});

describe("slow disk", () => {
  it("acknowledges acks=1 only after the leader's disk latency", async () => {
    const { cluster, settle } = testCluster();
    cluster.controller.createTopic({ name: "t", replicaAssignment: [[0, 1, 2]] });
    settle();
    cluster.setDiskLatency(0, 500);
    const ack = track(
      cluster.leaderFor("t", 0).produce({ topic: "t", partition: 0, batch: batch(["a"]), acks: 1 }),
    );
    settle(499);
    await Promise.resolve();
    expect(ack.state).toBe("pending");
    settle(1);
    await new Promise((r) => setImmediate(r));
    expect(ack.state).toBe("ok");
    // acks=0 is not delayed; the latency belongs to the disk and survives a restart.
    cluster.crashBroker(0);
    cluster.startBroker(0);
    expect(cluster.broker(0)?.diskLatency).toBe(500);
    cluster.setDiskLatency(0, 0);
    expect(cluster.broker(0)?.diskLatency).toBe(0);
  });

  it("a follower with a slow disk delays acks=-1 and the high watermark by its latency", async () => {
    const { cluster, settle } = testCluster();
    cluster.controller.createTopic({ name: "t", replicaAssignment: [[0, 1, 2]] });
    settle();
    cluster.setDiskLatency(2, 300);
    const leader = cluster.leaderFor("t", 0);
    const ack = track(leader.produce({ topic: "t", partition: 0, batch: batch(["a"]), acks: -1 }));
    settle(299);
    await Promise.resolve();
    expect(cluster.broker(2)?.replica("t", 0)?.log.logEndOffset).toBe(1n);
    expect(leader.replica("t", 0)?.log.highWatermark).toBe(0n);
    expect(ack.state).toBe("pending");
    settle(1);
    await new Promise((r) => setImmediate(r));
    expect(leader.replica("t", 0)?.log.highWatermark).toBe(1n);
    expect(ack.state).toBe("ok");
  });

  it("fails a produce whose leader stopped leading while its slow disk synced", async () => {
    const { cluster, settle } = testCluster();
    cluster.controller.createTopic({ name: "t", replicaAssignment: [[0, 1, 2]] });
    settle();
    cluster.setDiskLatency(0, 500);
    const ack = track(
      cluster.leaderFor("t", 0).produce({ topic: "t", partition: 0, batch: batch(["a"]), acks: 1 }),
    );
    cluster.crashBroker(0);
    settle(500);
    await new Promise((r) => setImmediate(r));
    expect(ack.state).toBe("NOT_LEADER_OR_FOLLOWER");
  });
});
