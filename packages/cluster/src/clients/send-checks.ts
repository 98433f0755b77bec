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
      `Invalid messages array ${shownValue(messages)} for topic "${topic}": messages must be an array, such as [{ value: "..." }]`,
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
  if (message.value === undefined) {
    // kafkajs refuses it before sending ("Invalid message without value"): a tombstone is written as
    // `value: null`, so a forgotten value is not a delete of the key.
    return `has no value (Invalid message without value): give the value to write, such as { key: "k", value: "v" }, or value: null for a tombstone (a delete of the key in a compacted topic)`;
  }
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

/**
 * What `send(record)` is given (a producer's or a transaction's), before its topic and messages: `send()`
 * failed with "Cannot read properties of undefined (reading 'topic')".
 */
export function checkSendRecord(record: unknown, where: string): void {
  if (typeof record !== "object" || record === null || Array.isArray(record)) {
    throw new ClusterError(
      "INVALID_REQUEST",
      `${where}: the record must be an object such as { topic: "orders", messages: [{ value: "..." }] }, got ${shownValue(record)}`,
    );
  }
}

/**
 * What `sendBatch(batch)` is given: as kafkajs, no `topicMessages` sends nothing; one that is not an array
 * failed with "topics is not iterable".
 */
export function checkSendBatch(batch: unknown, where: string): void {
  const topicMessages = (batch as { topicMessages?: unknown } | null | undefined)?.topicMessages;
  if (
    typeof batch !== "object" ||
    batch === null ||
    (topicMessages !== undefined && !Array.isArray(topicMessages))
  ) {
    throw new ClusterError(
      "INVALID_REQUEST",
      `${where}: Invalid topicMessages ${shownValue(topicMessages ?? batch)}: pass { topicMessages: [{ topic: "orders", messages: [{ value: "..." }] }] }`,
    );
  }
  (topicMessages ?? []).forEach((entry: unknown, index: number) => {
    if (typeof entry !== "object" || entry === null) {
      throw new ClusterError(
        "INVALID_REQUEST",
        `${where}: topicMessages[${index}] must be an object such as { topic: "orders", messages: [{ value: "..." }] }, got ${shownValue(entry)}`,
      );
    }
  });
}

/**
 * The `acks` and `timeout` of a send, before anything is written: `timeout: "30s"` became the delay of the
 * acks=all wait on the scheduler (NaN on a ManualScheduler's clock, at once on the event loop's setTimeout),
 * and `acks: "1"` was refused as "got 1", which reads as the number it allows.
 */
export function checkSendOptions(options: { acks?: unknown; timeout?: unknown }, where: string): void {
  const { acks, timeout } = options;
  if (acks !== undefined && acks !== -1 && acks !== 0 && acks !== 1) {
    throw new ClusterError(
      "INVALID_REQUIRED_ACKS",
      `${where}: acks must be the number -1 (all in-sync replicas, the default), 1 (the leader) or 0 (none), got ${shownValue(acks)}`,
    );
  }
  if (timeout !== undefined && !(Number.isSafeInteger(timeout) && (timeout as number) >= 0)) {
    throw new ClusterError(
      "INVALID_REQUEST",
      `${where}: timeout (how long an acks=all send waits for the in-sync replicas) must be a whole number of milliseconds, 0 or more, such as 30000; got ${shownValue(timeout)}`,
    );
  }
}
