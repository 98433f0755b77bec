/**
 * Byte layout of a RecordBatch v2 (magic 2) header, as Kafka's `DefaultRecordBatch` defines it.
 * All integers are big-endian. The CRC-32C covers every byte from `ATTRIBUTES_OFFSET` to the batch end.
 */
/** int64: offset of the first record. */
export const BASE_OFFSET_OFFSET = 0;
/** int32: number of bytes after this field, i.e. the batch size minus `LOG_OVERHEAD`. */
export const BATCH_LENGTH_OFFSET = 8;
/** Bytes before the batch length's payload: baseOffset (8) + batchLength (4). */
export const LOG_OVERHEAD = 12;
/** int32: leader epoch stamped by the appending leader. */
export const PARTITION_LEADER_EPOCH_OFFSET = 12;
/** int8: format version, 2. */
export const MAGIC_OFFSET = 16;
/** uint32: CRC-32C of the bytes from `ATTRIBUTES_OFFSET` to the end. */
export const CRC_OFFSET = 17;
/** int16: compression, timestamp type, transactional, control, delete-horizon bits. */
export const ATTRIBUTES_OFFSET = 21;
/** int32: lastOffset - baseOffset. */
export const LAST_OFFSET_DELTA_OFFSET = 23;
/** int64: timestamp of the first record (or the delete horizon). */
export const BASE_TIMESTAMP_OFFSET = 27;
/** int64: largest record timestamp. */
export const MAX_TIMESTAMP_OFFSET = 35;
/** int64: producer id. */
export const PRODUCER_ID_OFFSET = 43;
/** int16: producer epoch. */
export const PRODUCER_EPOCH_OFFSET = 51;
/** int32: sequence of the first record. */
export const BASE_SEQUENCE_OFFSET = 53;
/** int32: number of records. */
export const RECORDS_COUNT_OFFSET = 57;
/** Size of the v2 header: the first record starts here. */
export const RECORD_BATCH_OVERHEAD = 61;
/** The only magic this project reads and writes. */
export const CURRENT_MAGIC = 2;

/** Attribute bits 0-2: compression codec. */
export const COMPRESSION_CODEC_MASK = 0x07;
/** Attribute bit 3: 1 = LOG_APPEND_TIME, 0 = CREATE_TIME. */
export const TIMESTAMP_TYPE_MASK = 0x08;
/** Attribute bit 4: the batch belongs to a transaction. */
export const TRANSACTIONAL_FLAG_MASK = 0x10;
/** Attribute bit 5: the batch holds a control record (ABORT, COMMIT, MIRROR_PID_RESET). */
export const CONTROL_FLAG_MASK = 0x20;
/** Attribute bit 6: baseTimestamp holds the delete horizon (KIP-534). */
export const DELETE_HORIZON_FLAG_MASK = 0x40;

/** Producer id of a batch written without idempotence. */
export const NO_PRODUCER_ID = -1n;
/** Producer epoch of a batch written without idempotence. */
export const NO_PRODUCER_EPOCH = -1;
/** Base sequence of a batch written without idempotence (and of control batches). */
export const NO_SEQUENCE = -1;
/** Partition leader epoch of a batch that has not been stamped by a leader. */
export const NO_PARTITION_LEADER_EPOCH = -1;
/** Timestamp used when a record has none. */
export const NO_TIMESTAMP = -1n;

/** Compression codecs by their attribute value. */
export const CompressionType = {
  NONE: 0,
  GZIP: 1,
  SNAPPY: 2,
  LZ4: 3,
  ZSTD: 4,
} as const;
/** A compression codec id (0..4). */
export type CompressionType = (typeof CompressionType)[keyof typeof CompressionType];

/** Timestamp types of a batch. */
export const TimestampType = { CREATE_TIME: 0, LOG_APPEND_TIME: 1 } as const;
/** A timestamp type id. */
export type TimestampType = (typeof TimestampType)[keyof typeof TimestampType];
