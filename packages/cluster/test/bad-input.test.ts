import { describe, expect, it } from "vitest";
import { EmbeddedKafka, KafkaCluster, ManualClock, ManualScheduler, SeededRandom } from "../src/index";
import { clientCluster } from "./clients-helpers";
import { testCluster } from "./helpers";
import { expectRefused, refused } from "./refusals";

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

  it("admin.createTopics and deleteTopics of the wrong shape are refused as kafkajs refuses them", async () => {
    const { kafka, run } = clientCluster();
    const admin = kafka.admin();
    const create = (args: unknown) => run(admin.createTopics(args as never));
    await expectRefused(
      create(undefined),
      "INVALID_REQUEST",
      /Invalid topics array undefined: pass \{ topics:/,
    );
    await expectRefused(create({}), "INVALID_REQUEST", /Invalid topics array undefined/);
    await expectRefused(
      create({ topics: [{ topic: "ok" }, { topic: 5 }] }),
      "INVALID_REQUEST",
      /the topic names have to be a valid string: topics\[1\].topic is 5/,
    );
    await expectRefused(
      create({ topics: [{ topic: null }] }),
      "INVALID_REQUEST",
      /topics\[0\].topic is null/,
    );
    await expectRefused(
      create({ topics: [{ topic: "c", configEntries: { "cleanup.policy": "compact" } }] }),
      "INVALID_REQUEST",
      /Invalid configEntries for topic "c", must be an array such as \[\{ name: "cleanup.policy", value: "compact" \}\]/,
    );
    await expectRefused(
      create({ topics: [{ topic: "c", configEntries: [{ name: "retention.ms", value: 60000 }] }] }),
      "INVALID_REQUEST",
      /Entry 0 must have a valid "value" property \(a string, as Kafka's configs are: "60000", not 60000\), got 60000/,
    );
    const remove = (args: unknown) => run(admin.deleteTopics(args as never));
    await expectRefused(
      remove({ topics: "ok" }),
      "INVALID_REQUEST",
      /Invalid topics array "ok" \(a string\): pass \{ topics: \["name"\] \}/,
    );
    await expectRefused(
      remove({ topics: [7] }),
      "INVALID_REQUEST",
      /the names must be a valid string: topics\[0\] is 7/,
    );
    // Nothing was created by the refused calls; a good call still works.
    expect(await run(admin.listTopics())).toEqual([]);
    await run(
      admin.createTopics({
        topics: [{ topic: "c", configEntries: [{ name: "retention.ms", value: "60000" }] }],
      }),
    );
    await run(admin.deleteTopics({ topics: ["c"] }));
    expect(await run(admin.listTopics())).toEqual([]);
  });

  it("kafka.consumer without a groupId, and a misspelled consumer or admin setting, say what to pass", async () => {
    const { kafka, run } = clientCluster();
    // Failed with "Cannot read properties of undefined (reading 'retry')".
    const none = refused(() => kafka.consumer(undefined as never));
    expect(none.errorName).toBe("INVALID_REQUEST");
    expect(none.message).toMatch(
      /^kafka.consumer\(config\): Consumer groupId must be a non-empty string: pass a config such as \{ groupId: "my-group" \}/,
    );
    expect(refused(() => kafka.consumer({} as never)).message).toMatch(
      /Consumer groupId must be a non-empty string, such as \{ groupId: "my-group" \}; got undefined/,
    );
    expect(refused(() => kafka.consumer({ groupId: "" })).message).toMatch(/non-empty string/);
    // Taken without a word before: a consumer of no group, or with the default session timeout.
    expect(refused(() => kafka.consumer({ groupID: "g" } as never)).message).toMatch(
      /has no 'groupID'; did you mean 'groupId'\? Known: groupId,/,
    );
    expect(refused(() => kafka.consumer({ groupId: "g", heartbeatInterval: 500 } as never)).message).toMatch(
      /'heartbeatInterval' is a kafkajs consumer setting an embedded consumer does not use/,
    );
    expect(refused(() => kafka.consumer({ groupId: "g", isolation: "committed" } as never)).message).toMatch(
      /isolation must be "read_committed" or "read_uncommitted", got "committed" \(a string\)/,
    );
    expect(refused(() => kafka.consumer({ groupId: "g", retry: { retries: -1 } })).message).toMatch(
      /^kafka.consumer\(config\): retry: retries must be a whole number/,
    );
    const admin = refused(() => kafka.admin({ retries: 5 } as never));
    expect(admin.errorName).toBe("INVALID_REQUEST");
    expect(admin.message).toMatch(
      /^kafka.admin\(config\): 'retries' is a retry setting: put it inside retry, as \{ retry: \{ retries: \.\.\. \} \}/,
    );
    expect(refused(() => kafka.admin({ rety: {} } as never)).message).toMatch(
      /has no 'rety'; did you mean 'retry'\?/,
    );
    // Good settings still make working clients.
    await run(kafka.admin({ retry: { retries: 2 } }).createTopics({ topics: [{ topic: "t" }] }));
    const consumer = kafka.consumer({ groupId: "g", sessionTimeout: 10_000, isolation: "read_committed" });
    await run(consumer.connect());
    await run(consumer.subscribe({ topic: "t" }));
  });

  it("kafka.producer refuses an empty transactionalId, as Kafka's ProducerConfig does", async () => {
    const { kafka, run } = clientCluster();
    const refused = (config: unknown): Error & { errorName?: string } => {
      try {
        kafka.producer(config as never);
      } catch (error) {
        return error as Error & { errorName?: string };
      }
      throw new Error("expected a refusal");
    };
    // Made a transactional producer whose transactions all failed at the coordinator.
    const empty = refused({ transactionalId: "" });
    expect(empty.errorName).toBe("INVALID_CONFIG");
    expect(empty.message).toMatch(
      /Invalid value "" \(a string\) for configuration transactionalId \(transactional.id\): String must be non-empty\. Give the producer's transactional id/,
    );
    expect(refused({ transactionalId: 7 }).errorName).toBe("INVALID_CONFIG");
    expect(refused({ idempotent: "yes" }).message).toMatch(/idempotent must be true or false, got "yes"/);
    // A transactional id that is a name still makes a working transactional producer.
    await run(kafka.admin().createTopics({ topics: [{ topic: "t" }] }));
    const producer = kafka.producer({ transactionalId: "orders-writer" });
    await run(producer.connect());
    const txn = await run(producer.transaction());
    await run(txn.send({ topic: "t", messages: [{ value: "v" }] }));
    await run(txn.commit());
  });

  it("producer.send with a missing or illegal topic, or a bad partition, header or timestamp, says what to pass", async () => {
    const { kafka, run } = clientCluster();
    const admin = kafka.admin();
    await run(admin.createTopics({ topics: [{ topic: "t", numPartitions: 2 }] }));
    const producer = kafka.producer();
    await run(producer.connect());
    const send = (record: unknown) => run(producer.send(record as never));
    // Said "topic 'undefined' does not exist".
    await expectRefused(
      send({ messages: [{ value: "v" }] }),
      "INVALID_TOPIC_EXCEPTION",
      /Invalid topic undefined: a send names its topic, as \{ topic: "orders", messages:/,
    );
    // Said UNKNOWN_TOPIC_OR_PARTITION; Kafka answers INVALID_TOPIC_EXCEPTION for a name it never allows.
    await expectRefused(
      send({ topic: "bad name", messages: [{ value: "v" }] }),
      "INVALID_TOPIC_EXCEPTION",
      /topic name 'bad name' is illegal: use 1 to 249 of \[a-zA-Z0-9._-\]/,
    );
    // Said the partition "1" does not exist.
    await expectRefused(
      send({ topic: "t", messages: [{ value: "v", partition: "1" }] }),
      "INVALID_RECORD",
      /message 0 for topic 't' has partition "1" \(a string\): a partition is a whole number, 0 or more/,
    );
    // A RangeError from deep inside the encoder.
    await expectRefused(
      send({ topic: "t", messages: [{ value: "v", headers: { h: 5 } }] }),
      "INVALID_RECORD",
      /has header 'h' of value 5: a header value must be a Buffer, a string or null, or an array of them/,
    );
    await expectRefused(
      send({ topic: "t", messages: [{ value: "v", headers: "h=1" }] }),
      "INVALID_RECORD",
      /has headers "h=1" \(a string\): headers are an object of name to value/,
    );
    // A SyntaxError from BigInt("abc").
    await expectRefused(
      send({ topic: "t", messages: [{ value: "v", timestamp: "abc" }] }),
      "INVALID_RECORD",
      /has timestamp "abc" \(a string\): a timestamp is milliseconds since the epoch, 0 or more/,
    );
    await expectRefused(
      run(producer.sendBatch({ topicMessages: [{ topic: 5, messages: [] }] } as never)),
      "INVALID_TOPIC_EXCEPTION",
      /Invalid topic 5:/,
    );
    // Nothing was written; good fields still go through.
    expect((await run(admin.fetchTopicOffsets("t"))).map((o) => o.high)).toEqual(["0", "0"]);
    await send({
      topic: "t",
      messages: [
        { value: "v", partition: 1, headers: { h: ["a", Buffer.from("b")] }, timestamp: "1700000000000" },
      ],
    });
    expect((await run(admin.fetchTopicOffsets("t"))).map((o) => o.high)).toEqual(["0", "1"]);
  });
});
