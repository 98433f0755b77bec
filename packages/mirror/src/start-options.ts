import { ClusterError, closestName, shownValue } from "@cluster-mirror/cluster";
import { DEFAULT_RETRY_BACKOFF } from "@cluster-mirror/machines";
import {
  DEFAULT_MIRROR_STATE_PARTITIONS,
  MAX_MIRROR_STATE_PARTITIONS,
} from "./destination/embedded-state-log";

/** The options `ClusterMirroring.start` knows (`ClusterMirroringOptions`). */
const START_OPTIONS = [
  "cluster",
  "sources",
  "random",
  "numStatePartitions",
  "lingerMs",
  "retry",
  "fetch",
  "warn",
  "coordinatorLoadTimeoutMs",
  "defaultApiTimeoutMs",
  "onTransition",
] as const;

/** `retry`'s fields: every one is needed (there is no partial merge with the defaults). */
const RETRY_FIELDS = ["baseMs", "capMs", "maxAttempts"] as const;

/** `fetch`'s fields, each optional, with the least value each takes (bytes at least 1, waits 0). */
const FETCH_FIELDS: Readonly<Record<string, number | "boolean">> = {
  maxBytes: 1,
  partitionMaxBytes: 1,
  backoffMs: 0,
  backoffMaxMs: 0,
  fetchWaitMaxMs: 0,
  followLogStart: "boolean",
};

const invalid = (what: string) => new ClusterError("INVALID_REQUEST", `ClusterMirroring.start: ${what}`);

/**
 * What `ClusterMirroring.start` needs before anything starts: a cluster, a source connector (without one the
 * first `createMirror` fails as if the source were unreachable), randomness for the retries' jitter, and a
 * `__mirror_state` size it can create (a typo such as 100000 kept the event loop busy for minutes). Every
 * other option, when given, must be what its type says: a misspelled option (`retries`) was ignored without
 * a word, and a `retry` without `capMs` or `maxAttempts` gave a backoff of NaN (the
 * event loop's timers run it within a millisecond) and a budget never used up.
 */
export function checkStartOptions(options: Readonly<Record<string, unknown>> | undefined): void {
  if (!options?.cluster) throw invalid("options.cluster is missing: pass the destination KafkaCluster");
  if (typeof (options.cluster as { runningBrokers?: unknown }).runningBrokers !== "function") {
    throw invalid(
      `options.cluster must be a KafkaCluster (from KafkaCluster.start), got ${describe(options.cluster)}`,
    );
  }
  if (typeof (options.sources as { connect?: unknown } | undefined)?.connect !== "function") {
    throw invalid(
      "options.sources is missing: pass a SourceConnector, e.g. new EmbeddedSourceConnector(registry) for embedded sources or new KafkajsSourceConnector() (@cluster-mirror/kafkajs) for Apache Kafka",
    );
  }
  if (typeof (options.random as { next?: unknown } | undefined)?.next !== "function") {
    throw invalid("options.random is missing: pass new SeededRandom(<seed>) (@cluster-mirror/cluster)");
  }
  refuseUnknownKeys("options", options, START_OPTIONS);
  const n = options.numStatePartitions;
  if (
    n !== undefined &&
    (!Number.isSafeInteger(n) || (n as number) < 1 || (n as number) > MAX_MIRROR_STATE_PARTITIONS)
  ) {
    throw invalid(
      `numStatePartitions (mirror.topic.num.partitions) must be a whole number from 1 to ${MAX_MIRROR_STATE_PARTITIONS}, got ${shownValue(n)}; leave it out for the default ${DEFAULT_MIRROR_STATE_PARTITIONS}`,
    );
  }
  wholeNumber("coordinatorLoadTimeoutMs", options.coordinatorLoadTimeoutMs, 0);
  wholeNumber("defaultApiTimeoutMs", options.defaultApiTimeoutMs, 1);
  for (const name of ["warn", "onTransition"] as const) {
    const value = options[name];
    if (value !== undefined && typeof value !== "function") {
      throw invalid(`options.${name} must be a function, got ${describe(value)}`);
    }
  }
  if (options.retry !== undefined) checkRetry(options.retry);
  if (options.fetch !== undefined) checkFetch(options.fetch);
}

function checkRetry(retry: unknown): void {
  const d = DEFAULT_RETRY_BACKOFF;
  const defaults = `{ baseMs: ${d.baseMs}, capMs: ${d.capMs}, maxAttempts: ${d.maxAttempts} } are the defaults`;
  if (!isObject(retry)) {
    throw invalid(
      `options.retry must be { baseMs, capMs, maxAttempts }, got ${shownValue(retry)}; ${defaults}`,
    );
  }
  refuseUnknownKeys("options.retry", retry, RETRY_FIELDS);
  const missing = RETRY_FIELDS.filter((k) => retry[k] === undefined);
  if (missing.length > 0) {
    throw invalid(
      `options.retry needs all of baseMs, capMs and maxAttempts; ${missing.join(", ")} ${missing.length === 1 ? "is" : "are"} missing (${defaults})`,
    );
  }
  wholeNumber("retry.baseMs", retry.baseMs, 0);
  wholeNumber("retry.capMs", retry.capMs, 0);
  wholeNumber("retry.maxAttempts", retry.maxAttempts, 0, "; 0 retries without end");
}

function checkFetch(fetch: unknown): void {
  if (!isObject(fetch)) {
    throw invalid(
      `options.fetch must be an object such as { backoffMs: 1000 }, got ${shownValue(fetch)}; leave it out for the defaults`,
    );
  }
  refuseUnknownKeys("options.fetch", fetch, Object.keys(FETCH_FIELDS));
  for (const [key, least] of Object.entries(FETCH_FIELDS)) {
    const value = fetch[key];
    if (least === "boolean") {
      if (value !== undefined && typeof value !== "boolean") {
        throw invalid(`options.fetch.${key} must be true or false, got ${shownValue(value)}`);
      }
    } else {
      wholeNumber(`fetch.${key}`, value, least);
    }
  }
}

/** An optional whole number of at least `least`. */
function wholeNumber(option: string, value: unknown, least: number, note = ""): void {
  if (value === undefined || (Number.isSafeInteger(value) && (value as number) >= least)) return;
  throw invalid(
    `options.${option} must be a whole number, ${least} or more${note}; got ${shownValue(value)}. Leave it out for the default.`,
  );
}

/** A key the option object does not know: a typo, refused with the closest known one. */
function refuseUnknownKeys(
  where: string,
  value: Readonly<Record<string, unknown>>,
  known: readonly string[],
): void {
  for (const key of Object.keys(value)) {
    if (known.includes(key)) continue;
    const close = closestName(key, known);
    throw invalid(
      `${where} has no '${key}'${close === undefined ? "." : `; did you mean '${close}'?`} Known: ${known.join(", ")}.`,
    );
  }
}

function isObject(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** What was passed instead of an object of a class: its class name, or its value. */
function describe(value: unknown): string {
  const name = (value as { constructor?: { name?: string } } | null)?.constructor?.name;
  return typeof value === "object" && value !== null
    ? `an object of class ${name ?? "Object"}`
    : shownValue(value);
}
