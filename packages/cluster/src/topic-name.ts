import { ClusterError } from "./errors";

const TOPIC_NAME = /^[a-zA-Z0-9._-]+$/;
const MAX_TOPIC_NAME_LENGTH = 249;

/**
 * Kafka's `Topic.validate`: 1 to 249 of [a-zA-Z0-9._-], not "." or "..". An illegal name is
 * INVALID_TOPIC_EXCEPTION wherever it is given (CreateTopics, and a produce's metadata request).
 */
export function validateTopicName(name: string): void {
  if (
    name === "" ||
    name === "." ||
    name === ".." ||
    name.length > MAX_TOPIC_NAME_LENGTH ||
    !TOPIC_NAME.test(name)
  ) {
    throw new ClusterError(
      "INVALID_TOPIC_EXCEPTION",
      `topic name '${name}' is illegal: use 1 to ${MAX_TOPIC_NAME_LENGTH} of [a-zA-Z0-9._-], not '.' or '..'`,
    );
  }
}
