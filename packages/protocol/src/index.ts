/**
 * `@cluster-mirror/protocol`: Kafka's bytes. RecordBatch v2 (zero-copy view, iterator, encoder, full
 * decoder), CRC-32C, compression codecs, control records (ABORT, COMMIT, MIRROR_PID_RESET) and the
 * `__mirror_state` key/value codecs. Every export is documented where it is declared.
 */

// First: a browser build gets its `Buffer` global here, before any module that uses it runs.
import "./platform/buffer-global";

// Iterating concatenated batches (fetch responses, log segments).
export { partialTrailingBytes, recordBatches } from "./batch-iterator";
// Compression codecs of the records section.
export {
  compress,
  compressionCodecsLoaded,
  compressionFallbacks,
  compressionName,
  decompress,
  loadCompressionCodecs,
} from "./compression";
// Control records and control batches.
export {
  CONTROL_RECORD_KEY_VERSION,
  type ControlRecordKey,
  ControlRecordType,
  controlTypeOf,
  decodeControlRecordKey,
  decodeEndTxnMarkerValue,
  decodeMirrorPidResetValue,
  END_TXN_MARKER_VERSION,
  type EndTxnMarkerBatchInput,
  type EndTxnMarkerValue,
  encodeControlRecordKey,
  encodeEndTxnMarkerBatch,
  encodeEndTxnMarkerValue,
  encodeMirrorPidResetBatch,
  encodeMirrorPidResetValue,
  MIRROR_PID_RESET_VERSION,
  type MirrorPidResetBatchInput,
  type MirrorPidResetValue,
} from "./control-record";
// CRC-32C.
export {
  type Crc32cImplementation,
  crc32c,
  crc32cFallbackReason,
  crc32cImplementation,
  crc32cJs,
} from "./crc32c";
export { crc32cCombine, crc32cOfRange } from "./crc32c-combine";
// Errors.
export {
  CorruptRecordError,
  KafkaError,
  UnsupportedCompressionError,
  UnsupportedVersionError,
} from "./errors";
// `__mirror_state` records.
export {
  decodeLastMirrorEpochsValue,
  decodeMirrorPartitionStateValue,
  decodeMirrorStateKey,
  decodeMirrorStateRecord,
  encodeLastMirrorEpochsValue,
  encodeMirrorPartitionStateValue,
  encodeMirrorStateKey,
  encodeMirrorStateRecord,
  LAST_MIRROR_EPOCHS_VALUE_VERSION,
  type LastMirrorEpochsValue,
  MIRROR_PARTITION_STATE_NAMES,
  MIRROR_PARTITION_STATE_VALUE_VERSION,
  MirrorPartitionStateCode,
  type MirrorPartitionStateName,
  type MirrorPartitionStateValue,
  type MirrorStateKey,
  type MirrorStateKind,
  type MirrorStateRecord,
  MirrorStateRecordType,
  NON_RETRYABLE_ATTEMPT,
  topicIdFromBase64,
  topicIdFromBytes,
  topicIdToBase64,
  topicIdToBytes,
} from "./mirror-state-codec";
// Records.
export type { Record, RecordHeader } from "./record";
// The zero-copy batch view.
export { RecordBatch } from "./record-batch";
// The full batch decoder.
export {
  type DecodedRecordBatch,
  type DecodeRecordBatchOptions,
  decodeRecordBatch,
} from "./record-batch-decoder";
// The batch encoder.
export { batchAttributes, encodeRecordBatch, type RecordBatchInput } from "./record-batch-encoder";
// Header layout constants.
export * as RecordBatchLayout from "./record-batch-layout";
export {
  CompressionType,
  NO_PARTITION_LEADER_EPOCH,
  NO_PRODUCER_EPOCH,
  NO_PRODUCER_ID,
  NO_SEQUENCE,
  NO_TIMESTAMP,
  RECORD_BATCH_OVERHEAD,
  TimestampType,
} from "./record-batch-layout";
// Records sections.
export {
  decodeRecords,
  decodeRecordsSection,
  encodeRecords,
  encodeRecordsUncompressed,
} from "./records-codec";
// Varints.
export {
  type Decoded,
  readVarint,
  readVarlong,
  sizeOfVarint,
  sizeOfVarlong,
  writeVarint,
  writeVarlong,
} from "./varint";
