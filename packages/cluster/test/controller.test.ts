import { describe, expect, it } from "vitest";
import { Controller, MetadataImage, SeededRandom } from "../src/index";
import { controller, errorOf } from "./controller-helpers";

describe("Controller topics", () => {
  it("creates a topic with a given id and refuses the same id for another topic", () => {
    const c = controller();
    const id = "6f1f3a40-1c2b-4d3e-8f40-0123456789ab";
    expect(c.createTopic({ name: "orders", numPartitions: 2, replicationFactor: 3, topicId: id })).toBe(id);
    const t = c.image.topic("orders");
    expect(t?.topicId).toBe(id);
    expect(t?.partitions.map((p) => p.replicas.length)).toEqual([3, 3]);
    expect(t?.partitions.every((p) => p.leader === p.replicas[0] && p.isr.length === 3)).toBe(true);
    const err = errorOf(() => c.createTopic({ name: "other", topicId: id }));
    expect(err.errorName).toBe("INCONSISTENT_TOPIC_ID");
    expect(err.message).toContain("orders");
    expect(c.image.topic("other")).toBeUndefined();
  });

  it("refuses bad names, duplicate names, bad configs and impossible replication factors", () => {
    const c = controller();
    c.createTopic({ name: "a" });
    expect(errorOf(() => c.createTopic({ name: "a" })).errorName).toBe("TOPIC_ALREADY_EXISTS");
    expect(errorOf(() => c.createTopic({ name: "bad name" })).errorName).toBe("INVALID_TOPIC_EXCEPTION");
    expect(errorOf(() => c.createTopic({ name: ".." })).errorName).toBe("INVALID_TOPIC_EXCEPTION");
    expect(errorOf(() => c.createTopic({ name: "b", configs: { "retention.ms": "soon" } })).errorName).toBe(
      "INVALID_CONFIG",
    );
    expect(errorOf(() => c.createTopic({ name: "b", configs: { "no.such": "1" } })).errorName).toBe(
      "INVALID_CONFIG",
    );
    expect(errorOf(() => c.createTopic({ name: "b", replicationFactor: 4 })).errorName).toBe(
      "INVALID_REPLICATION_FACTOR",
    );
    expect(errorOf(() => c.createTopic({ name: "b", numPartitions: 0 })).errorName).toBe(
      "INVALID_PARTITIONS",
    );
    expect(c.image.topic("b")).toBeUndefined();
  });

  it("says a replication factor or partition count that is no count at all is wrong, not short of brokers", () => {
    const c = controller();
    // Before: "replication factor 0 needs that many live brokers; 3 are live (0, 1, 2)", and for "3" (a
    // JavaScript caller's string) "replication factor 3 needs that many live brokers; 3 are live".
    for (const [rf, shown] of [
      [0, "0"],
      [-2, "-2"],
      [1.5, "1.5"],
      ["3", '"3" (a string)'],
    ] as const) {
      const refused = errorOf(() => c.createTopic({ name: "b", replicationFactor: rf as unknown as number }));
      expect(refused.errorName).toBe("INVALID_REPLICATION_FACTOR");
      expect(refused.message).toBe(`replication factor must be an integer >= 1, got ${shown}`);
    }
    const partitions = errorOf(() => c.createTopic({ name: "b", numPartitions: "2" as unknown as number }));
    expect(partitions.errorName).toBe("INVALID_PARTITIONS");
    expect(partitions.message).toBe('number of partitions must be at least 1, got "2" (a string)');
    expect(c.image.topic("b")).toBeUndefined();
  });

  it("with no live broker, a topic asked for with the default replication factor is refused for the brokers, not its replication factor", () => {
    // Review s54: the default replication factor is min(3, live brokers), 0 with none live, and the check
    // for a replication factor that is no count answered "replication factor must be an integer >= 1, got 0"
    // to a caller who gave none.
    const c = controller(0);
    const refused = errorOf(() => c.createTopic({ name: "b" }));
    expect(refused.errorName).toBe("INVALID_REPLICATION_FACTOR");
    expect(refused.message).toBe(
      "the default replication factor, min(3, live brokers), needs at least one live broker; none are live",
    );
    const validated = errorOf(() => c.createTopic({ name: "b" }, { validateOnly: true }));
    expect(validated.message).toBe(refused.message);
    expect(c.image.topic("b")).toBeUndefined();
  });

  it("adds partitions, never removes them, and deletes topics", () => {
    const c = controller();
    c.createTopic({ name: "t", numPartitions: 1, replicationFactor: 2 });
    c.createPartitions("t", 3);
    expect(c.image.topic("t")?.partitions.map((p) => p.partition)).toEqual([0, 1, 2]);
    expect(errorOf(() => c.createPartitions("t", 2)).errorName).toBe("INVALID_PARTITIONS");
    c.deleteTopic("t");
    expect(c.image.topic("t")).toBeUndefined();
    expect(errorOf(() => c.deleteTopic("t")).errorName).toBe("UNKNOWN_TOPIC_OR_PARTITION");
  });

  it("alters topic configs incrementally, all or nothing", () => {
    const c = controller();
    c.createTopic({ name: "t", configs: { "mirror.name": "m1" } });
    c.incrementalAlterConfigs({ type: "topic", name: "t" }, [
      { name: "mirror.name", op: "SET", value: "m1.paused" },
      { name: "cleanup.policy", op: "APPEND", value: "compact" },
    ]);
    expect(c.image.topic("t")?.configs.get("mirror.name")).toBe("m1.paused");
    expect(c.image.topic("t")?.configs.get("cleanup.policy")).toBe("delete,compact");
    const err = errorOf(() =>
      c.incrementalAlterConfigs({ type: "topic", name: "t" }, [
        { name: "mirror.name", op: "DELETE" },
        { name: "min.insync.replicas", op: "SET", value: "0" },
      ]),
    );
    expect(err.errorName).toBe("INVALID_CONFIG");
    expect(c.image.topic("t")?.configs.get("mirror.name")).toBe("m1.paused");
    c.incrementalAlterConfigs({ type: "broker", name: "" }, [
      { name: "mirror.replication.throttled.rate", op: "SET", value: "1000" },
    ]);
    expect(c.image.brokerConfig(1, "mirror.replication.throttled.rate")).toBe("1000");
  });
});

