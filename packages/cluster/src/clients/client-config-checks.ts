import { closestName } from "../closest-name";
import { ClusterError } from "../errors";
import { shownValue } from "../shown-value";

/** The keys of `EmbeddedKafkaConfig`. */
const CONFIG_KEYS = ["clientId", "principal", "host", "retry", "random", "scheduler"] as const;

/** Keys of kafkajs's `KafkaConfig` about reaching brokers over the network: an in-process client has none. */
const KAFKAJS_NETWORK_KEYS = new Set([
  "brokers",
  "ssl",
  "sasl",
  "connectionTimeout",
  "authenticationTimeout",
  "reauthenticationThreshold",
  "requestTimeout",
  "enforceRequestTimeout",
  "socketFactory",
]);

/** Keys of kafkajs's `KafkaConfig` about its logger: an in-process client writes no log. */
const KAFKAJS_LOGGING_KEYS = new Set(["logLevel", "logCreator"]);

/** The keys of kafkajs's `RetryOptions` (`retry` of the client, producer, consumer and admin). */
const RETRY_KEYS = ["maxRetryTime", "initialRetryTime", "factor", "multiplier", "retries"] as const;

const invalid = (what: string) =>
  new ClusterError("INVALID_REQUEST", `new EmbeddedKafka(cluster, config): ${what}`);

/**
 * What `new EmbeddedKafka(cluster, config)` is given, checked before any client is made: a kafkajs habit
 * such as `new EmbeddedKafka({ clientId, brokers })` (no cluster) failed at the first request with
 * "this.client.cluster.ensureOpen is not a function", and a misspelled setting (`clientID`) or a retry
 * that cannot work (`retries: -1`, a string) was taken without a word.
 */
export function checkEmbeddedKafkaArguments(cluster: unknown, config: unknown): void {
  if (typeof (cluster as { ensureOpen?: unknown } | null | undefined)?.ensureOpen !== "function") {
    const kafkajsConfig = isObject(cluster) && ("brokers" in cluster || "clientId" in cluster);
    throw invalid(
      `the first argument must be the KafkaCluster to talk to (from KafkaCluster.start), got ${shownArgument(cluster)}${
        kafkajsConfig
          ? "; the kafkajs settings go second: new EmbeddedKafka(cluster, { clientId }). It reaches its cluster in process (no brokers); for Apache Kafka over the network use kafkajs's new Kafka({ brokers })"
          : ""
      }`,
    );
  }
  if (config === undefined) return;
  if (!isObject(config))
    throw invalid(`config must be an object such as { clientId: "app" }, got ${shownValue(config)}`);
  for (const key of Object.keys(config)) {
    if ((CONFIG_KEYS as readonly string[]).includes(key)) continue;
    if (KAFKAJS_NETWORK_KEYS.has(key)) {
      throw invalid(
        `'${key}' is a kafkajs setting for network connections, which an EmbeddedKafka has none of (it reaches its cluster in process): leave it out`,
      );
    }
    if (KAFKAJS_LOGGING_KEYS.has(key)) {
      throw invalid(
        `'${key}' is a kafkajs logging setting, which an EmbeddedKafka has no use for (it writes no log; errors reach the caller as rejected promises and consumer.crash events): leave it out`,
      );
    }
    const close = closestName(key, CONFIG_KEYS);
    throw invalid(
      `config has no '${key}'${close === undefined ? "." : `; did you mean '${close}'?`} Known: ${CONFIG_KEYS.join(", ")}.`,
    );
  }
  for (const key of ["clientId", "principal", "host"] as const) {
    const value = config[key];
    if (value !== undefined && (typeof value !== "string" || value === "")) {
      throw invalid(`${key} must be a non-empty string, got ${shownValue(value)}`);
    }
  }
  if (config.retry !== undefined)
    checkRetryOptions(config.retry, "new EmbeddedKafka(cluster, config): retry");
}

/** The keys of `ProducerConfig`. */
const PRODUCER_KEYS = [
  "idempotent",
  "transactionalId",
  "maxInFlightRequests",
  "transactionTimeout",
  "retry",
  "createPartitioner",
] as const;

/** Keys of kafkajs's `ProducerConfig` an embedded producer has no use for. */
const KAFKAJS_PRODUCER_UNUSED_KEYS = new Set(["metadataMaxAge", "allowAutoTopicCreation"]);

