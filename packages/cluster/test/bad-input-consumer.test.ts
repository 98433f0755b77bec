import { describe, expect, it } from "vitest";
import { clientCluster, values } from "./clients-helpers";
import { expectRefused, refused } from "./refusals";

describe("the consumer refuses bad arguments as kafkajs does, before they reach the group", () => {
  it("subscribe with a topic that is not a name or RegExp, or topics not in an array, says what to pass", async () => {
    const { kafka, run } = clientCluster();
    const admin = kafka.admin();
    await run(admin.createTopics({ topics: [{ topic: "orders", numPartitions: 1 }] }));
    const consumer = kafka.consumer({ groupId: "g" });
    await run(consumer.connect());
    const subscribe = (args: unknown) => run(consumer.subscribe(args as never));
    // Subscribed to the topics "o", "r", "d", "e", "r", "s" before.
    await expectRefused(
      subscribe({ topics: "orders" }),
      "INVALID_REQUEST",
      /^consumer.subscribe\(args\): Argument "topics" must be an array, such as \{ topics: \["orders"\] \}; got "orders" \(a string\)/,
    );
    // Taken, then every poll crashed with "s.topic.test is not a function".
    await expectRefused(
      subscribe({ topic: 5 }),
      "INVALID_REQUEST",
      /Invalid topic 5, the topic name has to be a String or a RegExp, such as "orders" or \/orders-\.\*\//,
    );
    await expectRefused(subscribe({ topics: ["orders", null] }), "INVALID_REQUEST", /Invalid topic null/);
    // "Cannot read properties of undefined (reading 'topics')" before.
    await expectRefused(
      subscribe(undefined),
      "INVALID_REQUEST",
      /Missing required argument "topics": pass \{ topics: \["orders"\] \}/,
    );
    // Nothing of the refused calls was kept: the consumer polls its good subscription.
    const producer = kafka.producer();
    await run(producer.connect());
    await run(producer.send({ topic: "orders", messages: [{ value: "a" }] }));
    await subscribe({ topics: [/ord.*/], fromBeginning: true });
    expect(values(await run(consumer.poll()))).toEqual(["a"]);
    expect(consumer.assignment()).toEqual([{ topic: "orders", partition: 0 }]);
  });

  it("run with an eachMessage that is not a function is refused before the consumer joins its group", async () => {
    const { kafka, run } = clientCluster();
    await run(kafka.admin().createTopics({ topics: [{ topic: "t", numPartitions: 1 }] }));
    const consumer = kafka.consumer({ groupId: "g" });
    await run(consumer.connect());
    await run(consumer.subscribe({ topic: "t", fromBeginning: true }));
    const crashes: unknown[] = [];
    consumer.on(consumer.events.CRASH, (event) => crashes.push(event.payload.error));
    // Started a loop that joined the group and crashed at the first message before.
    await expectRefused(
      run(consumer.run({ eachMessage: "handle" } as never)),
      "INVALID_REQUEST",
      /^consumer.run\(config\): eachMessage must be a function, such as async \(\{ message \}\) => \{\}; got "handle" \(a string\)/,
    );
    expect(consumer.membership()).toBeUndefined();
    expect(crashes).toEqual([]);
    // A good run still consumes.
    const producer = kafka.producer();
    await run(producer.connect());
    await run(producer.send({ topic: "t", messages: [{ value: "v" }] }));
    const seen = new Promise<string>((resolve) => {
      void consumer.run({ eachMessage: async ({ message }) => resolve(String(message.value)) });
    });
    expect(await run(seen)).toBe("v");
    await run(consumer.disconnect());
  });

  it("subscribe while the consumer is running is refused with kafkajs's message; after stop() it subscribes", async () => {
    const { kafka, run, scheduler } = clientCluster();
    await run(
      kafka.admin().createTopics({
        topics: [
          { topic: "t", numPartitions: 1 },
          { topic: "u", numPartitions: 1 },
        ],
      }),
    );
    const producer = kafka.producer();
    await run(producer.connect());
    await run(producer.send({ topic: "t", messages: [{ value: "t1" }] }));
    await run(producer.send({ topic: "u", messages: [{ value: "u1" }] }));
    const consumer = kafka.consumer({ groupId: "g" });
    await run(consumer.connect());
    await run(consumer.subscribe({ topic: "t", fromBeginning: true }));
    const seen: string[] = [];
    let next: () => void = () => {};
    const eachMessage = async ({ message }: { message: { value: Buffer | null } }) => {
      seen.push(String(message.value));
      next();
    };
    let first = new Promise<void>((resolve) => {
      next = resolve;
    });
    await run(consumer.run({ eachMessage }));
    await run(first);
    const joined = consumer.membership();
    // Taken before: the running consumer rejoined its group with the new topic.
    await expectRefused(
      run(consumer.subscribe({ topic: "u", fromBeginning: true })),
      "INVALID_REQUEST",
      /^consumer.subscribe\(args\): Cannot subscribe to topic while consumer is running: call consumer.stop\(\) first, subscribe, then consumer.run\(\) again$/,
    );
    // A few rounds of the running loop later, it is still the member it was, on the same topic.
    await run(new Promise<void>((resolve) => scheduler.schedule(resolve, 500)));
    expect(consumer.membership()).toEqual(joined);
    expect(consumer.assignment()).toEqual([{ topic: "t", partition: 0 }]);
    await run(consumer.stop());
    await run(consumer.subscribe({ topic: "u", fromBeginning: true }));
    first = new Promise<void>((resolve) => {
      next = resolve;
    });
    await run(consumer.run({ eachMessage }));
    await run(first);
    expect(seen).toEqual(["t1", "u1"]);
    expect(consumer.assignment()).toEqual([
      { topic: "t", partition: 0 },
      { topic: "u", partition: 0 },
    ]);
    await run(consumer.disconnect());
  });

  it("seek, commitOffsets, pause and resume with a bad offset, partition or shape say what to pass", async () => {
    const { kafka, run, cluster } = clientCluster();
    await run(kafka.admin().createTopics({ topics: [{ topic: "t", numPartitions: 1 }] }));
    const consumer = kafka.consumer({ groupId: "g" });
    await run(consumer.connect());
    await run(consumer.subscribe({ topic: "t" }));
    // A bare SyntaxError "Cannot convert abc to a BigInt" before.
    const seek = refused(() => consumer.seek({ topic: "t", partition: 0, offset: "abc" }));
    expect(seek.errorName).toBe("INVALID_REQUEST");
    expect(seek.message).toMatch(
      /^consumer.seek\(args\): Invalid offset, expected a long received "abc" \(a string\): give the offset as a string of digits, such as "42"/,
    );
    expect(refused(() => consumer.seek({ topic: "t", partition: 0, offset: "-5" })).message).toMatch(
      /Offset must not be a negative number, got "-5" \(a string\); the negative offsets meant here are "-2" \(earliest\) or "-1" \(latest\)/,
    );
    expect(
      refused(() => consumer.seek({ topic: "t", partition: "0", offset: "1" } as never)).message,
    ).toMatch(/Invalid partition, expected a number received "0" \(a string\)/);
    await expectRefused(
      run(consumer.commitOffsets([{ topic: "t", partition: 0, offset: "x" }])),
      "INVALID_REQUEST",
      /^consumer.commitOffsets\(offsets\): Invalid offset, expected a long received "x"/,
    );
    await expectRefused(
      run(consumer.commitOffsets({ topic: "t", partition: 0, offset: "1" } as never)),
      "INVALID_REQUEST",
      /^consumer.commitOffsets\(offsets\): pass an array such as \[\{ topic: "orders", partition: 0, offset: "42" \}\]/,
    );
    // "topics.flatMap is not a function" before.
    expect(refused(() => consumer.pause({ topic: "t" } as never)).message).toMatch(
      /^consumer.pause\(topics\): pass an array such as \[\{ topic: "orders", partitions: \[0\] \}\]/,
    );
    expect(refused(() => consumer.resume([{ topic: "t", partitions: "0" }] as never)).message).toMatch(
      /^consumer.resume\(topics\): Array of valid partitions required for topic "t" instead of "0" \(a string\)/,
    );
    // "Cannot read properties of null (reading 'topic')" before.
    await expectRefused(
      run(consumer.commitOffsets([null as never])),
      "INVALID_REQUEST",
      /^consumer.commitOffsets\(offsets\): Invalid topic undefined: name the topic/,
    );
    expect(cluster.groups.fetchOffsets("g").size).toBe(0);
    // Good arguments still work: a seek to "-2" (earliest) and a commit.
    consumer.seek({ topic: "t", partition: 0, offset: "-2" });
    await run(consumer.commitOffsets([{ topic: "t", partition: 0, offset: "0" }]));
    expect(cluster.groups.fetchOffsets("g").get("t:0")?.offset).toBe(0n);
  });

  it("an offset past Kafka's int64 is refused, as kafkajs's Long refuses it; the largest long is taken", async () => {
    const { kafka, run, cluster } = clientCluster();
    await run(kafka.admin().createTopics({ topics: [{ topic: "t", numPartitions: 1 }] }));
    const consumer = kafka.consumer({ groupId: "g" });
    await run(consumer.connect());
    // Committed as the group's offset before: no OffsetCommit (an int64) can carry it.
    for (const [offset, shown] of [
      ["9223372036854775808", '"9223372036854775808" (a string)'],
      [2n ** 63n, "9223372036854775808n (a bigint)"],
    ] as const) {
      const error = await run(
        consumer.commitOffsets([{ topic: "t", partition: 0, offset: offset as never }]),
      ).catch((e: Error & { errorName?: string }) => e);
      expect(error).toMatchObject({
        errorName: "INVALID_REQUEST",
        message: `consumer.commitOffsets(offsets): Invalid offset, expected a long received ${shown}: an offset is at most 9223372036854775807 (Kafka's int64)`,
      });
    }
    expect(
      refused(() => consumer.seek({ topic: "t", partition: 0, offset: "9999999999999999999" })).message,
    ).toMatch(
      /^consumer.seek\(args\): Invalid offset, expected a long received "9999999999999999999" \(a string\): an offset is at most 9223372036854775807/,
    );
    expect(cluster.groups.fetchOffsets("g").size).toBe(0);
    await run(consumer.commitOffsets([{ topic: "t", partition: 0, offset: "9223372036854775807" }]));
    expect(cluster.groups.fetchOffsets("g").get("t:0")?.offset).toBe(2n ** 63n - 1n);
  });

  it("an offset given as a negative bigint is refused with what was wrong, not a TypeError of the message", async () => {
    const { kafka, run } = clientCluster();
    await run(kafka.admin().createTopics({ topics: [{ topic: "t", numPartitions: 1 }] }));
    const consumer = kafka.consumer({ groupId: "g" });
    await run(consumer.connect());
    // "TypeError: Do not know how to serialize a BigInt" before, thrown while writing the refusal.
    const seek = refused(() => consumer.seek({ topic: "t", partition: 0, offset: -5n as never }));
    expect(seek.errorName).toBe("INVALID_REQUEST");
    expect(seek.message).toMatch(
      /^consumer.seek\(args\): Offset must not be a negative number, got -5n \(a bigint\)/,
    );
    await expectRefused(
      run(consumer.commitOffsets([{ topic: "t", partition: 0, offset: -1n as never }])),
      "INVALID_REQUEST",
      /^consumer.commitOffsets\(offsets\): Offset must not be a negative number, got -1n \(a bigint\)/,
    );
    // A bigint inside a shown object, and an object that refers to itself, are shown too.
    const looped: Record<string, unknown> = { topic: "t" };
    looped.self = looped;
    expect(refused(() => consumer.pause([{ topic: "t", partitions: [0n] }] as never)).message).toMatch(
      /Array of valid partitions required for topic "t" instead of \["0n"\] \(a object\)/,
    );
    expect(refused(() => consumer.pause([{ topic: looped }] as never)).message).toMatch(
      /Invalid topic \[object Object\] \(a object\)/,
    );
  });

  it("pause() and resume() without topics pause and resume nothing, as kafkajs's (its default is [])", async () => {
    const { kafka, run } = clientCluster();
    await run(kafka.admin().createTopics({ topics: [{ topic: "t", numPartitions: 1 }] }));
    const consumer = kafka.consumer({ groupId: "g" });
    await run(consumer.connect());
    consumer.pause([{ topic: "t" }]);
    // Refused before: "pass an array such as [{ topic: "orders", partitions: [0] }], got undefined".
    (consumer.pause as () => void)();
    expect(consumer.paused()).toEqual([{ topic: "t", partitions: [0] }]);
    (consumer.resume as () => void)();
    expect(consumer.paused()).toEqual([{ topic: "t", partitions: [0] }]);
    consumer.resume([{ topic: "t" }]);
    expect(consumer.paused()).toEqual([]);
  });

  it("commitOffsets after disconnect is refused, not stored as a standalone commit under the group", async () => {
    const { kafka, run, cluster } = clientCluster();
    await run(kafka.admin().createTopics({ topics: [{ topic: "t", numPartitions: 1 }] }));
    const consumer = kafka.consumer({ groupId: "g" });
    await run(consumer.connect());
    await run(consumer.subscribe({ topic: "t" }));
    await run(consumer.poll());
    await run(consumer.disconnect());
    await expectRefused(
      run(consumer.commitOffsets([{ topic: "t", partition: 0, offset: "7" }])),
      "INVALID_REQUEST",
      /the consumer is disconnected; call connect\(\) first/,
    );
    expect(cluster.groups.fetchOffsets("g").get("t:0")).toBeUndefined();
  });
});