describe("Controller leadership", () => {
  it("bumps leader epochs to at least the minimum and by at least one", () => {
    const c = controller();
    c.createTopic({ name: "t", numPartitions: 2 });
    expect(c.bumpLeaderEpochs([{ topic: "t", partition: 0, minLeaderEpoch: 17 }])).toEqual([17]);
    expect(c.bumpLeaderEpochs([{ topic: "t", partition: 0, minLeaderEpoch: 3 }])).toEqual([18]);
    expect(c.image.partition("t", 0)?.leaderEpoch).toBe(18);
    expect(c.image.partition("t", 1)?.leaderEpoch).toBe(0);
    expect(
      errorOf(() => c.bumpLeaderEpochs([{ topic: "t", partition: 9, minLeaderEpoch: 1 }])).errorName,
    ).toBe("UNKNOWN_TOPIC_OR_PARTITION");
  });

  it("elects a new leader from the ISR with a higher epoch when the leader's broker is fenced", () => {
    const c = controller();
    c.createTopic({ name: "t", replicaAssignment: [[0, 1, 2]] });
    c.fenceBroker(0);
    const p = c.image.partition("t", 0)!;
    expect(p.leader).toBe(1);
    expect(p.leaderEpoch).toBe(1);
    expect(p.isr).toEqual([1, 2]);
    c.fenceBroker(2);
    expect(c.image.partition("t", 0)).toMatchObject({ leader: 1, leaderEpoch: 1, isr: [1] });
    c.fenceBroker(1);
    expect(c.image.partition("t", 0)).toMatchObject({ leader: -1, leaderEpoch: 2, isr: [1] });
    // Broker 0 is not in the ISR: it cannot lead without unclean election.
    c.unfenceBroker(0);
    expect(c.image.partition("t", 0)?.leader).toBe(-1);
    c.unfenceBroker(1);
    expect(c.image.partition("t", 0)).toMatchObject({ leader: 1, leaderEpoch: 3 });
  });

  it("elects an out-of-sync replica only with unclean.leader.election.enable", () => {
    const c = controller();
    c.createTopic({
      name: "t",
      replicaAssignment: [[0, 1]],
      configs: { "unclean.leader.election.enable": "true" },
    });
    c.alterPartition("t", 0, { leader: 0, leaderEpoch: 0, isr: [0] });
    c.fenceBroker(0);
    expect(c.image.partition("t", 0)).toMatchObject({ leader: 1, isr: [1], leaderEpoch: 1 });
  });

  it("elects an out-of-sync replica coming back to a leaderless partition only with unclean.leader.election.enable", () => {
    for (const unclean of [true, false]) {
      const c = controller();
      c.createTopic({
        name: "t",
        replicaAssignment: [[0, 1, 2]],
        configs: { "unclean.leader.election.enable": String(unclean) },
      });
      // Broker 2 falls out of the ISR, then both in-sync replicas are fenced while it is down too.
      c.alterPartition("t", 0, { leader: 0, leaderEpoch: 0, isr: [0, 1] });
      c.fenceBroker(2);
      c.fenceBroker(1);
      c.fenceBroker(0);
      expect(c.image.partition("t", 0)?.leader).toBe(-1);
      const epoch = c.image.partition("t", 0)!.leaderEpoch;
      // Broker 2 comes back, out of sync: Kafka's handleBrokerUnfenced elects it uncleanly when allowed.
      c.unfenceBroker(2);
      if (unclean) {
        expect(c.image.partition("t", 0)).toMatchObject({
          leader: 2,
          isr: [2],
          leaderEpoch: epoch + 1,
        });
        expect(c.image.partition("t", 0)?.elr ?? []).toEqual([]);
      } else {
        expect(c.image.partition("t", 0)).toMatchObject({ leader: -1, leaderEpoch: epoch });
      }
    }
  });

  it("refuses an ISR change from a leader with a stale epoch", () => {
    const c = controller();
    c.createTopic({ name: "t", replicaAssignment: [[0, 1, 2]] });
    c.bumpLeaderEpochs([{ topic: "t", partition: 0, minLeaderEpoch: 5 }]);
    const err = errorOf(() => c.alterPartition("t", 0, { leader: 0, leaderEpoch: 4, isr: [0] }));
    expect(err.errorName).toBe("FENCED_LEADER_EPOCH");
    expect(err.code).toBe(74);
    expect(c.image.partition("t", 0)?.isr).toEqual([0, 1, 2]);
    c.alterPartition("t", 0, { leader: 0, leaderEpoch: 5, isr: [0, 2] });
    expect(c.image.partition("t", 0)?.isr).toEqual([0, 2]);
  });
});

