export { type BatchEntry, BatchIndex } from "./batch-index";
export { type Clock, ManualClock } from "./clock";
export {
  type CleanableSegment,
  type CleanedSegment,
  type CompactionContext,
  type CompactionStats,
  compactSegments,
} from "./compaction";
export { type DivergenceLocalView, divergenceTruncationOffset } from "./divergence";
export {
  FencedLeaderEpochError,
  InvalidConfigError,
  InvalidProducerEpochError,
  InvalidRecordError,
  InvalidTxnStateError,
  KafkaStorageError,
  OffsetOutOfRangeError,
  OutOfOrderSequenceError,
  UnexpectedAppendOffsetError,
  UnknownProducerIdError,
} from "./errors";
export {
  CachedFile,
  DEFAULT_MAX_OPEN_FILES,
  FileHandleCache,
  processFileHandleCache,
} from "./file-handle-cache";
export {
  FileLogStorage,
  type FileLogStorageOptions,
  segmentFileName,
  syncDirectory,
} from "./file-log-storage";
export {
  type EpochEndOffset,
  type EpochEntry,
  LeaderEpochCache,
  UNDEFINED_EPOCH,
  UNDEFINED_EPOCH_OFFSET,
} from "./leader-epoch-cache";
export {
  formatLeaderEpochCheckpoint,
  LEADER_EPOCH_CHECKPOINT_FILE,
  parseLeaderEpochCheckpoint,
} from "./leader-epoch-checkpoint";
export {
  type CleanupPolicy,
  compacts,
  deletesByRetention,
  type LogConfig,
  parseCleanupPolicy,
  type ResolvedLogConfig,
  resolveLogConfig,
} from "./log-config";
export { scanLog, type TornTail } from "./log-loader";
export {
  formatOffsetCheckpoint,
  LOG_START_OFFSET_CHECKPOINT_FILE,
  type OffsetCheckpointEntry,
  parseOffsetCheckpoint,
} from "./log-start-offset-checkpoint";
export { MemoryLogStorage } from "./memory-log-storage";
export {
  type AppendAsIsOptions,
  type AppendAsLeaderOptions,
  type FetchDataInfo,
  fetchDataInfo,
  type IsolationLevel,
  type LogAppendInfo,
  type OpenLogOptions,
  PartitionLog,
  type ReadOptions,
  type RecoveryInfo,
  type RetentionOptions,
  type RetentionResult,
} from "./partition-log";
export {
  formatPartitionMetadata,
  kafkaUuidString,
  PARTITION_METADATA_FILE,
  parsePartitionMetadata,
  uuidOfKafkaString,
} from "./partition-metadata-file";
export {
  type BatchMetadata,
  type CompletedTxn,
  MAX_BATCHES_PER_PRODUCER,
  type ProducerStateEntry,
} from "./producer-state-entry";
export { type AppendOrigin, ProducerStateManager } from "./producer-state-manager";
export type { LogStartProducerState, LogStorage, SegmentInfo } from "./storage";
export {
  formatProducerSnapshot,
  fromSnapshotEntry,
  PRODUCER_SNAPSHOT_SUFFIX,
  type ProducerSnapshotEntry,
  parseProducerSnapshot,
  toSnapshotEntry,
} from "./storage-producer-snapshot";
export {
  type BuiltIndexes,
  buildSegmentIndexes,
  INDEX_INTERVAL_BYTES,
  OFFSET_INDEX_ENTRY_SIZE,
  SegmentIndexBuilder,
  TIME_INDEX_ENTRY_SIZE,
} from "./storage-segment-index";
export { OFFSET_INDEX_SUFFIX, TIME_INDEX_SUFFIX } from "./storage-sidecars";
export {
  formatTransactionIndex,
  type IndexedAbortedTxn,
  parseTransactionIndex,
  TXN_INDEX_ENTRY_SIZE,
  TXN_INDEX_SUFFIX,
} from "./storage-transaction-index";
export { type AbortedTxn, TransactionIndex } from "./transaction-index";
