import { ClusterError } from "../errors";
import { shownValue } from "../shown-value";

/**
 * What `admin.createTopics(args)` is given, checked as kafkajs's admin does before it sends anything (its
 * messages, then what to pass): `createTopics()`, `configEntries` as an object or a number as a config value
 * failed with a bare TypeError ("Cannot read properties of undefined", ".map is not a function").
 */
export function checkCreateTopicsArguments(args: unknown): void {
  const refuse = (what: string) => new ClusterError("INVALID_REQUEST", `admin.createTopics(args): ${what}`);
  const topics = (args as { topics?: unknown } | null | undefined)?.topics;
  if (!Array.isArray(topics)) {
    throw refuse(
      `Invalid topics array ${shownValue(topics)}: pass { topics: [{ topic: "name", numPartitions: 3 }] }`,
    );
  }
  topics.forEach((entry: unknown, index) => {
    const topic = (entry as { topic?: unknown } | null | undefined)?.topic;
    if (typeof topic !== "string") {
      throw refuse(
        `Invalid topics array, the topic names have to be a valid string: topics[${index}].topic is ${shownValue(topic)}`,
      );
    }
  });
  for (const { topic, configEntries } of topics as { topic: string; configEntries?: unknown }[]) {
    if (configEntries === undefined || configEntries === null) continue;
    if (!Array.isArray(configEntries)) {
      throw refuse(
        `Invalid configEntries for topic "${topic}", must be an array such as [{ name: "cleanup.policy", value: "compact" }], got ${shownValue(configEntries)}`,
      );
    }
    configEntries.forEach((entry: unknown, index) => {
      if (typeof entry !== "object" || entry === null) {
        throw refuse(
          `Invalid configEntries for topic "${topic}". Entry ${index} must be an object such as { name: "retention.ms", value: "60000" }, got ${shownValue(entry)}`,
        );
      }
      for (const property of ["name", "value"] as const) {
        const value = (entry as Record<string, unknown>)[property];
        if (typeof value !== "string") {
          throw refuse(
            `Invalid configEntries for topic "${topic}". Entry ${index} must have a valid "${property}" property (a string, as Kafka's configs are: "60000", not 60000), got ${shownValue(value)}`,
          );
        }
      }
    });
  }
}

/** What `admin.deleteTopics(args)` is given, as kafkajs's admin checks it ("names.map is not a function"). */
export function checkDeleteTopicsArguments(args: unknown): void {
  const refuse = (what: string) => new ClusterError("INVALID_REQUEST", `admin.deleteTopics(args): ${what}`);
  const topics = (args as { topics?: unknown } | null | undefined)?.topics;
  if (!Array.isArray(topics)) {
    throw refuse(`Invalid topics array ${shownValue(topics)}: pass { topics: ["name"] }`);
  }
  topics.forEach((topic: unknown, index) => {
    if (typeof topic !== "string") {
      throw refuse(
        `Invalid topics array, the names must be a valid string: topics[${index}] is ${shownValue(topic)}`,
      );
    }
  });
}

/**
 * What `admin.createPartitions(args)` is given, as kafkajs's admin checks it: `createPartitions()` failed
 * with "Cannot read properties of undefined (reading 'topicPartitions')".
 */
export function checkCreatePartitionsArguments(args: unknown): void {
  const refuse = (what: string) =>
    new ClusterError("INVALID_REQUEST", `admin.createPartitions(args): ${what}`);
  const topicPartitions = (args as { topicPartitions?: unknown } | null | undefined)?.topicPartitions;
  if (!Array.isArray(topicPartitions)) {
    throw refuse(
      `Invalid topic partitions array ${shownValue(topicPartitions)}: pass { topicPartitions: [{ topic: "orders", count: 6 }] } (count is the new total)`,
    );
  }
  if (topicPartitions.length === 0) {
    throw refuse('Empty topic partitions array: name a topic, as [{ topic: "orders", count: 6 }]');
  }
  topicPartitions.forEach((entry: unknown, index) => {
    const topic = (entry as { topic?: unknown } | null | undefined)?.topic;
    if (typeof topic !== "string") {
      throw refuse(
        `Invalid topic partitions array, the topic names have to be a valid string: topicPartitions[${index}].topic is ${shownValue(topic)}`,
      );
    }
  });
  const names = topicPartitions.map((entry: { topic: string }) => entry.topic);
  if (new Set(names).size < names.length) {
    throw refuse("Invalid topic partitions array, it cannot have multiple entries for the same topic");
  }
}

/**
 * What `admin.fetchTopicMetadata(args)` is given: `{ topics: "orders" }` failed with "topics.map is not a
 * function".
 */
export function checkFetchTopicMetadataArguments(args: unknown): void {
  const refuse = (what: string) =>
    new ClusterError("INVALID_REQUEST", `admin.fetchTopicMetadata(args): ${what}`);
  if (args === undefined) return;
  const topics = (args as { topics?: unknown } | null)?.topics;
  if (args === null || typeof args !== "object" || (topics !== undefined && !Array.isArray(topics))) {
    throw refuse(
      `Invalid topics array ${shownValue(topics ?? args)}: pass { topics: ["orders"] }, or nothing for every topic`,
    );
  }
  (topics ?? []).forEach((topic: unknown, index: number) => {
    if (typeof topic !== "string") {
      throw refuse(
        `Invalid topics array, the names must be a valid string: topics[${index}] is ${shownValue(topic)}`,
      );
    }
  });
}
