/**
 * kafkajs 2.2.4's public shapes (messages, record metadata, enums), so code written against these clients
 * reads like ordinary kafkajs code. Offsets and timestamps are strings, as in kafkajs.
 */

/**
 * Header values by key; an array is a repeated header (kafkajs's `IHeaders`). Order is kept; a null value
 * is a header without a value.
 */
export interface IHeaders {
  [key: string]: Buffer | string | null | (Buffer | string | null)[] | undefined;
}

/** A record to produce. */
export interface Message {
  key?: Buffer | string | null;
  value: Buffer | string | null;
  partition?: number;
  headers?: IHeaders;
  /** Milliseconds since the epoch, as a string; defaults to the cluster clock's now. */
  timestamp?: string;
}

/** kafkajs's `CompressionTypes`. */
export const CompressionTypes = { None: 0, GZIP: 1, Snappy: 2, LZ4: 3, ZSTD: 4 } as const;
/** A compression codec id. */
export type CompressionTypes = (typeof CompressionTypes)[keyof typeof CompressionTypes];

/** One topic of a produce. */
export interface ProducerRecord {
  topic: string;
  messages: Message[];
  /** 0, 1 or -1 (all, the default). */
  acks?: number;
  /** How long an acks=all produce waits for the in-sync replicas (default 30000). */
  timeout?: number;
  compression?: CompressionTypes;
}

/** Several topics in one call. */
export interface ProducerBatch {
  topicMessages: { topic: string; messages: Message[] }[];
  acks?: number;
  timeout?: number;
  compression?: CompressionTypes;
}

/** One partition's answer to a produce (kafkajs's `RecordMetadata`, plus our `throttleTimeMs`). */
export interface RecordMetadata {
  topicName: string;
  partition: number;
  errorCode: number;
  /** Offset of the first record of the batch, as a string. */
  baseOffset: string;
  /** "-1": this cluster uses CreateTime. */
  logAppendTime: string;
  logStartOffset: string;
  /** The broker's quota throttle for this request; the producer waits this long before its next request. */
  throttleTimeMs: number;
}

/** A consumed record (kafkajs's `KafkaMessage`). */
export interface KafkaMessage {
  key: Buffer | null;
  value: Buffer | null;
  timestamp: string;
  attributes: number;
  offset: string;
  headers: IHeaders;
  size?: number;
  /** Our extra: the partition leader epoch of the record's batch. */
  leaderEpoch: number;
}

/** Topic and partitions with offsets, as commit/seek calls take them. */
export interface TopicPartitionOffsetAndMetadata {
  topic: string;
  partition: number;
  offset: string;
  metadata?: string | null;
}

/** kafkajs's `ConfigResourceTypes`. */
export const ConfigResourceTypes = { UNKNOWN: 0, TOPIC: 2, BROKER: 4, BROKER_LOGGER: 8 } as const;
/**
 * Kafka's `AlterConfigOp.OpType` ids, for `incrementalAlterConfigs` (kafkajs 2.2.4 has no IncrementalAlterConfigs,
 * so no enum of its own): an entry's `operation` is one of these ids or its name ("SET", ...).
 */
export const AlterConfigOpTypes = { SET: 0, DELETE: 1, APPEND: 2, SUBTRACT: 3 } as const;
/** kafkajs's `ConfigSource`. */
export const ConfigSource = {
  UNKNOWN: 0,
  TOPIC_CONFIG: 1,
  DYNAMIC_BROKER_CONFIG: 2,
  DYNAMIC_DEFAULT_BROKER_CONFIG: 3,
  STATIC_BROKER_CONFIG: 4,
  DEFAULT_CONFIG: 5,
  DYNAMIC_BROKER_LOGGER_CONFIG: 6,
} as const;
/** kafkajs's `AclResourceTypes`. */
export const AclResourceTypes = {
  UNKNOWN: 0,
  ANY: 1,
  TOPIC: 2,
  GROUP: 3,
  CLUSTER: 4,
  TRANSACTIONAL_ID: 5,
  DELEGATION_TOKEN: 6,
} as const;
/** kafkajs's `AclOperationTypes`. */
export const AclOperationTypes = {
  UNKNOWN: 0,
  ANY: 1,
  ALL: 2,
  READ: 3,
  WRITE: 4,
  CREATE: 5,
  DELETE: 6,
  ALTER: 7,
  DESCRIBE: 8,
  CLUSTER_ACTION: 9,
  DESCRIBE_CONFIGS: 10,
  ALTER_CONFIGS: 11,
  IDEMPOTENT_WRITE: 12,
} as const;
/** kafkajs's `AclPermissionTypes`. */
export const AclPermissionTypes = { UNKNOWN: 0, ANY: 1, DENY: 2, ALLOW: 3 } as const;
/** kafkajs's `ResourcePatternTypes`. */
export const ResourcePatternTypes = { UNKNOWN: 0, ANY: 1, MATCH: 2, LITERAL: 3, PREFIXED: 4 } as const;

/** An ACL as kafkajs's createAcls takes it (numeric kafkajs enums). */
export interface AclEntry {
  resourceType: number;
  resourceName: string;
  resourcePatternType: number;
  principal: string;
  host: string;
  operation: number;
  permissionType: number;
}

/** An ACL filter as kafkajs's describeAcls/deleteAcls take it: null/undefined or ANY match anything. */
export interface AclFilter {
  resourceType: number;
  resourceName?: string | null;
  resourcePatternType: number;
  principal?: string | null;
  host?: string | null;
  operation: number;
  permissionType: number;
}