/**
 * What `kafka.producer(config)` is given: a misspelled key (`idempotant: true`, `transactionalID`) made a
 * producer without the guarantee asked for (a plain producer whose retries may write a batch twice), without
 * a word.
 */
export function checkProducerConfig(config: unknown): void {
  const refuse = (what: string) => new ClusterError("INVALID_REQUEST", `kafka.producer(config): ${what}`);
  if (!isObject(config)) {
    throw refuse(`config must be an object such as { idempotent: true }, got ${shownValue(config)}`);
  }
  for (const key of Object.keys(config)) {
    if ((PRODUCER_KEYS as readonly string[]).includes(key)) continue;
    if (KAFKAJS_PRODUCER_UNUSED_KEYS.has(key)) {
      throw refuse(
        `'${key}' is a kafkajs producer setting an embedded producer has no use for (it reads the cluster's metadata in process, and the cluster does not auto-create topics): leave it out`,
      );
    }
    const close = closestName(key, PRODUCER_KEYS);
    throw refuse(
      `has no '${key}'${close === undefined ? "." : `; did you mean '${close}'?`} Known: ${PRODUCER_KEYS.join(", ")}.`,
    );
  }
  // Kafka's ProducerConfig defines transactional.id with ConfigDef.NonEmptyString: "" made a transactional
  // producer whose every transaction failed at the coordinator (kafkajs: "Must provide transactional id").
  const transactionalId = config.transactionalId;
  if (transactionalId !== undefined && (typeof transactionalId !== "string" || transactionalId === "")) {
    throw new ClusterError(
      "INVALID_CONFIG",
      `kafka.producer(config): Invalid value ${shownValue(transactionalId)} for configuration transactionalId (transactional.id): String must be non-empty. Give the producer's transactional id, such as { transactionalId: "orders-writer" }, or leave it out for a producer without transactions.`,
    );
  }
  const idempotent = config.idempotent;
  if (idempotent !== undefined && typeof idempotent !== "boolean") {
    throw refuse(`idempotent must be true or false, got ${shownValue(idempotent)}`);
  }
  if (config.retry !== undefined) checkRetryOptions(config.retry, "kafka.producer(config): retry");
}

/** The keys of `ConsumerConfig`. */
const CONSUMER_KEYS = [
  "groupId",
  "sessionTimeout",
  "readUncommitted",
  "isolation",
  "maxBytes",
  "maxBytesPerPartition",
  "maxWaitTimeInMs",
  "retry",
] as const;

/** Keys of kafkajs's `ConsumerConfig` an embedded consumer does not use. */
const KAFKAJS_CONSUMER_UNUSED_KEYS = new Set([
  "partitionAssigners",
  "metadataMaxAge",
  "rebalanceTimeout",
  "heartbeatInterval",
  "allowAutoTopicCreation",
  "maxInFlightRequests",
  "minBytes",
  "rackId",
]);

/**
 * What `kafka.consumer(config)` is given: without a config it failed with "Cannot read properties of
 * undefined (reading 'retry')", and a misspelled key (`groupID`, `sessiontimeout`) was taken without a word.
 */
export function checkConsumerConfig(config: unknown): void {
  const refuse = (what: string) => new ClusterError("INVALID_REQUEST", `kafka.consumer(config): ${what}`);
  if (!isObject(config)) {
    throw refuse(
      `Consumer groupId must be a non-empty string: pass a config such as { groupId: "my-group" }, got ${shownValue(config)}`,
    );
  }
  for (const key of Object.keys(config)) {
    if ((CONSUMER_KEYS as readonly string[]).includes(key)) continue;
    if ((RETRY_KEYS as readonly string[]).includes(key)) {
      throw refuse(
        `'${key}' is a retry setting: put it inside retry, as { groupId, retry: { ${key}: ... } }`,
      );
    }
    if (KAFKAJS_CONSUMER_UNUSED_KEYS.has(key)) {
      throw refuse(
        `'${key}' is a kafkajs consumer setting an embedded consumer does not use (it reaches its group coordinator and partitions in process, with the range assignor): leave it out`,
      );
    }
    const close = closestName(key, CONSUMER_KEYS);
    throw refuse(
      `has no '${key}'${close === undefined ? "." : `; did you mean '${close}'?`} Known: ${CONSUMER_KEYS.join(", ")}.`,
    );
  }
  if (typeof config.groupId !== "string" || config.groupId === "") {
    throw refuse(
      `Consumer groupId must be a non-empty string, such as { groupId: "my-group" }; got ${shownValue(config.groupId)}`,
    );
  }
  const isolation = config.isolation;
  if (isolation !== undefined && isolation !== "read_committed" && isolation !== "read_uncommitted") {
    throw refuse(`isolation must be "read_committed" or "read_uncommitted", got ${shownValue(isolation)}`);
  }
  if (config.retry !== undefined) checkRetryOptions(config.retry, "kafka.consumer(config): retry");
}

