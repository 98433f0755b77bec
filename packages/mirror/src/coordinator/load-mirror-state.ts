import {
  CorruptRecordError,
  decodeLastMirrorEpochsValue,
  decodeMirrorPartitionStateValue,
  decodeMirrorStateKey,
  type MirrorPartitionStateValue,
  type MirrorStateKind,
  MirrorStateRecordType,
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
  /**
   * A `LastMirrorEpochs` value (not a tombstone) was appended after the last `MirrorPartitionState`
   * record: the LME the failover in progress captured, even when it is -1 (nothing was mirrored).
   */
  lastMirrorEpochSinceState: boolean;
  /** The last `LastMirrorEpochs` record is a value (a failover recorded it), not a tombstone or absent. */
  lastMirrorEpochRecorded: boolean;
  /**
   * PREPARING's truncation completed in the current mirroring session and no LME was captured since: the
   * log is a copy of the source. Read from the history as the simulator's `failoverAlignment` reads it: a
   * PREPARING record starts a session (aligned only when it retries an aligned FAILED one), the
   * LastMirrorEpochs tombstone PREPARING writes once truncated aligns it, an LME value (a failover's
   * capture) or STOPPED ends it. The compacted log keeps only the last record of each key, so that tombstone
   * comes before the last state record whenever later transitions replaced the PREPARING one, which no
   * longer opens an entry: a tombstone that finds no entry is kept aside, and the partition's next state
   * record reads it (see `pendingAlignment`), so both replays agree. (Once compaction drops that tombstone,
   * after `delete.retention.ms`, a recovered partition counts as not aligned again: the safe side.)
   */
  alignedInSession: boolean;
}

/**
 * Folds a `__mirror_state` partition, read from its log start, into the last records per key (Kafka's
 * `CoordinatorShard.replay`): a tombstone deletes, a value replaces. Each value is complete, so the full
 * history and the compacted log fold to the same map. A record of an unknown type (a key this broker has
 * no use for) is skipped and reported to `warn`. A value of a known type in a version this broker cannot
 * read throws `UnsupportedVersionError` naming its offset (fail the load): it replaced the key's earlier
 * value, so skipping it would replay that older state from the full history and no state at all from the
 * compacted log, and the coordinator would act on either. A corrupt record throws `CorruptRecordError`
 * naming its offset (fail the load).
 */
