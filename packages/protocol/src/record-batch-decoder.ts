import { CorruptRecordError } from "./errors";
import type { Record } from "./record";
import { RecordBatch } from "./record-batch";
import type { CompressionType, TimestampType } from "./record-batch-layout";
import { decodeRecords } from "./records-codec";

/**
 * A RecordBatch v2 decoded in full: every header field and every record. Its fields have the names of
 * `RecordBatchInput`, so `encodeRecordBatch(decoded)` writes the batch again.
 */
export interface DecodedRecordBatch {
  baseOffset: bigint;
  /** Bytes after the length field (the batch size minus 12). */
  batchLength: number;
  partitionLeaderEpoch: number;
  magic: number;
  /** The stored CRC-32C (checked against the bytes unless `verifyCrc: false`). */
  crc: number;
  /** The raw int16 attributes. */
  attributes: number;
  compression: CompressionType;
  timestampType: TimestampType;
  isTransactional: boolean;
  isControl: boolean;
  hasDeleteHorizon: boolean;
  lastOffsetDelta: number;
  baseTimestamp: bigint;
  maxTimestamp: bigint;
  producerId: bigint;
  producerEpoch: number;
  baseSequence: number;
  /** The header's record count; always `records.length`. */
  recordCount: number;
  /** The records in order, headers in order, null keys, values and header values kept as null. */
  records: Record[];
}

/** Options of `decodeRecordBatch`. */
export interface DecodeRecordBatchOptions {
  /** Check the CRC-32C before decoding (default true). */
  verifyCrc?: boolean;
}

/**
 * Decodes one whole RecordBatch v2: checks the header (size, length, magic), the CRC-32C, the record count
 * and offset deltas, decompresses and decodes every record. Accepts the batch's bytes or a `RecordBatch`
 * view. Throws `CorruptRecordError` for any malformed, truncated or corrupt input, and
 * `UnsupportedCompressionError` for a codec that is unknown or not loaded; never anything else.
 */
export function decodeRecordBatch(
  input: Buffer | RecordBatch,
  options: DecodeRecordBatchOptions = {},
): DecodedRecordBatch {
  const batch = input instanceof RecordBatch ? input : viewOf(input);
  if (options.verifyCrc ?? true) {
    batch.validate();
  } else if (batch.recordCount < 0 || batch.lastOffsetDelta < 0) {
    throw new CorruptRecordError(
      `record batch at offset ${batch.baseOffset} has a negative record count or lastOffsetDelta`,
    );
  }
  const records = decodeRecords(batch);
  return {
    baseOffset: batch.baseOffset,
    batchLength: batch.batchLength,
    partitionLeaderEpoch: batch.partitionLeaderEpoch,
    magic: batch.magic,
    crc: batch.crc,
    attributes: batch.attributes,
    compression: batch.compression,
    timestampType: batch.timestampType,
    isTransactional: batch.isTransactional,
    isControl: batch.isControl,
    hasDeleteHorizon: batch.hasDeleteHorizon,
    lastOffsetDelta: batch.lastOffsetDelta,
    baseTimestamp: batch.baseTimestamp,
    maxTimestamp: batch.maxTimestamp,
    producerId: batch.producerId,
    producerEpoch: batch.producerEpoch,
    baseSequence: batch.baseSequence,
    recordCount: batch.recordCount,
    records,
  };
}

function viewOf(buf: Buffer): RecordBatch {
  if (!Buffer.isBuffer(buf)) {
    throw new CorruptRecordError("record batch input is not a Buffer");
  }
  return new RecordBatch(buf);
}
