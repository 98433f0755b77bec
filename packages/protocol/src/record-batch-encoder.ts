import { crc32c } from "./crc32c";
import type { Record } from "./record";
import {
  ATTRIBUTES_OFFSET,
  BASE_OFFSET_OFFSET,
  BASE_SEQUENCE_OFFSET,
  BASE_TIMESTAMP_OFFSET,
  BATCH_LENGTH_OFFSET,
  COMPRESSION_CODEC_MASK,
  CONTROL_FLAG_MASK,
  type CompressionType,
  CRC_OFFSET,
  CURRENT_MAGIC,
  DELETE_HORIZON_FLAG_MASK,
  LAST_OFFSET_DELTA_OFFSET,
  LOG_OVERHEAD,
  MAGIC_OFFSET,
  MAX_TIMESTAMP_OFFSET,
  NO_PARTITION_LEADER_EPOCH,
  NO_PRODUCER_EPOCH,
  NO_PRODUCER_ID,
  NO_SEQUENCE,
  PARTITION_LEADER_EPOCH_OFFSET,
  PRODUCER_EPOCH_OFFSET,
  PRODUCER_ID_OFFSET,
  RECORD_BATCH_OVERHEAD,
  RECORDS_COUNT_OFFSET,
  TIMESTAMP_TYPE_MASK,
  type TimestampType,
  TRANSACTIONAL_FLAG_MASK,
} from "./record-batch-layout";
import { encodeRecords } from "./records-codec";

/** Everything needed to write a RecordBatch v2. Omitted fields take Kafka's "none" values. */
export interface RecordBatchInput {
  baseOffset?: bigint;
  partitionLeaderEpoch?: number;
  compression?: CompressionType;
  timestampType?: TimestampType;
  isTransactional?: boolean;
  isControl?: boolean;
  hasDeleteHorizon?: boolean;
  /** Defaults to the last record's offsetDelta (0 for an empty batch). */
  lastOffsetDelta?: number;
  baseTimestamp?: bigint;
  /** Defaults to baseTimestamp + the largest timestampDelta. */
  maxTimestamp?: bigint;
  producerId?: bigint;
  producerEpoch?: number;
  baseSequence?: number;
  records: readonly Record[];
}

/** The attributes int16 for a batch with these flags. */
export function batchAttributes(input: Omit<RecordBatchInput, "records">): number {
  let attributes = (input.compression ?? 0) & COMPRESSION_CODEC_MASK;
  if (input.timestampType === 1) attributes |= TIMESTAMP_TYPE_MASK;
  if (input.isTransactional) attributes |= TRANSACTIONAL_FLAG_MASK;
  if (input.isControl) attributes |= CONTROL_FLAG_MASK;
  if (input.hasDeleteHorizon) attributes |= DELETE_HORIZON_FLAG_MASK;
  return attributes;
}

/**
 * Encodes a RecordBatch v2 with a correct CRC-32C. With `compression` set, the records section is
 * compressed with that codec (see `compression.ts`); codecs needing asynchronous set-up must have been
 * loaded with `loadCompressionCodecs()` first.
 */
export function encodeRecordBatch(input: RecordBatchInput): Buffer {
  const records = encodeRecords(input.records, input.compression ?? 0);
  const size = RECORD_BATCH_OVERHEAD + records.length;
  const buf = Buffer.allocUnsafe(size);
  const last = input.records[input.records.length - 1];
  const baseTimestamp = input.baseTimestamp ?? 0n;
  let maxDelta = 0n;
  for (const r of input.records) if (r.timestampDelta > maxDelta) maxDelta = r.timestampDelta;
  buf.writeBigInt64BE(input.baseOffset ?? 0n, BASE_OFFSET_OFFSET);
  buf.writeInt32BE(size - LOG_OVERHEAD, BATCH_LENGTH_OFFSET);
  buf.writeInt32BE(input.partitionLeaderEpoch ?? NO_PARTITION_LEADER_EPOCH, PARTITION_LEADER_EPOCH_OFFSET);
  buf.writeInt8(CURRENT_MAGIC, MAGIC_OFFSET);
  buf.writeInt16BE(batchAttributes(input), ATTRIBUTES_OFFSET);
  buf.writeInt32BE(input.lastOffsetDelta ?? last?.offsetDelta ?? 0, LAST_OFFSET_DELTA_OFFSET);
  buf.writeBigInt64BE(baseTimestamp, BASE_TIMESTAMP_OFFSET);
  buf.writeBigInt64BE(input.maxTimestamp ?? baseTimestamp + maxDelta, MAX_TIMESTAMP_OFFSET);
  buf.writeBigInt64BE(input.producerId ?? NO_PRODUCER_ID, PRODUCER_ID_OFFSET);
  buf.writeInt16BE(input.producerEpoch ?? NO_PRODUCER_EPOCH, PRODUCER_EPOCH_OFFSET);
  buf.writeInt32BE(input.baseSequence ?? NO_SEQUENCE, BASE_SEQUENCE_OFFSET);
  buf.writeInt32BE(input.records.length, RECORDS_COUNT_OFFSET);
  records.copy(buf, RECORD_BATCH_OVERHEAD);
  buf.writeUInt32BE(crc32c(buf.subarray(ATTRIBUTES_OFFSET)), CRC_OFFSET);
  return buf;
}
