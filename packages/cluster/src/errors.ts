import { KafkaError } from "@cluster-mirror/protocol";

/** Kafka error names with their codes and retriable flags (from Kafka's `Errors` enum). */
const KAFKA_ERRORS = {
  OFFSET_OUT_OF_RANGE: [1, false],
  UNKNOWN_TOPIC_OR_PARTITION: [3, true],
  LEADER_NOT_AVAILABLE: [5, true],
  NOT_LEADER_OR_FOLLOWER: [6, true],
  REQUEST_TIMED_OUT: [7, true],
  BROKER_NOT_AVAILABLE: [8, false],
  REPLICA_NOT_AVAILABLE: [9, true],
  MESSAGE_TOO_LARGE: [10, false],
  COORDINATOR_NOT_AVAILABLE: [15, true],
  NOT_COORDINATOR: [16, true],
  INVALID_TOPIC_EXCEPTION: [17, false],
  NOT_ENOUGH_REPLICAS: [19, true],
  NOT_ENOUGH_REPLICAS_AFTER_APPEND: [20, true],
  INVALID_REQUIRED_ACKS: [21, false],
  ILLEGAL_GENERATION: [22, false],
  UNKNOWN_MEMBER_ID: [25, false],
  REBALANCE_IN_PROGRESS: [27, false],
  TOPIC_AUTHORIZATION_FAILED: [29, false],
  GROUP_AUTHORIZATION_FAILED: [30, false],
  CLUSTER_AUTHORIZATION_FAILED: [31, false],
  UNSUPPORTED_VERSION: [35, false],
  TOPIC_ALREADY_EXISTS: [36, false],
  INVALID_PARTITIONS: [37, false],
  INVALID_REPLICATION_FACTOR: [38, false],
  INVALID_REPLICA_ASSIGNMENT: [39, false],
  INVALID_CONFIG: [40, false],
  NOT_CONTROLLER: [41, true],
  INVALID_REQUEST: [42, false],
  INVALID_PRODUCER_EPOCH: [47, false],
  INVALID_TXN_STATE: [48, false],
  INVALID_PRODUCER_ID_MAPPING: [49, false],
  INVALID_TRANSACTION_TIMEOUT: [50, false],
  CONCURRENT_TRANSACTIONS: [51, true],
  TRANSACTIONAL_ID_AUTHORIZATION_FAILED: [53, false],
  SECURITY_DISABLED: [54, false],
  KAFKA_STORAGE_ERROR: [56, true],
  UNKNOWN_PRODUCER_ID: [59, false],
  NON_EMPTY_GROUP: [68, false],
  GROUP_ID_NOT_FOUND: [69, false],
  FENCED_LEADER_EPOCH: [74, true],
  UNKNOWN_LEADER_EPOCH: [75, true],
  OFFSET_NOT_AVAILABLE: [78, true],
  GROUP_SUBSCRIBED_TO_TOPIC: [86, false],
  INVALID_RECORD: [87, false],
  PRODUCER_FENCED: [90, false],
  UNKNOWN_TOPIC_ID: [100, true],
  INCONSISTENT_TOPIC_ID: [103, true],
  INELIGIBLE_REPLICA: [107, false],
  THROTTLING_QUOTA_EXCEEDED: [89, true],
} as const satisfies Record<string, readonly [number, boolean]>;

/** A Kafka error name this cluster can answer with. */
export type KafkaErrorName = keyof typeof KAFKA_ERRORS | "READ_ONLY_TOPIC";

/**
 * An error the embedded cluster answers with: Kafka's name and code, and a message that says what was wrong
 * and what to do. `READ_ONLY_TOPIC` is KIP-1279's ReadOnlyTopic (a produce to a mirror topic that is not
 * STOPPED); Kafka has no code for it yet, so it carries -1.
 */
export class ClusterError extends KafkaError {
  constructor(errorName: KafkaErrorName, message: string, options?: ErrorOptions) {
    const known = errorName === "READ_ONLY_TOPIC" ? ([-1, false] as const) : KAFKA_ERRORS[errorName];
    super(errorName, known[0], known[1], message, options);
  }
}

/**
 * The cluster was closed (`KafkaCluster.close()`): every later call of its clients, every metadata change
 * and every broker start fails at once with this. Not retriable: a closed cluster never comes back (waiting
 * for a leader election would wait forever); to go on, start a new cluster. Closing clients (`disconnect`,
 * `stop`) still works.
 */
export class ClusterClosedError extends KafkaError {
  readonly clusterId: string;

  constructor(clusterId: string, what: string) {
    super(
      "CLUSTER_CLOSED",
      -1,
      false,
      `cannot ${what}: cluster ${clusterId} was closed (KafkaCluster.close()) and cannot be reopened; start a new KafkaCluster to go on`,
    );
    this.clusterId = clusterId;
  }
}

/** Throws INVALID_REQUEST unless `ms` is a finite, non-negative number of milliseconds (`what`: its name). */
export function requireLatencyMs(what: string, ms: number): void {
  if (!Number.isFinite(ms) || ms < 0) {
    throw new ClusterError("INVALID_REQUEST", `${what} must be a non-negative number of ms, got ${ms}`);
  }
}
