import { describe, expect, it } from "vitest";
import { ClusterClosedError } from "../src/index";
import { clientCluster, expectKafkaError, tick } from "./clients-helpers";

/**
 * After `KafkaCluster.close()` nothing answers from memory and nothing waits for an election that never
 * comes: every client call, metadata change and broker start fails at once (no virtual time passes) with
 * ClusterClosedError, which is not retriable; closing clients still works.
 */
describe("a closed cluster", () => {
  async function closedWithClients() {
    const t = clientCluster();
    const admin = t.kafka.admin();
    await t.run(admin.createTopics({ topics: [{ topic: "t", numPartitions: 2, replicationFactor: 3 }] }));
    const producer = t.kafka.producer({ idempotent: true });
    await producer.connect();
    await t.run(producer.send({ topic: "t", messages: [{ value: "before" }] }));
    const consumer = t.kafka.consumer({ groupId: "g" });
    await consumer.connect();
    await consumer.subscribe({ topic: "t", fromBeginning: true });
    const seen: string[] = [];
    let crashed: unknown;
    consumer.on(consumer.events.CRASH, (e) => {
      crashed = e.payload.error;
    });
    await consumer.run({ eachMessage: async ({ message }) => void seen.push(String(message.value)) });
    await t.run(
      (async () => {
        while (seen.length === 0) await tick();
      })(),
    );
    t.cluster.close();
    return { ...t, admin, producer, consumer, seen, crashed: () => crashed };
  }

  /** Settles `work` without moving virtual time: a call that waited on a retry or an election would not. */
  async function atOnce<T>(t: { clock: { now(): number } }, work: () => Promise<T>): Promise<T> {
    const before = t.clock.now();
    const settled = await Promise.race([
      work().then(
        (v) => ({ v }),
        (e: unknown) => ({ e }),
      ),
      tick()
        .then(() => tick())
        .then(() => ({ pending: true as const })),
    ]);
    expect(t.clock.now()).toBe(before);
    if ("pending" in settled) throw new Error("the call is still waiting on a closed cluster");
    if ("e" in settled) throw settled.e;
    return settled.v;
  }

  it("refuses produce, admin and consume calls at once with ClusterClosedError, not retriable", async () => {
    const t = await closedWithClients();
    expect(t.cluster.isClosed).toBe(true);
    // Before: LEADER_NOT_AVAILABLE "retry after the election", retried for about 8 s of backoff.
    const sent = atOnce(t, () => t.producer.send({ topic: "t", messages: [{ value: "after" }] }));
    await expect(sent).rejects.toBeInstanceOf(ClusterClosedError);
    await expect(sent).rejects.toMatchObject({ errorName: "CLUSTER_CLOSED", retriable: false });
    await expect(sent).rejects.toThrow(
      /cannot produce: cluster .* was closed .* cannot be reopened; start a new KafkaCluster/,
    );
    // Before: answered from the controller's image, as if the cluster still ran.
    await expectKafkaError(
      atOnce(t, () => t.admin.listTopics()),
      "CLUSTER_CLOSED",
    );
    await expectKafkaError(
      atOnce(t, () => t.admin.createTopics({ topics: [{ topic: "u", numPartitions: 1 }] })),
      "CLUSTER_CLOSED",
    );
    await expectKafkaError(
      atOnce(t, () => t.admin.connect()),
      "CLUSTER_CLOSED",
    );
    await expectKafkaError(
      atOnce(t, () => t.kafka.producer().connect()),
      "CLUSTER_CLOSED",
    );
    await expectKafkaError(
      atOnce(t, () => t.kafka.consumer({ groupId: "h" }).connect()),
      "CLUSTER_CLOSED",
    );
    await expectKafkaError(
      atOnce(t, () => t.kafka.producer({ transactionalId: "tx" }).transaction()),
      "CLUSTER_CLOSED",
    );
    await expectKafkaError(
      atOnce(t, () => t.consumer.commitOffsets()),
      "CLUSTER_CLOSED",
    );
  });

  it("ends a running consumer's loop with a CRASH, and still lets clients close", async () => {
    const t = await closedWithClients();
    // The loop's next round meets the closed cluster: a CRASH with the error, not a retry loop.
    await t.run(
      (async () => {
        while (t.crashed() === undefined) await tick();
      })(),
      { maxMs: 1000 },
    );
    expect(t.crashed()).toBeInstanceOf(ClusterClosedError);
    await t.run(t.consumer.disconnect());
    await t.run(t.producer.disconnect());
    await t.run(t.admin.disconnect());
    t.cluster.close(); // twice: nothing more happens
  });

  it("refuses metadata changes and broker starts; the image stays readable", async () => {
    const t = await closedWithClients();
    expect(() => t.cluster.controller.createTopic({ name: "v", numPartitions: 1 })).toThrow(
      ClusterClosedError,
    );
    expect(() => t.cluster.controller.putMirror("m", {})).toThrow(ClusterClosedError);
    expect(() => t.cluster.startBroker(0)).toThrow(/cannot start broker 0: cluster .* was closed/);
    expect(t.cluster.runningBrokers()).toEqual([]);
    expect(() => t.cluster.leaderFor("t", 0)).toThrow(ClusterClosedError);
    // What was written stays inspectable (as a stopped cluster's metadata log on disk).
    expect(t.cluster.controller.image.topic("t")?.partitions.length).toBe(2);
  });
});
