/** Fsyncs a directory (new, renamed or deleted files in it survive a power loss), for the node's own files. */
export { syncDirectory } from "@cluster-mirror/log";
export {
  type AclBinding,
  type AclBindingFilter,
  type AclOperation,
  type AclPatternType,
  type AclPatternTypeFilter,
  type AclPermissionType,
  type AclResourceType,
  type AuthorizationRequest,
  Authorizer,
  type AuthorizerConfig,
  CLUSTER_RESOURCE_NAME,
  INTERNAL_PRINCIPAL,
} from "./acls";
export {
  AdminHandler,
  type ClusterDescription,
  type ConfigEntryDescription,
  type ConfigResource,
  type ConfigResourceDescription,
  type ConfigResourceResult,
  type ConfigSourceName,
  type DeleteRecordsResult,
  type GroupResult,
  type PartitionOffset,
  type TopicDescription,
  type TopicResult,
  toClusterError,
} from "./admin-handler";
export {
  Broker,
  type BrokerNetwork,
  type BrokerOptions,
  type FetchRequest,
  type FetchResponse,
  type LeadershipChange,
  type ProduceRequest,
  type ProduceResponse,
  type RequestContext,
} from "./broker";
export { ClientQuotaManager, type ClientQuotaOptions, type QuotaType } from "./client-quotas";
export {
  type AclEntry,
  type AclFilter,
  AclOperationTypes,
  AclPermissionTypes,
  AclResourceTypes,
  Admin,
  type AdminConfig,
  AlterConfigOpTypes,
  type Batch,
  type ClientContext,
  CompressionTypes,
  ConfigResourceTypes,
  ConfigSource,
  Consumer,
  type ConsumerConfig,
  type ConsumerEvent,
  type ConsumerEventName,
  ConsumerEvents,
  type ConsumerRunConfig,
  type ConsumerSubscribeTopics,
  createDefaultPartitioner,
  type DecodedFetch,
  type DescribeConfigResponse,
  decodeFetch,
  decodeHeaders,
  type EachBatchPayload,
  type EachMessagePayload,
  EmbeddedKafka,
  type EmbeddedKafkaConfig,
  encodeHeaders,
  encodeMessages,
  type GroupDescriptionView,
  type IHeaders,
  type IncrementalResourceConfig,
  type IResourceConfig,
  type ITopicConfig,
  isRetriable,
  type KafkaMessage,
  type Message,
  murmur2,
  type Partitioner,
  type PartitionInfo,
  type PartitionMetadataView,
  type PolledMessage,
  Producer,
  type ProducerBatch,
  type ProducerConfig,
  type ProducerRecord,
  type RecordMetadata,
  type ResourceConfigQuery,
  ResourcePatternTypes,
  Retrier,
  type RetryOptions,
  type SendOffsetsArgs,
  sleep,
  type TopicMetadataView,
  type TopicPartitionOffsetAndMetadata,
  Transaction,
  toPositive,
} from "./clients/index";
export { type Clock, ManualClock, SystemClock } from "./clock";
export { closestName } from "./closest-name";
export {
  type AlterConfigOp,
  type BumpLeaderEpochRequest,
  type BumpLeaderEpochResult,
  Controller,
  type ControllerOptions,
  type CreateTopicRequest,
  type MetadataJournal,
  type MetadataListener,
  type ReplicaRef,
} from "./controller";
export { type DataDir, FileDataDir, MemoryDataDir } from "./data-dir";
export { DataDirLock, DataDirLockedError, type DataDirLockOwner, LOCK_FILE } from "./data-dir-lock";
export {
  type DescribePartitionLogOptions,
  describePartitionLog,
  describeProducers,
  type PartitionLogDescription,
  type ProducerStateInfo,
  type RawBatchInfo,
  rawBatchInfo,
} from "./describe-partition-log";
export { ClusterClosedError, ClusterError, type KafkaErrorName } from "./errors";
export {
  type CommittedOffset,
  GroupCoordinator,
  type GroupCoordinatorOptions,
  type GroupDescription,
  type GroupMember,
  type GroupStateName,
  offsetKey,
  type PartitionCount,
} from "./group-coordinator";
export type { HeldTxnMarker, TransactionState } from "./held-txn-markers";
export {
  formatHighWatermarks,
  HIGH_WATERMARK_CHECKPOINT,
  parseHighWatermarks,
} from "./high-watermark-checkpoint";
export { KafkaCluster, type KafkaClusterOptions } from "./kafka-cluster";
export { type ClusterLogger, CONSOLE_LOGGER } from "./logger";
export {
  addLogRewrite,
  type BrokerMetadata,
  type LogRewrite,
  MAX_LOG_REWRITES,
  MetadataImage,
  type PartitionMetadata,
  type TopicMetadata,
} from "./metadata-image";
export type {
  AclRecord,
  ConfigRecord,
  FenceBrokerRecord,
  MetadataLogEntry,
  MetadataRecord,
  MirrorReadOnlyRecord,
  MirrorRecord,
  PartitionChangeRecord,
  PartitionRecord,
  ProducerIdsRecord,
  RegisterBrokerRecord,
  RemoveAclRecord,
  RemoveMirrorRecord,
  RemoveTopicRecord,
  TopicRecord,
  UnfenceBrokerRecord,
} from "./metadata-records";
export {
  highWatermarksHeldByMinIsr,
  Partition,
  type PartitionConfig,
  type RecoveryLoss,
  type ReplicaFetchResult,
} from "./partition";
export { type Random, SeededRandom } from "./random";
export { runSoon } from "./run-soon";
export {
  type Cancel,
  EventLoopScheduler,
  ManualScheduler,
  type ManualSchedulerOptions,
  type Scheduler,
} from "./scheduler";
export { shownValue } from "./shown-value";
export {
  canonicalTopicConfigValue,
  TOPIC_CONFIGS,
  topicConfigDef,
  topicConfigValue,
  validateTopicConfig,
} from "./topic-configs";
export {
  type TopicPartition,
  TransactionCoordinator,
  type TransactionCoordinatorOptions,
  type TransactionMetadata,
  type TransactionStateName,
  type WriteTxnMarker,
} from "./transaction-coordinator";
export { isUuid, randomUuid, type Uuid, ZERO_UUID } from "./uuid";
