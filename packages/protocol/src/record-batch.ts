import { controlTypeOf } from "./control-record";
import { crc32c } from "./crc32c";
import { CorruptRecordError } from "./errors";
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
  PARTITION_LEADER_EPOCH_OFFSET,
  PRODUCER_EPOCH_OFFSET,
  PRODUCER_ID_OFFSET,
  RECORD_BATCH_OVERHEAD,
  RECORDS_COUNT_OFFSET,
  TIMESTAMP_TYPE_MASK,
  type TimestampType,
  TRANSACTIONAL_FLAG_MASK,
} from "./record-batch-layout";

/**
 * A zero-copy view over one raw RecordBatch v2. Reading a header field reads the bytes in place; nothing is
 * decoded until asked for. `buffer` is exactly the batch's bytes (a `subarray` of whatever held them), so
 * appending `batch.buffer` to a log appends the batch as it came, CRC included.
 */
export class RecordBatch {
  /** The batch's bytes, from baseOffset to the last byte of the last record. */
  readonly buffer: Buffer;

  /**
   * Wraps `buffer`, which must hold exactly one batch. Checks only what is needed to read the header
   * safely (size, length field, magic); call `validate()` for the CRC.
   */
  constructor(buffer: Buffer) {
    if (buffer.length < RECORD_BATCH_OVERHEAD) {
      throw new CorruptRecordError(
        `record batch is ${buffer.length} bytes, shorter than the ${RECORD_BATCH_OVERHEAD}-byte v2 header; the data was cut off`,
      );
    }
    const declared = buffer.readInt32BE(BATCH_LENGTH_OFFSET) + LOG_OVERHEAD;
    if (declared !== buffer.length) {
      throw new CorruptRecordError(
        `record batch at offset ${buffer.readBigInt64BE(0)} declares ${declared} bytes but ${buffer.length} were given`,
      );
    }
    const magic = buffer.readInt8(MAGIC_OFFSET);
    if (magic !== CURRENT_MAGIC) {
      throw new CorruptRecordError(
        `record batch has magic ${magic}; only magic 2 (RecordBatch v2, Kafka 0.11+) is supported`,
      );
    }
    this.buffer = buffer;
  }

  /** Offset of the first record. */
  get baseOffset(): bigint {
    return this.buffer.readBigInt64BE(BASE_OFFSET_OFFSET);
  }
  /** Offset of the last record: baseOffset + lastOffsetDelta (kept even when compaction removed records). */
  get lastOffset(): bigint {
    return this.baseOffset + BigInt(this.lastOffsetDelta);
  }
  /** Offset right after this batch. */
  get nextOffset(): bigint {
    return this.lastOffset + 1n;
  }
  /** Bytes after the length field. */
  get batchLength(): number {
    return this.buffer.readInt32BE(BATCH_LENGTH_OFFSET);
  }
  /** Total size in bytes. */
  get sizeInBytes(): number {
    return this.buffer.length;
  }
  /** Leader epoch stamped by the leader that appended the batch (-1 if none). */
  get partitionLeaderEpoch(): number {
    return this.buffer.readInt32BE(PARTITION_LEADER_EPOCH_OFFSET);
  }
  /** Always 2. */
  get magic(): number {
    return this.buffer.readInt8(MAGIC_OFFSET);
  }
  /** The stored CRC-32C. */
  get crc(): number {
    return this.buffer.readUInt32BE(CRC_OFFSET);
  }
  /** The raw int16 attributes. */
  get attributes(): number {
    return this.buffer.readInt16BE(ATTRIBUTES_OFFSET);
  }
  /** Compression codec of the records section. */
  get compression(): CompressionType {
    return (this.attributes & COMPRESSION_CODEC_MASK) as CompressionType;
  }
  /** 0 = CREATE_TIME, 1 = LOG_APPEND_TIME. */
  get timestampType(): TimestampType {
    return (this.attributes & TIMESTAMP_TYPE_MASK ? 1 : 0) as TimestampType;
  }
  /** True if the batch belongs to a transaction. */
  get isTransactional(): boolean {
    return (this.attributes & TRANSACTIONAL_FLAG_MASK) !== 0;
  }
  /** True if the batch holds a control record. */
  get isControl(): boolean {
    return (this.attributes & CONTROL_FLAG_MASK) !== 0;
  }
  /** True if baseTimestamp is the delete horizon (KIP-534). */
  get hasDeleteHorizon(): boolean {
    return (this.attributes & DELETE_HORIZON_FLAG_MASK) !== 0;
  }
  /** lastOffset - baseOffset. */
  get lastOffsetDelta(): number {
    return this.buffer.readInt32BE(LAST_OFFSET_DELTA_OFFSET);
  }
  /** Timestamp of the first record (or the delete horizon). */
  get baseTimestamp(): bigint {
    return this.buffer.readBigInt64BE(BASE_TIMESTAMP_OFFSET);
  }
  /** Largest record timestamp. */
  get maxTimestamp(): bigint {
    return this.buffer.readBigInt64BE(MAX_TIMESTAMP_OFFSET);
  }
  /** Producer id (-1 without idempotence). */
  get producerId(): bigint {
    return this.buffer.readBigInt64BE(PRODUCER_ID_OFFSET);
  }
  /** Producer epoch (-1 without idempotence). */
  get producerEpoch(): number {
    return this.buffer.readInt16BE(PRODUCER_EPOCH_OFFSET);
  }
  /** Sequence of the first record (-1 without idempotence). */
  get baseSequence(): number {
    return this.buffer.readInt32BE(BASE_SEQUENCE_OFFSET);
  }
  /** Sequence of the last record, wrapping at 2^31 as Kafka does. */
  get lastSequence(): number {
    const base = this.baseSequence;
    if (base < 0) return -1;
    return (base + this.lastOffsetDelta) % 0x80000000;
  }
  /** Number of records in the batch. */
  get recordCount(): number {
    return this.buffer.readInt32BE(RECORDS_COUNT_OFFSET);
  }
  /**
   * The control type of a control batch (ABORT 0, COMMIT 1, MIRROR_PID_RESET 7, ...), read from the first
   * record's key in place; -1 for a non-control batch or an empty control batch. Throws
   * `CorruptRecordError` if a control batch's key cannot be read.
   */
  get controlType(): number {
    return controlTypeOf(this) ?? -1;
  }
  /** The records section, compressed or not, without copying. */
  get recordsBytes(): Buffer {
    return this.buffer.subarray(RECORD_BATCH_OVERHEAD);
  }