/** The keys of `AdminConfig`. */
const ADMIN_KEYS = ["retry"] as const;

/** What `kafka.admin(config)` is given: a misspelled key (`retries` beside `retry`) was taken without a word. */
export function checkAdminConfig(config: unknown): void {
  const refuse = (what: string) => new ClusterError("INVALID_REQUEST", `kafka.admin(config): ${what}`);
  if (!isObject(config)) {
    throw refuse(`config must be an object such as { retry: { retries: 5 } }, got ${shownValue(config)}`);
  }
  for (const key of Object.keys(config)) {
    if ((ADMIN_KEYS as readonly string[]).includes(key)) continue;
    if ((RETRY_KEYS as readonly string[]).includes(key)) {
      throw refuse(`'${key}' is a retry setting: put it inside retry, as { retry: { ${key}: ... } }`);
    }
    const close = closestName(key, ADMIN_KEYS);
    throw refuse(
      `has no '${key}'${close === undefined ? "." : `; did you mean '${close}'?`} Known: ${ADMIN_KEYS.join(", ")}.`,
    );
  }
  if (config.retry !== undefined) checkRetryOptions(config.retry, "kafka.admin(config): retry");
}

/**
 * kafkajs's `RetryOptions` as a caller gave them (the client's, or a producer's, consumer's or admin's own
 * `retry`): known keys only, each a number of the range kafkajs means. `retries: NaN` otherwise retried for
 * ever, and `retries: -1` never, without a word.
 */
export function checkRetryOptions(retry: unknown, where: string): void {
  const refuse = (what: string) => new ClusterError("INVALID_REQUEST", `${where}: ${what}`);
  if (!isObject(retry)) {
    throw refuse(`must be an object such as { retries: 5, initialRetryTime: 300 }, got ${shownValue(retry)}`);
  }
  for (const key of Object.keys(retry)) {
    if ((RETRY_KEYS as readonly string[]).includes(key)) continue;
    if (key === "restartOnFailure") {
      // In kafkajs's RetryOptions type, so a kafkajs-typed `retry` holds it; "has no" would be untrue.
      throw refuse(
        "restartOnFailure (kafkajs's restart of a consumer after a retriable crash) is not supported: an embedded consumer does not restart itself (consumer.crash says restart: false); leave it out and start the consumer again from a consumer.crash listener if needed",
      );
    }
    const close = closestName(key, RETRY_KEYS);
    throw refuse(
      `has no '${key}'${close === undefined ? "." : `; did you mean '${close}'?`} Known: ${RETRY_KEYS.join(", ")}.`,
    );
  }
  const whole = (key: "maxRetryTime" | "initialRetryTime" | "retries") => {
    const value = retry[key];
    if (value !== undefined && !(Number.isSafeInteger(value) && (value as number) >= 0)) {
      throw refuse(
        `${key} must be a whole number, 0 or more; got ${shownValue(value)}. Leave it out for kafkajs's default.`,
      );
    }
  };
  whole("maxRetryTime");
  whole("initialRetryTime");
  whole("retries");
  const factor = retry.factor;
  if (factor !== undefined && !(typeof factor === "number" && factor >= 0 && factor <= 1)) {
    throw refuse(
      `factor (the randomization of each wait) must be a number from 0 to 1; got ${shownValue(factor)}`,
    );
  }
  const multiplier = retry.multiplier;
  if (
    multiplier !== undefined &&
    !(typeof multiplier === "number" && Number.isFinite(multiplier) && multiplier >= 1)
  ) {
    throw refuse(
      `multiplier (the growth of the wait per retry) must be a number, 1 or more; got ${shownValue(multiplier)}`,
    );
  }
}

function isObject(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A value for an error message: a class instance by its class (its JSON may be huge, or hold bigints). */
function shownArgument(value: unknown): string {
  const name = (value as { constructor?: { name?: string } } | null)?.constructor?.name;
  return typeof value === "object" && value !== null && name !== undefined && name !== "Object"
    ? `an object of class ${name}`
    : shownValue(value);
}
