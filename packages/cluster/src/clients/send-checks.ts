import { ClusterError } from "../errors";
import { shownValue } from "../shown-value";
import { validateTopicName } from "../topic-name";

/**
 * One topic's part of a `send`, `sendBatch` or transaction send, checked before anything is written (the
 * whole send is refused): the topic as kafkajs checks it ("Invalid topic") and Kafka names an illegal one
 * (INVALID_TOPIC_EXCEPTION), then each message's fields as Kafka's `ProducerRecord` refuses them.
 */
export function checkTopicMessages(topic: unknown, messages: unknown): void {
  if (typeof topic !== "string" || topic === "") {
    throw new ClusterError(
      "INVALID_TOPIC_EXCEPTION",
      `Invalid topic ${shownValue(topic)}: a send names its topic, as { topic: "orders", messages: [{ value: "..." }] }`,
    );
  }
  validateTopicName(topic);
  if (!Array.isArray(messages)) {
    throw new ClusterError(
      "INVALID_RECORD",
      `messages for topic '${topic}' must be an array, such as [{ value: "..." }]; got ${typeof messages}`,
    );
  }
  messages.forEach((m: unknown, i) => {
    const problem = messageProblem(m);
    if (problem !== undefined) {
      throw new ClusterError("INVALID_RECORD", `message ${i} for topic '${topic}' ${problem}`);
    }
  });
}

const bytesLike = (v: unknown) =>
  v === undefined || v === null || typeof v === "string" || Buffer.isBuffer(v);

/** What is wrong with one message, said with what to pass instead; undefined when nothing is. */
function messageProblem(m: unknown): string | undefined {
  if (typeof m !== "object" || m === null) {
    return "is not an object: a key and value must be a Buffer, a string or null (convert a number with String(n) or JSON.stringify)";
  }
  const message = m as {
    key?: unknown;
    value?: unknown;
    partition?: unknown;
    headers?: unknown;
    timestamp?: unknown;
  };
  for (const field of ["value", "key"] as const) {
    if (!bytesLike(message[field])) {
      return `has a ${field} of type ${typeof message[field]}: a key and value must be a Buffer, a string or null (convert a number with String(n) or JSON.stringify)`;
    }
  }
  const { partition, headers, timestamp } = message;
  if (
    partition !== undefined &&
    partition !== null &&
    !(Number.isSafeInteger(partition) && (partition as number) >= 0)
  ) {
    // Kafka's ProducerRecord: "Partition number should always be non-negative or null."
    return `has partition ${shownValue(partition)}: a partition is a whole number, 0 or more (or leave it out for the partitioner to choose)`;
  }
  if (headers !== undefined && headers !== null) {
    if (typeof headers !== "object" || Array.isArray(headers) || Buffer.isBuffer(headers)) {
      return `has headers ${shownValue(headers)}: headers are an object of name to value, such as { "trace-id": "abc" }`;
    }
    for (const [name, value] of Object.entries(headers)) {
      const values = Array.isArray(value) ? value : [value];
      // null is a header without a value: Kafka's RecordHeader allows it (written as length -1), and a
      // consumer gives it back so, so a message consumed can be sent on as it is.
      if (
        value === undefined ||
        values.every((v) => v === null || typeof v === "string" || Buffer.isBuffer(v))
      )
        continue;
      return `has header '${name}' of value ${shownValue(value)}: a header value must be a Buffer, a string or null, or an array of them (convert a number with String(n))`;
    }
  }
  if (timestamp !== undefined && timestamp !== null && !isTimestamp(timestamp)) {
    // Kafka's ProducerRecord: "Timestamp should always be non-negative or null."
    return `has timestamp ${shownValue(timestamp)}: a timestamp is milliseconds since the epoch, 0 or more, such as "${1_700_000_000_000}" (or leave it out for the send time)`;
  }
  return undefined;
}

function isTimestamp(value: unknown): boolean {
  if (typeof value === "number") return Number.isSafeInteger(value) && value >= 0;
  return typeof value === "string" && /^\d{1,16}$/.test(value);
}
