import { describe, expect, it } from "vitest";
import {
  ClusterError,
  GroupCoordinator,
  KafkaCluster,
  ManualClock,
  ManualScheduler,
  offsetKey,
  SeededRandom,
} from "../src/index";

function setup() {
  const clock = new ManualClock(0);
  const persisted = new Map<string, number>();
  const gc = new GroupCoordinator({
    clock,
    partitionCount: (t) => (t === "orders" ? 3 : 1),
    onOffsetsChanged: (g, o) => persisted.set(g, o.size),
  });
  return { clock, gc, persisted };
}

function errorName(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (e instanceof ClusterError) return e.errorName;
    throw e;
  }
  return "none";
}

describe("GroupCoordinator", () => {
  it("assigns every partition to exactly one member and rebalances on join and leave", () => {
    const { gc } = setup();
    const a = gc.joinGroup({ groupId: "g", clientId: "a", topics: ["orders"] });
    expect(a.assignment.map((tp) => tp.partition)).toEqual([0, 1, 2]);
    const b = gc.joinGroup({ groupId: "g", clientId: "b", topics: ["orders"] });
    const hbA = gc.heartbeat({ groupId: "g", memberId: a.memberId });
    expect(hbA.generationId).toBe(b.generationId);
    const all = [...hbA.assignment, ...b.assignment].map((tp) => tp.partition).sort();
    expect(all).toEqual([0, 1, 2]);
    gc.leaveGroup({ groupId: "g", memberId: b.memberId });
    expect(gc.heartbeat({ groupId: "g", memberId: a.memberId }).assignment).toHaveLength(3);
    expect(gc.describeGroup("g").state).toBe("Stable");
  });

  it("commits offsets with leader epochs from current members only", () => {
    const { gc, persisted } = setup();
    const m = gc.joinGroup({ groupId: "g", topics: ["orders"] });
    gc.commitOffsets({
      groupId: "g",
      memberId: m.memberId,
      generationId: m.generationId,
      offsets: [{ topic: "orders", partition: 1, offset: 42n, leaderEpoch: 3 }],
    });
    expect(gc.fetchOffsets("g").get(offsetKey({ topic: "orders", partition: 1 }))).toMatchObject({
      offset: 42n,
      leaderEpoch: 3,
    });
    expect(persisted.get("g")).toBe(1);
    expect(
      errorName(() =>
        gc.commitOffsets({
          groupId: "g",
          memberId: m.memberId,
          generationId: m.generationId - 1,
          offsets: [{ topic: "orders", partition: 1, offset: 1n }],
        }),
      ),
    ).toBe("ILLEGAL_GENERATION");
    expect(errorName(() => gc.alterOffsets("g", [{ topic: "orders", partition: 0, offset: 7n }]))).toBe(
      "NON_EMPTY_GROUP",
    );
    expect(gc.fetchOffsets("g").get("orders:0")).toBeUndefined();
  });

  it("expires silent members so an admin may then alter the Empty group's offsets", () => {
    const { gc, clock } = setup();
    const m = gc.joinGroup({ groupId: "g", topics: ["orders"], sessionTimeoutMs: 10_000 });
    clock.advance(9_999);
    expect(gc.expireMembers()).toEqual([]);
    clock.advance(1);
    expect(gc.expireMembers()).toEqual([m.memberId]);
    expect(gc.describeGroup("g").state).toBe("Empty");
    expect(errorName(() => gc.heartbeat({ groupId: "g", memberId: m.memberId }))).toBe("UNKNOWN_MEMBER_ID");
    gc.alterOffsets("g", [{ topic: "orders", partition: 0, offset: 7n }]);
    expect(gc.fetchOffsets("g", [{ topic: "orders", partition: 0 }]).get("orders:0")?.offset).toBe(7n);
  });

  it("lists, deletes and restores groups", () => {
    const { gc } = setup();
    gc.alterOffsets("idle", [{ topic: "t", partition: 0, offset: 1n }]);
    gc.joinGroup({ groupId: "busy", topics: ["t"] });
    expect(gc.listGroups()).toEqual([
      { groupId: "idle", state: "Empty" },
      { groupId: "busy", state: "Stable" },
    ]);
    expect(errorName(() => gc.deleteGroup("busy"))).toBe("NON_EMPTY_GROUP");
    expect(errorName(() => gc.deleteOffsets("busy", [{ topic: "t", partition: 0 }]))).toBe(
      "GROUP_SUBSCRIBED_TO_TOPIC",
    );
    const saved = gc.fetchOffsets("idle");
    gc.deleteGroup("idle");
    expect(gc.describeGroup("idle").state).toBe("Dead");
    gc.loadOffsets("idle", saved);
    expect(gc.fetchOffsets("idle").get("t:0")?.offset).toBe(1n);
    expect(errorName(() => gc.alterOffsets("idle", [{ topic: "t", partition: 0, offset: -1n }]))).toBe(
      "INVALID_REQUEST",
    );
  });

  it("forgets a deleted topic's committed offsets, so a topic created again under the name starts with none", () => {
    const clock = new ManualClock(0);
    const cluster = KafkaCluster.start({
      brokers: 1,
      clock,
      scheduler: new ManualScheduler(clock),
      random: new SeededRandom(1),
    });
    const create = () =>
      cluster.controller.createTopic({ name: "orders", numPartitions: 2, replicationFactor: 1 });
    create();
    cluster.controller.createTopic({ name: "other", numPartitions: 1, replicationFactor: 1 });
    cluster.groups.commitOffsets({
      groupId: "g",
      offsets: [
        { topic: "orders", partition: 0, offset: 7n },
        { topic: "orders", partition: 1, offset: 3n },
        { topic: "other", partition: 0, offset: 5n },
      ],
    });
    cluster.controller.deleteTopic("orders");
    create();
    expect([...cluster.groups.fetchOffsets("g").keys()]).toEqual(["other:0"]);
  });
});

describe("GroupCoordinator.clampOffsets (a log cut below committed offsets)", () => {
  it("moves every group's offset past the cut back to it, members or not, and persists the change", () => {
    const { gc, persisted } = setup();
    gc.commitOffsets({
      groupId: "past",
      offsets: [
        { topic: "orders", partition: 0, offset: 18n, leaderEpoch: 4, metadata: "m" },
        { topic: "orders", partition: 1, offset: 18n },
      ],
    });
    gc.commitOffsets({ groupId: "below", offsets: [{ topic: "orders", partition: 0, offset: 7n }] });
    gc.commitOffsets({ groupId: "busy", offsets: [{ topic: "orders", partition: 0, offset: 12n }] });
    gc.joinGroup({ groupId: "busy", topics: ["orders"] });
    persisted.clear();
    expect(gc.clampOffsets({ topic: "orders", partition: 0 }, 10n, 2).sort()).toEqual(["busy", "past"]);
    expect(gc.fetchOffsets("past").get("orders:0")).toMatchObject({
      offset: 10n,
      leaderEpoch: 2,
      metadata: "m",
    });
    expect(gc.fetchOffsets("past").get("orders:1")?.offset).toBe(18n);
    expect(gc.fetchOffsets("below").get("orders:0")?.offset).toBe(7n);
    expect(gc.fetchOffsets("busy").get("orders:0")?.offset).toBe(10n);
    expect([...persisted.keys()].sort()).toEqual(["busy", "past"]);
  });
});
