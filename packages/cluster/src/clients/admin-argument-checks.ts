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
