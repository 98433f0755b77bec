import {
  CorruptRecordError,
  decodeLastMirrorEpochsValue,
  decodeMirrorPartitionStateValue,
  decodeMirrorStateKey,
  type MirrorPartitionStateValue,
  type MirrorStateKey,
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
  // A partition's key repeats once per transition it went through: decode each distinct key's bytes once
  // (the same bytes decode to the same key) and look the rest up by their bytes. Keys that do not decode
  // are not kept, so each of their records is refused (or skipped) on its own, as before.
  const keys = new Map<string, DecodedKey>();
  for (const r of records) {
    // Not a Buffer: no cache, the decoder says what is wrong with it.
    const raw = Buffer.isBuffer(r.key) ? r.key.toString("latin1") : undefined;
    let k = raw === undefined ? undefined : keys.get(raw);
    try {
      if (k === undefined) {
        const key = decodeMirrorStateKey(r.key);
        const id = partitionKeyId({ mirror: key.mirrorName, topicId: key.topicId, partition: key.partition });
        k = { key, id };
        if (raw !== undefined) keys.set(raw, k);
      }
      const value = decodeValue(k.key, r.value);
      apply(out, k, value);
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
  }
  return out;
}

/** A decoded `__mirror_state` key and the id of the partition it belongs to. */
interface DecodedKey {
  readonly key: MirrorStateKey;
  readonly id: string;
}

/** The value of a record (null: a tombstone), decoded as its key's kind says. */
function decodeValue(key: MirrorStateKey, value: Buffer | null): MirrorPartitionStateValue | number | null {
  if (value === null) return null;
  return key.kind === "MirrorPartitionState"
    ? decodeMirrorPartitionStateValue(value)
    : decodeLastMirrorEpochsValue(value).lastMirrorEpoch;
}

/** Replays one record: a value replaces the partition's record of its kind, a tombstone deletes it. */
function apply(
  out: Map<string, LoadedPartitionState>,
  k: DecodedKey,
  value: MirrorPartitionStateValue | number | null,
): void {
  let entry = out.get(k.id);
  if (entry === undefined) {
    if (value === null) return;
    entry = {
      mirrorName: k.key.mirrorName,
      topicId: k.key.topicId,
      partition: k.key.partition,
      state: null,
      lastMirrorEpoch: -1,
    };
    out.set(k.id, entry);
  }
  if (k.key.kind === "MirrorPartitionState") entry.state = value as MirrorPartitionStateValue | null;
  else entry.lastMirrorEpoch = value === null ? -1 : (value as number);
  if (entry.state === null && entry.lastMirrorEpoch < 0) out.delete(k.id);
}
