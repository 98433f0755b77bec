/**
 * In-process clients shaped like kafkajs 2.2.4: `new EmbeddedKafka(cluster, { clientId, principal })`, then
 * `.admin()`, `.producer()`, `.consumer({ groupId })`.
 */
export {
  Admin,
  type AdminConfig,
  type AlterConfigsResponse,
  type DescribeConfigResponse,
  type GroupDescriptionView,
  type IncrementalResourceConfig,
  type IResourceConfig,
  type ITopicConfig,
  type PartitionMetadataView,
  type ResourceConfigQuery,
  type TopicMetadataView,
} from "./admin";
export {
  type Batch,
  Consumer,
  type ConsumerConfig,
  type ConsumerEvent,
  type ConsumerEventName,
  ConsumerEvents,
  type ConsumerRunConfig,
  type ConsumerSubscribeTopics,
  type EachBatchPayload,
  type EachMessagePayload,
  type PolledMessage,
} from "./consumer";
export { type ClientContext, EmbeddedKafka, type EmbeddedKafkaConfig } from "./kafka";
export {
  createDefaultPartitioner,
  murmur2,
  type Partitioner,
  type PartitionInfo,
  toPositive,
} from "./partitioner";
export { Producer, type ProducerConfig } from "./producer";
export { type DecodedFetch, decodeFetch, decodeHeaders, encodeHeaders, encodeMessages } from "./records";
export { isRetriable, Retrier, type RetryOptions, sleep } from "./retry";
export { type SendOffsetsArgs, Transaction } from "./transaction";
export {
  type AclEntry,
  type AclFilter,
  AclOperationTypes,
  AclPermissionTypes,
  AclResourceTypes,
  AlterConfigOpTypes,
  CompressionTypes,
  ConfigResourceTypes,
  ConfigSource,
  type IHeaders,
  type KafkaMessage,
  type Message,
  type ProducerBatch,
  type ProducerRecord,
  type RecordMetadata,
  ResourcePatternTypes,
  type TopicPartitionOffsetAndMetadata,
} from "./types";
