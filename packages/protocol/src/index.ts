export { partialTrailingBytes, recordBatches } from "./batch-iterator";
export { crc32c, crc32cImplementation, crc32cJs } from "./crc32c";
export {
  CorruptRecordError,
  KafkaError,
  UnsupportedCompressionError,
  UnsupportedVersionError,
} from "./errors";
export type { Record, RecordHeader } from "./record";
export { RecordBatch } from "./record-batch";
export { batchAttributes, encodeRecordBatch, type RecordBatchInput } from "./record-batch-encoder";
export * as RecordBatchLayout from "./record-batch-layout";
export {
  CompressionType,
  NO_PARTITION_LEADER_EPOCH,
  NO_PRODUCER_EPOCH,
  NO_PRODUCER_ID,
  NO_SEQUENCE,
  RECORD_BATCH_OVERHEAD,
  TimestampType,
} from "./record-batch-layout";
export { readVarint, readVarlong, sizeOfVarint, sizeOfVarlong, writeVarint, writeVarlong } from "./varint";
