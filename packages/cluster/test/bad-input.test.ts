import { describe, expect, it } from "vitest";
import { KafkaCluster, ManualClock, ManualScheduler, SeededRandom } from "../src/index";
import { clientCluster } from "./clients-helpers";
import { testCluster } from "./helpers";

/** Expects `work` to fail with `errorName` and a message matching `message`. */
async function expectRefused(work: Promise<unknown>, errorName: string, message: RegExp): Promise<void> {
  const error = await work.then(
    () => undefined,
    (e: unknown) => e as Error & { errorName?: string },
  );
  expect(error?.errorName, String(error)).toBe(errorName);
  expect(error?.message).toMatch(message);
}

describe("the embedded cluster refuses bad input with a typed error that says what to pass", () => {
  it("a message whose value or key is not a Buffer, a string or null, or messages not in an array", async () => {
    const { kafka, run } = clientCluster();
    const admin = kafka.admin();
    await run(admin.createTopics({ topics: [{ topic: "t", numPartitions: 1 }] }));
    const producer = kafka.producer();
    await producer.connect();
    await expectRefused(
      run(producer.send({ topic: "t", messages: [{ value: "ok" }, { value: 42 as unknown as string }] })),
      "INVALID_RECORD",
      /message 1 for topic 't' has a value of type number/,
    );
    await expectRefused(
      run(producer.send({ topic: "t", messages: [{ key: { id: 1 } as unknown as string, value: "v" }] })),
      "INVALID_RECORD",
      /has a key of type object/,
    );
    await expectRefused(
      run(producer.send({ topic: "t", messages: { value: "x" } as never })),
      "INVALID_RECORD",
      /must be an array, such as \[\{ value: "\.\.\." \}\]/,
    );
    // Refused whole: the good message before the bad one was not written either.
    const offsets = await run(admin.fetchTopicOffsets("t"));
    expect(offsets.map((o) => o.high)).toEqual(["0"]);
  });

  it("KafkaCluster.start names the clock, scheduler or random it was not given", () => {
    const clock = new ManualClock(0);
    expect(() => KafkaCluster.start({ brokers: 1 } as never)).toThrow(
      /needs clock, scheduler, random: the cluster reads no time or randomness of its own/,
    );
    expect(() => KafkaCluster.start({ brokers: 1, clock, random: new SeededRandom(1) } as never)).toThrow(
      /KafkaCluster.start needs scheduler:/,
    );
    const cluster = KafkaCluster.start({
      brokers: 1,
      clock,
      scheduler: new ManualScheduler(clock),
      random: new SeededRandom(1),
    });
    expect(cluster.runningBrokers()).toEqual([0]);
  });

  it("a topic whose name differs from an existing one only by '.' and '_' is refused, as Kafka does", () => {
    const { cluster } = testCluster();
    cluster.controller.createTopic({ name: "t.x", replicaAssignment: [[0]], configs: {} });
    expect(() =>
      cluster.controller.createTopic({ name: "t_x", replicaAssignment: [[0]], configs: {} }),
    ).toThrow(/topic 't_x' collides with existing topic 't.x'/);
    // Once t.x is deleted, the name is free.
    cluster.controller.deleteTopic("t.x");
    cluster.controller.createTopic({ name: "t_x", replicaAssignment: [[0]], configs: {} });
    expect(cluster.controller.image.topic("t_x")).toBeDefined();
  });
});
