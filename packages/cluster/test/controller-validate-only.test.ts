import { describe, expect, it } from "vitest";
import { ClusterError, Controller, SeededRandom } from "../src/index";

function controller(brokers = 3): Controller {
  const c = new Controller({ random: new SeededRandom(7) });
  for (let b = 0; b < brokers; b++) c.registerBroker(b);
  return c;
}

function errorOf(fn: () => unknown): ClusterError {
  try {
    fn();
  } catch (e) {
    if (e instanceof ClusterError) return e;
    throw e;
  }
  throw new Error("expected a ClusterError");
}

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
