import type { MirrorPartitionStateRecord } from "@cluster-mirror/machines";
import {
  encodeLastMirrorEpochsValue,
  encodeMirrorPartitionStateValue,
  encodeMirrorStateKey,
  type MirrorStateKind,
} from "@cluster-mirror/protocol";
import type { MirrorPartitionKey } from "../ports";

/** One `__mirror_state` record ready to append: encoded key and value (null: tombstone). */
export interface EncodedStateRecord {
  readonly key: Buffer;
  readonly value: Buffer | null;
}

function keyOf(key: MirrorPartitionKey, kind: MirrorStateKind): Buffer {
  return encodeMirrorStateKey({
    kind,
    mirrorName: key.mirror,
    topicId: key.topicId,
    partition: key.partition,
  });
}

/** The encoded `MirrorPartitionState` key of a partition (a runtime encodes it once and reuses it). */
export function stateRecordKey(key: MirrorPartitionKey): Buffer {
  return keyOf(key, "MirrorPartitionState");
}

/** The encoded `LastMirrorEpochs` key of a partition. */
export function lastMirrorEpochKey(key: MirrorPartitionKey): Buffer {
  return keyOf(key, "LastMirrorEpochs");
}

/** The `MirrorPartitionState` record of a partition (a complete value, never a delta). */
export function partitionStateRecord(
  key: MirrorPartitionKey | Buffer,
  record: MirrorPartitionStateRecord,
): EncodedStateRecord {
  const k = Buffer.isBuffer(key) ? key : keyOf(key, "MirrorPartitionState");
  return { key: k, value: encodeMirrorPartitionStateValue(record) };
}

/** The `LastMirrorEpochs` record of a partition; `lme` null writes a tombstone (no LME for this episode). */
export function lastMirrorEpochRecord(
  key: MirrorPartitionKey | Buffer,
  lme: number | null,
): EncodedStateRecord {
  return {
    key: Buffer.isBuffer(key) ? key : keyOf(key, "LastMirrorEpochs"),
    value: lme === null ? null : encodeLastMirrorEpochsValue({ lastMirrorEpoch: lme }),
  };
}

/** Tombstones for both records of a partition (a deleted mirror, spec §6). */
export function tombstones(key: MirrorPartitionKey): EncodedStateRecord[] {
  return [
    { key: keyOf(key, "MirrorPartitionState"), value: null },
    { key: keyOf(key, "LastMirrorEpochs"), value: null },
  ];
}