export function foldMirrorState(
  records: Iterable<StateLogRecord>,
  warn: (message: string) => void,
): Map<string, LoadedPartitionState> {
  const out = new Map<string, LoadedPartitionState>();
  // Partitions whose last record so far is a LastMirrorEpochs tombstone that found no entry.
  const tombstoned = new Set<string>();
  // A partition's keys repeat once per transition it went through, and its two keys (MirrorPartitionState,
  // LastMirrorEpochs) differ only in the leading record type: decode each partition's key bytes once (the
  // same bytes decode to the same fields) and look the rest up by their bytes. Keys that do not decode are
  // not kept, so each of their records is refused (or skipped) on its own, as before.
  const partitions = new Map<string, DecodedPartition>();
  for (const r of records) {
    const kind = knownKind(r.key);
    // Not a Buffer or not a known record type: no cache, the decoder says what is wrong with it.
    const raw = kind === undefined ? undefined : r.key.toString("latin1", 2);
    let p = raw === undefined ? undefined : partitions.get(raw);
    try {
      if (p === undefined) {
        const key = decodeMirrorStateKey(r.key);
        const id = partitionKeyId({ mirror: key.mirrorName, topicId: key.topicId, partition: key.partition });
        p = { mirrorName: key.mirrorName, topicId: key.topicId, partition: key.partition, id };
        if (raw !== undefined) partitions.set(raw, p);
      }
      const k = kind ?? decodeMirrorStateKey(r.key).kind;
      apply(out, tombstoned, p, k, decodeValue(k, r.value));
    } catch (error) {
      if (error instanceof UnsupportedVersionError) {
        if (kind !== undefined) {
          throw new UnsupportedVersionError(
            `__mirror_state offset ${r.offset} holds a value this broker cannot read (${error.message}), written by a newer broker; the coordinator cannot load this partition without losing that state. Upgrade this broker (or move the partition's leadership to an upgraded one)`,
            { cause: error },
          );
        }
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

/** The partition a `__mirror_state` key names (its fields after the record type) and its id. */
interface DecodedPartition {
  readonly mirrorName: string;
  readonly topicId: string;
  readonly partition: number;
  readonly id: string;
}

/** The kind of a key whose leading record type is a known one; undefined otherwise (or not a Buffer). */
function knownKind(key: Buffer): MirrorStateKind | undefined {
  if (!Buffer.isBuffer(key) || key.length < 2) return undefined;
  const type = key.readInt16BE(0);
  if (type === MirrorStateRecordType.MIRROR_PARTITION_STATE) return "MirrorPartitionState";
  if (type === MirrorStateRecordType.LAST_MIRROR_EPOCHS) return "LastMirrorEpochs";
  return undefined;
}

/** The value of a record (null: a tombstone), decoded as its key's kind says. */
function decodeValue(kind: MirrorStateKind, value: Buffer | null): MirrorPartitionStateValue | number | null {
  if (value === null) return null;
  return kind === "MirrorPartitionState"
    ? decodeMirrorPartitionStateValue(value)
    : decodeLastMirrorEpochsValue(value).lastMirrorEpoch;
}

/**
 * `alignedInSession` of a partition whose entry a state record opens right after a LastMirrorEpochs
 * tombstone that found no entry. In the full history that tombstone is either PREPARING's, once its
 * truncation made the log a copy of the source (its PREPARING record came before it), or a deleted
 * mirror's (its state tombstone came before it). In the compacted log PREPARING's tombstone finds no entry
 * once later transitions replaced the PREPARING record: the state record that follows is then of the
 * same session (nothing ends a session before the next LME value, which would have replaced the tombstone:
 * STOPPED comes only after STOPPING recorded one), and carries a `leaderEpoch` of at least 0 (TRUNCATED sets
 * it, and a session keeps it). After a deleted mirror's tombstone the next record begins a new episode on
 * the topic's own log, untruncated (truncating writes a tombstone of its own), whose `leaderEpoch` is -1.
 */
function pendingAlignment(state: MirrorPartitionStateValue): boolean {
  return state.leaderEpoch >= 0;
}

/** Replays one record: a value replaces the partition's record of its kind, a tombstone deletes it. */
function apply(
  out: Map<string, LoadedPartitionState>,
  tombstoned: Set<string>,
  p: DecodedPartition,
  kind: MirrorStateKind,
  value: MirrorPartitionStateValue | number | null,
): void {
  let entry = out.get(p.id);
  const afterTombstone = entry === undefined && tombstoned.delete(p.id);
  if (entry === undefined) {
    if (value === null) {
      if (kind === "LastMirrorEpochs") tombstoned.add(p.id);
      return;
    }
    entry = {
      mirrorName: p.mirrorName,
      topicId: p.topicId,
      partition: p.partition,
      state: null,
      lastMirrorEpoch: -1,
      lastMirrorEpochSinceState: false,
      lastMirrorEpochRecorded: false,
      alignedInSession:
        afterTombstone &&
        kind === "MirrorPartitionState" &&
        pendingAlignment(value as MirrorPartitionStateValue),
    };
    out.set(p.id, entry);
  }
  if (kind === "MirrorPartitionState") {
    const state = value as MirrorPartitionStateValue | null;
    entry.state = state;
    entry.lastMirrorEpochSinceState = false;
    if (state === null || state.state === "STOPPED") entry.alignedInSession = false;
    else if (state.state === "PREPARING")
      entry.alignedInSession = state.previousState === "FAILED" && entry.alignedInSession;
  } else {
    entry.lastMirrorEpoch = value === null ? -1 : (value as number);
    entry.lastMirrorEpochSinceState = value !== null;
    entry.lastMirrorEpochRecorded = value !== null;
    entry.alignedInSession = value === null;
  }
  // A recorded LME of -1 (a failover over a log that mirrored nothing) is kept as a value: the compacted log
  // may replay it before the state record it came with.
  if (entry.state === null && entry.lastMirrorEpoch < 0 && !entry.lastMirrorEpochRecorded) out.delete(p.id);
}
