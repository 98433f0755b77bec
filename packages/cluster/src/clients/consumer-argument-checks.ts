import { ClusterError } from "../errors";
import { shownValue } from "../shown-value";

const refuse = (where: string, what: string) => new ClusterError("INVALID_REQUEST", `${where}: ${what}`);

/**
 * What `consumer.subscribe(args)` is given, as kafkajs checks it (its messages, then what to pass). Taken
 * before: `{ topics: "orders" }` subscribed to the topics "o", "r", "d", "e", "s", and `{ topic: 5 }` crashed
 * the next poll with "s.topic.test is not a function".
 */
export function checkSubscribeArguments(args: unknown): void {
  const where = "consumer.subscribe(args)";
  const { topic, topics } = (args ?? {}) as { topic?: unknown; topics?: unknown };
  if (typeof args !== "object" || args === null || (!topic && !topics)) {
    throw refuse(
      where,
      `Missing required argument "topics": pass { topics: ["orders"] } (names, or RegExps such as /orders-.*/), got ${shownValue(args)}`,
    );
  }
  if (topics !== undefined && topics !== null && !Array.isArray(topics)) {
    throw refuse(
      where,
      `Argument "topics" must be an array, such as { topics: [${shownValue(topics).replace(/ \(a string\)$/, "")}] }; got ${shownValue(topics)}`,
    );
  }
  const named = [...((topics as unknown[] | undefined | null) ?? []), ...(topic ? [topic] : [])];
  for (const subscription of named) {
    if ((typeof subscription !== "string" || subscription === "") && !(subscription instanceof RegExp)) {
      throw refuse(
        where,
        `Invalid topic ${shownValue(subscription)}, the topic name has to be a String or a RegExp, such as "orders" or /orders-.*/`,
      );
    }
  }
}

/**
 * What `consumer.run(config)` is given: `eachMessage: "x"` started a loop that crashed at the first message
 * ("config.eachMessage is not a function"), after the group had assigned it partitions.
 */
export function checkRunConfig(config: unknown): void {
  const where = "consumer.run(config)";
  if (typeof config !== "object" || config === null) {
    throw refuse(
      where,
      `config must be an object such as { eachMessage: async ({ message }) => {} }, got ${shownValue(config)}`,
    );
  }
  const { eachMessage, eachBatch } = config as { eachMessage?: unknown; eachBatch?: unknown };
  for (const [name, handler] of [
    ["eachMessage", eachMessage],
    ["eachBatch", eachBatch],
  ] as const) {
    if (handler !== undefined && handler !== null && typeof handler !== "function") {
      throw refuse(
        where,
        `${name} must be a function, such as async ({ message }) => {}; got ${shownValue(handler)}`,
      );
    }
  }
  if (!eachMessage && !eachBatch) throw refuse(where, "run needs eachMessage or eachBatch");
}

/**
 * What `consumer.pause(topics)` and `resume(topics)` are given, as kafkajs checks it: `pause({ topic })` (not
 * in an array) failed with "topics.flatMap is not a function".
 */
export function checkTopicPartitionsArgument(topics: unknown, where: string): void {
  if (!Array.isArray(topics)) {
    throw refuse(
      where,
      `pass an array such as [{ topic: "orders", partitions: [0] }], got ${shownValue(topics)}`,
    );
  }
  for (const entry of topics as unknown[]) {
    const { topic, partitions } = (entry ?? {}) as { topic?: unknown; partitions?: unknown };
    if (typeof topic !== "string" || topic === "") {
      throw refuse(
        where,
        `Invalid topic ${shownValue(topic ?? entry)}: each entry names its topic, as { topic: "orders" }`,
      );
    }
    if (
      partitions !== undefined &&
      (!Array.isArray(partitions) || partitions.some((p) => !Number.isSafeInteger(p) || p < 0))
    ) {
      throw refuse(
        where,
        `Array of valid partitions required for topic "${topic}" instead of ${shownValue(partitions)}: pass partitions: [0, 1], or leave it out for every partition`,
      );
    }
  }
}
