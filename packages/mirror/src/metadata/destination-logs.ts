import type { KafkaCluster } from "@cluster-mirror/cluster";
import type { EpochEntry } from "@cluster-mirror/log";

/** What the metadata manager and `describe` read of a destination partition's leader log. */
export interface LeaderLogView {
  logStartOffset: bigint;
  logEndOffset: bigint;
  /** What the ISR holds (every replica copied it): what a consumer may read, and what survives an election. */
  highWatermark: bigint;
  epochEntries(): EpochEntry[];
}

/** The log of a destination partition's current leader replica, or undefined when it has no running leader. */
export function leaderLog(
  cluster: KafkaCluster,
  topic: string,
  partition: number,
): LeaderLogView | undefined {
  const meta = cluster.controller.image.partition(topic, partition);
  if (!meta || meta.leader < 0) return undefined;
  return cluster.broker(meta.leader)?.replica(topic, partition)?.log;
}

/**
 * The leader epoch of the record just before `offset` (what a consumer commits with `offset`), from the
 * leader-epoch cache. At the log start (that record was deleted) it is the epoch of the record at `offset`;
 * -1 when neither is in the log (an empty log: commit without an epoch, so no validation).
 */
export function epochBefore(log: LeaderLogView, offset: bigint): number {
  const last = offset - 1n < log.logStartOffset ? offset : offset - 1n;
  if (last < log.logStartOffset || last >= log.logEndOffset) return -1;
  let epoch = -1;
  for (const entry of log.epochEntries()) {
    if (entry.startOffset <= last) epoch = entry.epoch;
    else break;
  }
  return epoch;
}

/** `offset` clamped to `[start, end]`. */
export function clampOffset(offset: bigint, start: bigint, end: bigint): bigint {
  return offset < start ? start : offset > end ? end : offset;
}
