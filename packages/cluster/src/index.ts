export {
  type AclBinding,
  type AclBindingFilter,
  type AclOperation,
  type AclPatternType,
  type AclPermissionType,
  type AclResourceType,
  type AuthorizationRequest,
  Authorizer,
  type AuthorizerConfig,
} from "./acls";
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
export { type Clock, ManualClock } from "./clock";
export {
  type AlterConfigOp,
  type BumpLeaderEpochRequest,
  Controller,
  type ControllerOptions,
  type CreateTopicRequest,
  type MetadataListener,
} from "./controller";
export { type DataDir, FileDataDir, MemoryDataDir } from "./data-dir";
export { ClusterError, type KafkaErrorName } from "./errors";
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
export {
  formatHighWatermarks,
  HIGH_WATERMARK_CHECKPOINT,
  parseHighWatermarks,
} from "./high-watermark-checkpoint";
export { KafkaCluster, type KafkaClusterOptions } from "./kafka-cluster";
export {
  type BrokerMetadata,
  MetadataImage,
  type PartitionMetadata,
  type TopicMetadata,
} from "./metadata-image";
export type {
  ConfigRecord,
  FenceBrokerRecord,
  MetadataLogEntry,
  MetadataRecord,
  PartitionChangeRecord,
  PartitionRecord,
  ProducerIdsRecord,
  RegisterBrokerRecord,
  RemoveTopicRecord,
  TopicRecord,
  UnfenceBrokerRecord,
} from "./metadata-records";
export { Partition, type PartitionConfig, type ReplicaFetchResult } from "./partition";
export { type Random, SeededRandom } from "./random";
export { type Cancel, EventLoopScheduler, ManualScheduler, type Scheduler } from "./scheduler";
export { TOPIC_CONFIGS, topicConfigValue, validateTopicConfig } from "./topic-configs";
export {
  type TopicPartition,
  TransactionCoordinator,
  type TransactionCoordinatorOptions,
  type TransactionMetadata,
  type TransactionStateName,
  type WriteTxnMarker,
} from "./transaction-coordinator";
export { isUuid, randomUuid, type Uuid, ZERO_UUID } from "./uuid";