describe("Controller metadata feed", () => {
  it("gives a late subscriber the same image as the controller, in order", () => {
    const c = controller();
    c.createTopic({ name: "t", numPartitions: 3, configs: { "cleanup.policy": "compact" } });
    c.fenceBroker(1);
    const image = new MetadataImage();
    const offsets: number[] = [];
    c.subscribe((e) => {
      offsets.push(e.offset);
      image.apply(e.record, e.offset);
    });
    c.createPartitions("t", 4, 2);
    c.unfenceBroker(1);
    expect(offsets).toEqual(c.metadataLog().map((e) => e.offset));
    expect(image.topic("t")).toEqual(c.image.topic("t"));
    expect(image.liveBrokers()).toEqual([0, 1, 2]);
  });

  it("keeps feeding other listeners when one throws", () => {
    const errors: unknown[] = [];
    const c = new Controller({ random: new SeededRandom(1), onListenerError: (e) => errors.push(e) });
    c.registerBroker(0);
    let heard = 0;
    c.subscribe(() => {
      throw new Error("boom");
    });
    c.subscribe(() => heard++);
    c.createTopic({ name: "t" });
    expect(heard).toBe(c.metadataLog().length);
    expect(errors.length).toBe(c.metadataLog().length);
  });
});

describe("Controller validateOnly (CreateTopics, CreatePartitions)", () => {
  it("checks a topic creation without creating it, and refuses what the real one would", () => {
    const c = controller();
    const offset = c.image.offset;
    c.createTopic({ name: "orders", numPartitions: 2, replicationFactor: 3 }, { validateOnly: true });
    expect(c.image.topic("orders")).toBeUndefined();
    expect(c.image.offset).toBe(offset);
    const tooWide = errorOf(() =>
      c.createTopic({ name: "orders", replicationFactor: 4 }, { validateOnly: true }),
    );
    expect(tooWide.errorName).toBe("INVALID_REPLICATION_FACTOR");
    expect(tooWide.message).toBe("replication factor 4 needs that many live brokers; 3 are live (0, 1, 2)");
    c.createTopic({ name: "taken" });
    expect(errorOf(() => c.createTopic({ name: "taken" }, { validateOnly: true })).errorName).toBe(
      "TOPIC_ALREADY_EXISTS",
    );
  });

  it("checks a partition raise without making it, and refuses one the live brokers cannot hold", () => {
    const c = controller();
    c.createTopic({ name: "orders", numPartitions: 1, replicationFactor: 3 });
    c.createPartitions("orders", 3, undefined, { validateOnly: true });
    expect(c.image.topic("orders")!.partitions).toHaveLength(1);
    c.fenceBroker(2);
    const refused = errorOf(() => c.createPartitions("orders", 3, undefined, { validateOnly: true }));
    expect(refused.errorName).toBe("INVALID_REPLICATION_FACTOR");
    expect(errorOf(() => c.createPartitions("orders", 3)).message).toBe(refused.message);
    expect(errorOf(() => c.createPartitions("orders", 1, undefined, { validateOnly: true })).errorName).toBe(
      "INVALID_PARTITIONS",
    );
  });

  it("draws nothing from the controller's randomness: the next real assignment is the same", () => {
    const plain = controller();
    const validated = controller();
    validated.createTopic({ name: "a", numPartitions: 4 }, { validateOnly: true });
    for (const c of [plain, validated]) c.createTopic({ name: "a", numPartitions: 4 });
    expect(validated.image.topic("a")!.partitions.map((p) => p.replicas)).toEqual(
      plain.image.topic("a")!.partitions.map((p) => p.replicas),
    );
    expect(validated.image.topic("a")!.topicId).toBe(plain.image.topic("a")!.topicId);
  });
});
