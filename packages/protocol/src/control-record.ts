import { CorruptRecordError } from "./errors";
import type { RecordBatch } from "./record-batch";
import { encodeRecordBatch } from "./record-batch-encoder";
import {
  NO_PARTITION_LEADER_EPOCH,
  NO_PRODUCER_EPOCH,
  NO_PRODUCER_ID,
  NO_SEQUENCE,
} from "./record-batch-layout";
import { decodeRecords } from "./records-codec";
import { readVarint, readVarlong } from "./varint";

/**
 * Control records: the single record of a control batch, whose key is `int16 version (0), int16 type`.
 * Types as Kafka's `ControlRecordType` numbers them, plus KIP-1279's MIRROR_PID_RESET (7).
 */
export const ControlRecordType = {
  /** End of an aborted transaction (value: EndTransactionMarker). */
  ABORT: 0,
  /** End of a committed transaction (value: EndTransactionMarker). */
  COMMIT: 1,
  /** KIP-1279 barrier: clears every producer-state entry (value: MirrorPidReset). */
  MIRROR_PID_RESET: 7,
} as const;
/** A control record type this project writes: ABORT, COMMIT or MIRROR_PID_RESET. */
export type ControlRecordType = (typeof ControlRecordType)[keyof typeof ControlRecordType];

/** Version of the control record key this code writes. */
export const CONTROL_RECORD_KEY_VERSION = 0;
/** Version of the EndTransactionMarker value this code writes. */
export const END_TXN_MARKER_VERSION = 0;
/** Version of the MirrorPidReset value this code writes. */
export const MIRROR_PID_RESET_VERSION = 0;

/** A control record key. */
export interface ControlRecordKey {
  version: number;
  /** The control type; any int16, unknown types included (Kafka's `UNKNOWN`). */
  type: number;
}

/** Value of an ABORT or COMMIT control record. */
export interface EndTxnMarkerValue {
  version: number;
  /** Epoch of the transaction coordinator that wrote the marker. */
  coordinatorEpoch: number;
}

/** Value of a MIRROR_PID_RESET control record. */
export interface MirrorPidResetValue {
  version: number;
  /** Cluster id of the source the partition was mirrored from. */
  sourceClusterId: string;
}

/** Writes a control record key: `int16 version, int16 type`. */
export function encodeControlRecordKey(type: number, version = CONTROL_RECORD_KEY_VERSION): Buffer {
  const buf = Buffer.allocUnsafe(4);
  buf.writeInt16BE(version, 0);
  buf.writeInt16BE(type, 2);
  return buf;
}

/**
 * Reads a control record key. As in Kafka's `ControlRecordType.parseTypeId`, a key shorter than 4 bytes or
 * with a negative version is corrupt, and anything after the first 4 bytes (a newer version's fields) is
 * ignored. Throws only `CorruptRecordError`.
 */
export function decodeControlRecordKey(key: Buffer | null): ControlRecordKey {
  if (key === null || key.length < 4) {
    throw new CorruptRecordError(
      `control record key is ${key === null ? "null" : `${key.length} bytes`}; it needs an int16 version and an int16 type`,
    );
  }
  const version = key.readInt16BE(0);
  if (version < 0) throw new CorruptRecordError(`control record key has a negative version ${version}`);
  return { version, type: key.readInt16BE(2) };
}

/** Writes an EndTransactionMarker value: `int16 version (0), int32 coordinatorEpoch`. */
export function encodeEndTxnMarkerValue(coordinatorEpoch: number): Buffer {
  const buf = Buffer.allocUnsafe(6);
  buf.writeInt16BE(END_TXN_MARKER_VERSION, 0);
  buf.writeInt32BE(coordinatorEpoch, 2);
  return buf;
}

/**
 * Reads an EndTransactionMarker value. As in Kafka, a value shorter than 6 bytes or with a negative version
 * is corrupt, and bytes after the version-0 fields (a newer version's) are ignored. Throws only
 * `CorruptRecordError`.
 */
export function decodeEndTxnMarkerValue(value: Buffer | null): EndTxnMarkerValue {
  if (value === null || value.length < 6) {
    throw new CorruptRecordError(
      `end transaction marker value is ${value === null ? "null" : `${value.length} bytes`}; it needs at least 6`,
    );
  }
  const version = value.readInt16BE(0);
  if (version < 0) throw new CorruptRecordError(`end transaction marker has a negative version ${version}`);
  return { version, coordinatorEpoch: value.readInt32BE(2) };
}

/** Writes a MirrorPidReset value: `int16 version (0), string sourceClusterId (int16 length + UTF-8)`. */
export function encodeMirrorPidResetValue(sourceClusterId: string): Buffer {
  const id = Buffer.from(sourceClusterId, "utf8");
  if (id.length > 0x7fff) throw new RangeError(`source cluster id is ${id.length} bytes, more than 32767`);
  const buf = Buffer.allocUnsafe(4 + id.length);
  buf.writeInt16BE(MIRROR_PID_RESET_VERSION, 0);
  buf.writeInt16BE(id.length, 2);
  id.copy(buf, 4);
  return buf;
}

/**
 * Reads a MirrorPidReset value. A negative version or a string length that is negative or runs past the
 * value is corrupt; bytes after the version-0 fields (a newer version's) are ignored, as Kafka does for
 * control records. Throws only `CorruptRecordError`.
 */
