import { closestName } from "./closest-name";
import { ClusterError } from "./errors";
import type { KafkaClusterOptions } from "./kafka-cluster";

/** Every key of `KafkaClusterOptions`; the `satisfies` keeps it in step with the interface. */
const OPTION_KEYS = Object.keys({
  brokers: 0,
  dataDir: 0,
  dataDirLock: 0,
  memoryDataDirs: 0,
  fsync: 0,
  logMaxOpenFiles: 0,
  clock: 0,
  random: 0,
  scheduler: 0,
  clusterId: 0,
  authorizer: 0,
  replicaLagTimeMaxMs: 0,
  minInsyncReplicas: 0,
  producerIdBlockSize: 0,
  producerIdExpirationMs: 0,
  producerIdExpirationCheckIntervalMs: 0,
  transactionalIdExpirationMs: 0,
  transactionAbortIntervalMs: 0,
  groupSessionCheckIntervalMs: 0,
  onGroupOffsetsChanged: 0,
  onTransactionStateChanged: 0,
  logger: 0,
} satisfies Record<keyof KafkaClusterOptions, 0>);

/**
 * Refuses an option `KafkaCluster.start` does not know, before anything starts: a misspelled `brokr: 1`
 * otherwise started the default three brokers, and `minInsyncReplica: 2` left min.insync.replicas at 1,
 * without a word (Kafka's own config parsing warns of a config it does not know).
 */
export function checkClusterOptionKeys(options: object): void {
  for (const key of Object.keys(options)) {
    if (OPTION_KEYS.includes(key)) continue;
    const close = closestName(key, OPTION_KEYS);
    throw new ClusterError(
      "INVALID_REQUEST",
      `KafkaCluster.start has no option '${key}'${close === undefined ? "." : `; did you mean '${close}'?`} Known: ${OPTION_KEYS.join(", ")}.`,
    );
  }
}
