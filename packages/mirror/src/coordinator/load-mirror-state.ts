import {
  CorruptRecordError,
  decodeMirrorStateRecord,
  type MirrorPartitionStateValue,
  UnsupportedVersionError,
} from "@cluster-mirror/protocol";
import type { StateLogRecord } from "../ports";
import { partitionKeyId } from "./mirror-state-partition";

/** What replaying `__mirror_state` leaves for one mirror partition: its last state and its last LME. */
export interface LoadedPartitionState {
  readonly mirrorName: string;
  readonly topicId: string;
  readonly partition: number;
  /** The last `MirrorPartitionState` value, or null (never written, or tombstoned). */
  state: MirrorPartitionStateValue | null;
  /** The last `LastMirrorEpochs` value, -1 when absent or tombstoned. */
  lastMirrorEpoch: number;
}

/**
 * Folds a `__mirror_state` partition, read from its log start, into the last records per key (Kafka's
 * `CoordinatorShard.replay`): a tombstone deletes, a value replaces. Each value is complete, so the full
 * history and the compacted log fold to the same map. A record of an unknown type or version is skipped
 * and reported to `warn`; a corrupt record throws `CorruptRecordError` naming its offset (fail the load).
 */
export function foldMirrorState(
  records: Iterable<StateLogRecord>,
  warn: (message: string) => void,
): Map<string, LoadedPartitionState> {
  const out = new Map<string, LoadedPartitionState>();
  for (const r of records) {
    let decoded: ReturnType<typeof decodeMirrorStateRecord>;
    try {
      decoded = decodeMirrorStateRecord(r.key, r.value);
    } catch (error) {
      if (error instanceof UnsupportedVersionError) {
        warn(`__mirror_state offset ${r.offset} skipped: ${error.message} (written by a newer broker?)`);
        continue;
      }
      const message = error instanceof Error ? error.message : String(error);
      throw new CorruptRecordError(
        `__mirror_state offset ${r.offset} is corrupt (${message}); the coordinator cannot load this partition. Restore the partition from a replica or delete the record's key with a tombstone`,
        { cause: error },
      );
    }
    const k = decoded.key;
    const id = partitionKeyId({ mirror: k.mirrorName, topicId: k.topicId, partition: k.partition });
    let entry = out.get(id);
    if (entry === undefined) {
      if (decoded.value === null) continue;
      entry = {
        mirrorName: k.mirrorName,
        topicId: k.topicId,
        partition: k.partition,
        state: null,
        lastMirrorEpoch: -1,
      };
      out.set(id, entry);
    }
    if (decoded.key.kind === "MirrorPartitionState")
      entry.state = decoded.value as MirrorPartitionStateValue | null;
    else
      entry.lastMirrorEpoch =
        decoded.value === null ? -1 : (decoded.value as { lastMirrorEpoch: number }).lastMirrorEpoch;
    if (entry.state === null && entry.lastMirrorEpoch < 0) out.delete(id);
  }
  return out;
}