export function decodeMirrorPidResetValue(value: Buffer | null): MirrorPidResetValue {
  if (value === null || value.length < 4) {
    throw new CorruptRecordError(
      `MIRROR_PID_RESET value is ${value === null ? "null" : `${value.length} bytes`}; it needs at least 4`,
    );
  }
  const version = value.readInt16BE(0);
  if (version < 0) throw new CorruptRecordError(`MIRROR_PID_RESET value has a negative version ${version}`);
  const len = value.readInt16BE(2);
  if (len < 0 || 4 + len > value.length) {
    throw new CorruptRecordError(
      `MIRROR_PID_RESET source cluster id declares ${len} bytes but ${value.length - 4} remain`,
    );
  }
  return { version, sourceClusterId: value.toString("utf8", 4, 4 + len) };
}

/** Input of `encodeEndTxnMarkerBatch`. */
export interface EndTxnMarkerBatchInput {
  type: typeof ControlRecordType.ABORT | typeof ControlRecordType.COMMIT;
  producerId: bigint;
  producerEpoch: number;
  coordinatorEpoch: number;
  /** Defaults to 0 (the log assigns the real offset on append). */
  baseOffset?: bigint;
  /** Defaults to -1 (the leader stamps it on append). */
  partitionLeaderEpoch?: number;
  /** Milliseconds since the epoch, from the caller's injected clock (the coordinator's append time). */
  timestamp: bigint;
}

/**
 * Writes an ABORT or COMMIT marker as Kafka does: a control, transactional batch of the producer's id and
 * epoch, base sequence -1, holding one uncompressed record (key: version 0 + type; value: version 0 +
 * coordinator epoch).
 */
export function encodeEndTxnMarkerBatch(input: EndTxnMarkerBatchInput): Buffer {
  return encodeRecordBatch({
    baseOffset: input.baseOffset ?? 0n,
    partitionLeaderEpoch: input.partitionLeaderEpoch ?? NO_PARTITION_LEADER_EPOCH,
    isControl: true,
    isTransactional: true,
    baseTimestamp: input.timestamp,
    producerId: input.producerId,
    producerEpoch: input.producerEpoch,
    baseSequence: NO_SEQUENCE,
    records: [
      {
        attributes: 0,
        offsetDelta: 0,
        timestampDelta: 0n,
        key: encodeControlRecordKey(input.type),
        value: encodeEndTxnMarkerValue(input.coordinatorEpoch),
        headers: [],
      },
    ],
  });
}

/** Input of `encodeMirrorPidResetBatch`. */
export interface MirrorPidResetBatchInput {
  /** Cluster id of the source the partition was mirrored from. */
  sourceClusterId: string;
  /** Defaults to 0 (the log assigns the real offset on append). */
  baseOffset?: bigint;
  /** Defaults to -1 (the leader stamps it on append). */
  partitionLeaderEpoch?: number;
  /** Milliseconds since the epoch, from the caller's injected clock. */
  timestamp: bigint;
}

/**
 * Writes the KIP-1279 MIRROR_PID_RESET barrier: a control, non-transactional batch without producer
 * (producerId -1, epoch -1, sequence -1) holding one uncompressed record (key: version 0 + type 7; value:
 * version 0 + source cluster id).
 */
export function encodeMirrorPidResetBatch(input: MirrorPidResetBatchInput): Buffer {
  return encodeRecordBatch({
    baseOffset: input.baseOffset ?? 0n,
    partitionLeaderEpoch: input.partitionLeaderEpoch ?? NO_PARTITION_LEADER_EPOCH,
    isControl: true,
    isTransactional: false,
    baseTimestamp: input.timestamp,
    producerId: NO_PRODUCER_ID,
    producerEpoch: NO_PRODUCER_EPOCH,
    baseSequence: NO_SEQUENCE,
    records: [
      {
        attributes: 0,
        offsetDelta: 0,
        timestampDelta: 0n,
        key: encodeControlRecordKey(ControlRecordType.MIRROR_PID_RESET),
        value: encodeMirrorPidResetValue(input.sourceClusterId),
        headers: [],
      },
    ],
  });
}

/**
 * The control type of a batch (ABORT 0, COMMIT 1, MIRROR_PID_RESET 7, or any other int16 a newer writer
 * used), read from its first record's key; `undefined` for a non-control batch or an empty control batch
 * (compaction can empty one). An uncompressed batch, which is what Kafka writes for control batches, is
 * read in place without decoding the records; a compressed one is decompressed. Throws `CorruptRecordError`
 * if the key cannot be read (and `UnsupportedCompressionError` for an unloadable codec).
 */
export function controlTypeOf(batch: RecordBatch): number | undefined {
  if (!batch.isControl || batch.recordCount <= 0) return undefined;
  if (batch.compression !== 0) {
    const first = decodeRecords(batch)[0];
    return first === undefined ? undefined : decodeControlRecordKey(first.key).type;
  }
  const buf = batch.recordsBytes;
  if (buf.length === 0) throw new CorruptRecordError(`${batch} declares records but has no record bytes`);
  const length = readVarint(buf, 0);
  const end = length.next + length.value;
  if (length.value < 0 || end > buf.length) {
    throw new CorruptRecordError(`${batch}: first record declares ${length.value} bytes`);
  }
  // attributes int8, timestampDelta varlong, offsetDelta varint, then the key.
  const timestampDelta = readVarlong(buf, length.next + 1, end);
  const offsetDelta = readVarint(buf, timestampDelta.next, end);
  const keyLength = readVarint(buf, offsetDelta.next, end);
  if (keyLength.value < -1 || keyLength.next + keyLength.value > end) {
    throw new CorruptRecordError(`${batch}: control record key declares ${keyLength.value} bytes`);
  }
  const key = keyLength.value === -1 ? null : buf.subarray(keyLength.next, keyLength.next + keyLength.value);
  return decodeControlRecordKey(key).type;
}
