import { describe, expect, it } from "vitest";
import { EmbeddedKafka, KafkaCluster, ManualClock, ManualScheduler, SeededRandom } from "../src/index";
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

  it("new EmbeddedKafka without its cluster, or with a misspelled or unusable setting, says what to pass", async () => {
    const { cluster, kafka, run } = clientCluster();
    const refused = (make: () => unknown): Error & { errorName?: string } => {
      try {
        make();
      } catch (error) {
        return error as Error & { errorName?: string };
      }
      throw new Error("expected a refusal");
    };
    // A kafkajs habit: the settings first, no cluster. It failed at the first request with
    // "this.client.cluster.ensureOpen is not a function".
    const kafkajsStyle = refused(
      () => new EmbeddedKafka({ clientId: "app", brokers: ["localhost:9092"] } as never),
    );
    expect(kafkajsStyle.errorName).toBe("INVALID_REQUEST");
    expect(kafkajsStyle.message).toMatch(
      /the first argument must be the KafkaCluster to talk to \(from KafkaCluster.start\).*the kafkajs settings go second: new EmbeddedKafka\(cluster, \{ clientId \}\)/,
    );
    expect(refused(() => new EmbeddedKafka(undefined as never)).message).toMatch(/got undefined/);
    // Taken without a word before: the client ran as clientId "kafkajs", or retried a NaN number of times.
    const cases: [object, RegExp][] = [
      [{ clientID: "app" }, /config has no 'clientID'; did you mean 'clientId'\?/],
      [{ brokers: ["localhost:9092"] }, /'brokers' is a kafkajs setting for network connections/],
      // Logging, not the network: said as it is.
      [{ logLevel: 1 }, /'logLevel' is a kafkajs logging setting, which an EmbeddedKafka has no use for/],
      // In kafkajs's own RetryOptions type: not "no such key" with a did-you-mean.
      [
        { retry: { retries: 3, restartOnFailure: async () => true } },
        /retry: restartOnFailure \(kafkajs's restart of a consumer after a retriable crash\) is not supported/,
      ],
      [{ clientId: 5 }, /clientId must be a non-empty string, got 5/],
      [{ retry: { retries: Number.NaN } }, /retry: retries must be a whole number, 0 or more; got NaN/],
      [{ retry: { retires: 3 } }, /retry: has no 'retires'; did you mean 'retries'\?/],
      [
        { retry: { factor: 2 } },
        /factor \(the randomization of each wait\) must be a number from 0 to 1; got 2/,
      ],
    ];
    for (const [config, message] of cases) {
      const error = refused(() => new EmbeddedKafka(cluster, config as never));
      expect(error.errorName, JSON.stringify(config)).toBe("INVALID_REQUEST");
      expect(error.message).toMatch(message);
    }
    // A producer's own retry is checked as the client's is.
    expect(refused(() => kafka.producer({ retry: { retries: -1 } })).message).toMatch(
      /retry: retries must be a whole number, 0 or more; got -1/,
    );
    // Good settings still make working clients.
    const admin = new EmbeddedKafka(cluster, { clientId: "app", retry: { retries: 2, factor: 0.1 } }).admin();
    await run(admin.createTopics({ topics: [{ topic: "ok", numPartitions: 1 }] }));
    expect(await run(admin.listTopics())).toContain("ok");
  });

  it("kafka.producer refuses a misspelled setting instead of making a producer without the guarantee asked for", async () => {
    const { kafka, run } = clientCluster();
    const refused = (config: object): Error & { errorName?: string } => {
      try {
        kafka.producer(config as never);
      } catch (error) {
        return error as Error & { errorName?: string };
      }
      throw new Error(`expected ${JSON.stringify(config)} to be refused`);
    };
    // Taken without a word: a plain producer, whose retries may write a batch twice.
    const idempotant = refused({ idempotant: true });
    expect(idempotant.errorName).toBe("INVALID_REQUEST");
    expect(idempotant.message).toMatch(
      /^kafka.producer\(config\): has no 'idempotant'; did you mean 'idempotent'\? Known: idempotent, transactionalId,/,
    );
    expect(refused({ transactionalID: "t" }).message).toMatch(/did you mean 'transactionalId'\?/);
    expect(refused({ allowAutoTopicCreation: true }).message).toMatch(
      /'allowAutoTopicCreation' is a kafkajs producer setting an embedded producer has no use for/,
    );
    // Good settings still make a working producer.
    await run(kafka.admin().createTopics({ topics: [{ topic: "t", numPartitions: 1 }] }));
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await run(producer.connect());
    await run(producer.send({ topic: "t", messages: [{ value: "v" }] }));
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
