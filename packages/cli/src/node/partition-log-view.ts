import {
  describePartitionLog,
  describeProducers,
  type KafkaCluster,
  type PartitionLogDescription,
  type ProducerStateInfo,
  type RawBatchInfo,
} from "@cluster-mirror/cluster";

/** A batch header as `GET /v1/log` shows it (`describePartitionLog`'s, without the bytes). */
export type BatchView = Omit<RawBatchInfo, "bytes">;

/** A partition's offsets, batches and producer state on its leader. */
export interface PartitionLogView extends Omit<PartitionLogDescription, "batches"> {
  batches: BatchView[];
  /** The partition's producer state (`describeProducers`). */
  producers: ProducerStateInfo[];
}

/**
 * Reads a partition's log on its leader through the cluster's documented API (`describePartitionLog`,
 * `describeProducers`); UNKNOWN_TOPIC_OR_PARTITION / LEADER_NOT_AVAILABLE otherwise.
 */
export function partitionLog(
  cluster: KafkaCluster,
  topic: string,
  partition: number,
  options: { fromOffset?: bigint; maxBatches?: number } = {},
): PartitionLogView {
  const log = describePartitionLog(cluster, topic, partition, {
    maxBatches: Number.POSITIVE_INFINITY,
    ...options,
  });
  return { ...log, producers: describeProducers(cluster, topic, partition) };
}
