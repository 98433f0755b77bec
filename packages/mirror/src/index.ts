export { DEFAULT_RETRY_BACKOFF, type RetryBackoffOptions } from "@cluster-mirror/machines";
export {
  type DescribeTableOptions,
  formatDescribeJson,
  formatDescribeTable,
  formatListTable,
  type MirrorDescribeRow,
  type MirrorListing,
} from "./admin/describe-format";
export {
  InvalidMirrorConfigError,
  InvalidMirrorNameError,
  MirrorAlreadyExistsError,
  MirrorCommandTimeoutError,
  MirroringClosedError,
  MirrorLoopError,
  MirrorStateError,
  MirrorWaitTimeoutError,
  PromoteCancelledError,
  PromoteTimeoutError,
  SourceFailoverInProgressError,
  SourceUnreachableError,
  UnknownMirrorError,
  UnsafeTruncationError,
} from "./admin/errors";
export type {
  FailoverPreviewRow,
  PreviewTransaction,
} from "./admin/failover-preview";
export type { LocalWritesAtRisk } from "./admin/local-writes";
export {
  type AddTopicsOptions,
  type AlteredMirrorConfig,
  MirrorAdmin,
  type MirrorAdminOptions,
  type MirrorConfigDescription,
  type MirrorTopicsResult,
} from "./admin/mirror-admin";
export { type ConditionCheck, MirrorChanges, waitForCondition } from "./admin/mirror-changes";
export {
  compilePattern,
  isExcludedTopicConfig,
  KNOWN_MIRROR_CONFIGS,
  MIRROR_CONFIG_DEFAULTS,
  MIRROR_CONFIG_KEYS,
  type MirrorDefinition,
  PAUSED_SUFFIX,
  parseMirrorConfig,
  REMOVED_SUFFIX,
  SENSITIVE_MIRROR_CONFIGS,
  validateMirrorName,
} from "./admin/mirror-config";
export { alterMirrorConfigs, type MirrorConfigChanges } from "./admin/mirror-config-alter";
export {
  DEFAULT_PROMOTE_TIMEOUT_MS,
  type PromotedPartition,
  type PromoteLaggard,
  type PromoteOptions,
  type PromoteResult,
} from "./admin/promote";
export { parseProperties } from "./admin/properties";
export { DEFAULT_API_TIMEOUT_MS } from "./admin/recorded-within";
export type { RecoveredPartition, RecoverResult } from "./admin/recover";
export { exactTopicPattern } from "./admin/topic-selection";
export type { MirrorVerification, VerifyCheck } from "./admin/verify";
export { ClusterMirroring, type ClusterMirroringOptions, type MirrorWarningKind } from "./cluster-mirroring";
export { CoordinatorRuntime, type CoordinatorRuntimeOptions } from "./coordinator/coordinator-runtime";
export { CoordinatorShard, type CoordinatorShardOptions } from "./coordinator/coordinator-shard";
export { InspectionHub, type MirrorInspector } from "./coordinator/inspection-hub";
export { foldMirrorState, type LoadedPartitionState } from "./coordinator/load-mirror-state";
export { MirrorCoordinatorRouter } from "./coordinator/mirror-coordinators";
export { mirrorStatePartitionFor } from "./coordinator/mirror-state-partition";
export { NoDestinationLeaderError } from "./coordinator/no-destination-leader-error";
export { partitionStateRecord } from "./coordinator/state-records";
export { ADAPTIVE_APPEND_LINGER_MS, DEFAULT_APPEND_LINGER_MS } from "./coordinator/state-write-batcher";
export type { PartitionTransition, TransitionListener } from "./coordinator/transition-listener";
export { type DestinationTopicLookup, EmbeddedDestination } from "./destination/embedded-destination";
export { EmbeddedLocalReplica } from "./destination/embedded-local-replica";
export {
  DEFAULT_MIRROR_STATE_PARTITIONS,
  EmbeddedStateLog,
  ensureMirrorStateTopic,
  MAX_MIRROR_STATE_PARTITIONS,
  MIRROR_STATE_TOPIC,
} from "./destination/embedded-state-log";
export { fetcherIndexFor, mirrorFetcherClientId } from "./fetcher/client-id";
export type { FetcherMetrics, FetcherThreadMetrics, PartitionFetchMetrics } from "./fetcher/fetcher-metrics";
export {
  type MirrorFetcherConfig,
  MirrorFetcherManager,
  type MirrorFetcherManagerOptions,
} from "./fetcher/mirror-fetcher-manager";
export {
  destinationConfigsOf,
  MIRROR_REPLICATION_THROTTLED_RATE,
  MIRROR_REPLICATION_THROTTLED_REPLICAS,
  ReplicationQuota,
} from "./fetcher/replication-quota";
export {
  MirrorMetadataManager,
  type MirrorMetadataManagerOptions,
  type RefreshReport,
  SOURCE_TOPIC_DELETED,
} from "./metadata/mirror-metadata-manager";
export { SourceConnections } from "./metadata/source-connections";
export { MIRROR_METRIC_NAMES, MirrorMetrics, type SyncErrorKind } from "./metrics/mirror-metrics";
export type {
  DescribeTopicsOptions,
  DestinationCluster,
  FetcherEvents,
  FetcherManager,
  ListGroupOffsetsOptions,
  LocalReplica,
  MirrorCoordinators,
  MirrorPartitionKey,
  MirrorPartitionView,
  SourceCluster,
  SourceConnectOptions,
  SourceConnector,
  SourceFetchPartition,
  SourceFetchPartitionResult,
  SourceFetchRequest,
  SourceGroupOffsets,
  SourceMirrorInfo,
  SourcePartitionInfo,
  SourcePartitionLeader,
  SourceTopicInfo,
  StateLog,
  StateLogRecord,
} from "./ports";
export { EmbeddedSourceCluster, type EmbeddedSourceOptions } from "./source/embedded-source";
export {
  EmbeddedSourceConnector,
  EmbeddedSourceRegistry,
  UnknownBootstrapError,
} from "./source/embedded-source-registry";
export {
  actorEvent,
  eventEvent,
  type InspectedActorRef,
  type InspectedSnapshot,
  type InspectionActorEvent,
  type InspectionEvent,
  type InspectionEventEvent,
  type InspectionSnapshotEvent,
  mirrorActorId,
  type PartitionContext,
  partitionActorId,
  snapshotEvent,
  stoppedEvent,
} from "./wire/inspection-events";
export type { StateHistoryPage, StateHistoryRecord, StateValue } from "./wire/state-history";
