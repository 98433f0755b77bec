import type { Clock } from "./clock";

/**
 * Kafka's cleanup.policy, as far as the log is concerned: `compact,delete` compacts and also deletes old
 * segments by retention.ms / retention.bytes, as Kafka does for that combination. `""` is the empty list,
 * which Kafka 3.9 accepts (ConfigDef parses a blank LIST as empty, and ValidList checks each element) and
 * reads as neither: the log is not compacted and keeps its segments whatever retention.ms and
 * retention.bytes say (LogConfig's `compact` and `delete` are both false).
 */
export type CleanupPolicy = "delete" | "compact" | "compact,delete" | "";

/** Whether the log is compacted (`compact` or `compact,delete`). */
export function compacts(policy: CleanupPolicy): boolean {
  return policy === "compact" || policy === "compact,delete";
}

/** Whether time and size retention delete the log's old segments (`delete` or `compact,delete`). */
export function deletesByRetention(policy: CleanupPolicy): boolean {
  return policy === "delete" || policy === "compact,delete";
}

/** The policy a topic's `cleanup.policy` value (a comma-separated list) names; default `delete`. */
export function parseCleanupPolicy(value: string | undefined): CleanupPolicy {
  if (value !== undefined && value.trim() === "") return "";
  const parts = new Set((value ?? "delete").split(",").map((p) => p.trim()));
  if (parts.has("compact")) return parts.has("delete") ? "compact,delete" : "compact";
  return "delete";
}

/** Kafka's producer.id.expiration.ms default: 1 day. */
export const DEFAULT_PRODUCER_ID_EXPIRATION_MS = 24 * 60 * 60 * 1000;

/** Per-log configuration, with Kafka's topic config names in the TSDoc. */
export interface LogConfig {
  /** The only source of time (segment rolling, delete horizons). */
  clock: Clock;
  /** segment.bytes: roll when an append would make the active segment larger. Default 1 GiB. */
  segmentBytes?: number;
  /** segment.ms: roll when the active segment is older than this. Default 7 days. */
  segmentMs?: number;
  /** cleanup.policy: `compact()` only works on compacted logs. Default "delete". */
  cleanupPolicy?: CleanupPolicy;
  /** delete.retention.ms: how long tombstones survive after compaction first sees them. Default 1 day. */
  deleteRetentionMs?: number;
  /**
   * min.compaction.lag.ms: compaction stops at the first segment holding a record younger than this (by
   * its timestamp), so every record stays readable, uncompacted, at least this long. Default 0.
   */
  minCompactionLagMs?: number;
  /**
   * Kafka's broker config producer.id.expiration.ms: a producer with no open transaction whose last batch's
   * timestamp is this long ago is forgotten (`removeExpiredProducers`, and when stored producer state is
   * loaded). Default 1 day.
   */
  producerIdExpirationMs?: number;
}

/** `LogConfig` with every default filled in. */
export interface ResolvedLogConfig {
  clock: Clock;
  segmentBytes: number;
  segmentMs: number;
  cleanupPolicy: CleanupPolicy;
  deleteRetentionMs: number;
  minCompactionLagMs: number;
  producerIdExpirationMs: number;
}

/** Fills in Kafka's defaults. */
export function resolveLogConfig(config: LogConfig): ResolvedLogConfig {
  return {
    clock: config.clock,
    segmentBytes: config.segmentBytes ?? 1024 * 1024 * 1024,
    segmentMs: config.segmentMs ?? 7 * 24 * 60 * 60 * 1000,
    cleanupPolicy: config.cleanupPolicy ?? "delete",
    deleteRetentionMs: config.deleteRetentionMs ?? 24 * 60 * 60 * 1000,
    minCompactionLagMs: config.minCompactionLagMs ?? 0,
    producerIdExpirationMs: config.producerIdExpirationMs ?? DEFAULT_PRODUCER_ID_EXPIRATION_MS,
  };
}