  /** CRC-32C of the bytes the CRC covers (attributes to the end). */
  computeCrc(): number {
    return crc32c(this.buffer.subarray(ATTRIBUTES_OFFSET));
  }

  /** True if the stored CRC matches the bytes. */
  isValid(): boolean {
    return this.computeCrc() === this.crc;
  }

  /**
   * Checks the CRC and the header's internal consistency; throws `CorruptRecordError` saying what is wrong.
   * This is what a mirror does before appending a fetched batch as it is.
   */
  validate(): void {
    const stored = this.crc;
    const computed = this.computeCrc();
    if (stored !== computed) {
      throw new CorruptRecordError(
        `record batch at offset ${this.baseOffset} is corrupt: stored CRC ${hex(stored)}, computed ${hex(computed)}; fetch it again from the leader`,
      );
    }
    if (this.lastOffsetDelta < 0) {
      throw new CorruptRecordError(
        `record batch at offset ${this.baseOffset} has a negative lastOffsetDelta ${this.lastOffsetDelta}`,
      );
    }
    if (this.recordCount < 0) {
      throw new CorruptRecordError(
        `record batch at offset ${this.baseOffset} has a negative record count ${this.recordCount}`,
      );
    }
  }

  /** Rewrites baseOffset in place. The CRC does not cover it, so the batch stays valid. */
  setBaseOffset(offset: bigint): void {
    this.buffer.writeBigInt64BE(offset, BASE_OFFSET_OFFSET);
  }

  /** Rewrites the partition leader epoch in place. The CRC does not cover it, so the batch stays valid. */
  setPartitionLeaderEpoch(epoch: number): void {
    this.buffer.writeInt32BE(epoch, PARTITION_LEADER_EPOCH_OFFSET);
  }

  /**
   * Kafka's `DefaultRecordBatch.setMaxTimestamp`: rewrites the timestamp type attribute and maxTimestamp in
   * place, then the CRC (both are covered by it). A leader stamps LOG_APPEND_TIME batches this way; the
   * records keep their timestamp deltas (readers take maxTimestamp for every record of such a batch).
   * Nothing is written (and the CRC is kept) when both already hold the values.
   */
  setMaxTimestamp(timestampType: TimestampType, maxTimestamp: bigint): void {
    const current = this.attributes;
    const attributes = timestampType === 1 ? current | TIMESTAMP_TYPE_MASK : current & ~TIMESTAMP_TYPE_MASK;
    if (attributes === current && this.maxTimestamp === maxTimestamp) return;
    this.buffer.writeInt16BE(attributes, ATTRIBUTES_OFFSET);
    this.buffer.writeBigInt64BE(maxTimestamp, MAX_TIMESTAMP_OFFSET);
    this.buffer.writeUInt32BE(this.computeCrc(), CRC_OFFSET);
  }

  /** A short description for logs and test failures. */
  toString(): string {
    return `RecordBatch(baseOffset=${this.baseOffset}, lastOffset=${this.lastOffset}, epoch=${this.partitionLeaderEpoch}, producerId=${this.producerId}, records=${this.recordCount}, size=${this.sizeInBytes}${this.isControl ? ", control" : ""}${this.isTransactional ? ", transactional" : ""})`;
  }
}

function hex(n: number): string {
  return `0x${n.toString(16).padStart(8, "0")}`;
}
