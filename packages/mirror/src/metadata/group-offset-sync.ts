import { type KafkaCluster, offsetKey } from "@cluster-mirror/cluster";
import type { NameFilter } from "../admin/mirror-config";
import type { SourceGroupOffsets } from "../ports";
import { clampOffset, epochBefore, leaderLog } from "./destination-logs";

/** What one group-offset sync pass did. */
export interface GroupOffsetSyncResult {
  /** Groups whose offsets were written, with the number of partitions each. */
  synced: { groupId: string; partitions: number }[];
  /** Groups skipped because they have active members on the destination. */
  skippedActive: string[];
  /** Groups whose write failed (counted as ConsumerGroupOffsetSyncError). */
  errors: { groupId: string; error: unknown }[];
}

/**
 * Copies committed offsets of the included groups for the mirrored topics (spec §7):
 * - only partitions of `topics` (the mirror's ACTIVE topics: paused ones are not synced);
 * - each offset is clamped to `[destination log start, destination high watermark]` of the leader replica,
 *   so a consumer that fails over never points past the mirrored data or before its start: as MirrorMaker 2
 *   syncs an offset only once the records below it are replicated, records only the leader holds (above the
 *   high watermark) do not count, an election can lose them;
 * - the source's leader epoch and the commit's metadata are kept (the epoch when the offset is unchanged); a clamped offset takes the epoch the
 *   destination's leader-epoch cache gives it (`epochBefore`; -1 for an empty log);
 * - groups with active members on the destination are skipped (their own commits win);
 * - unchanged offsets are not written again.
 * Writes go through the destination's GroupCoordinator (AlterConsumerGroupOffsets).
 */
export function syncGroupOffsets(
  destination: KafkaCluster,
  groups: readonly SourceGroupOffsets[],
  filter: NameFilter,
  topics: ReadonlySet<string>,
): GroupOffsetSyncResult {
  const result: GroupOffsetSyncResult = { synced: [], skippedActive: [], errors: [] };
  for (const group of groups) {
    if (!filter.matches(group.groupId)) continue;
    const offsets = group.offsets.filter((o) => topics.has(o.topic));
    if (offsets.length === 0) continue;
    if (destination.groups.describeGroup(group.groupId).state === "Stable") {
      result.skippedActive.push(group.groupId);
      continue;
    }
    const current = destination.groups.fetchOffsets(group.groupId);
    const writes: {
      topic: string;
      partition: number;
      offset: bigint;
      leaderEpoch: number;
      metadata: string;
    }[] = [];
    for (const o of offsets) {
      const log = leaderLog(destination, o.topic, o.partition);
      if (!log) continue;
      const offset = clampOffset(o.offset, log.logStartOffset, log.highWatermark);
      const leaderEpoch = offset === o.offset ? o.leaderEpoch : epochBefore(log, offset);
      const existing = current.get(offsetKey(o));
      // The commit's metadata goes with it (Kafka Streams keeps each partition's stream time there).
      const metadata = o.metadata;
      if (
        existing &&
        existing.offset === offset &&
        existing.leaderEpoch === leaderEpoch &&
        existing.metadata === metadata
      )
        continue;
      writes.push({ topic: o.topic, partition: o.partition, offset, leaderEpoch, metadata });
    }
    if (writes.length === 0) continue;
    try {
      destination.groups.alterOffsets(group.groupId, writes);
      result.synced.push({ groupId: group.groupId, partitions: writes.length });
    } catch (error) {
      result.errors.push({ groupId: group.groupId, error });
    }
  }
  return result;
}
