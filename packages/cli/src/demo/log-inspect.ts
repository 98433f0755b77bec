import { describePartitionLog, type KafkaCluster } from "@cluster-mirror/cluster";

/** Control record types (spec §10). */
export const CONTROL = { ABORT: 0, COMMIT: 1, MIRROR_PID_RESET: 7 } as const;

/** One partition of a topic. */
export interface TopicPartitionRef {
  topic: string;
  partition: number;
}

/** Every partition of `topics` on `cluster`, in order. */
export function partitionsOf(cluster: KafkaCluster, topics: readonly string[]): TopicPartitionRef[] {
  return topics.flatMap((topic) =>
    (cluster.controller.image.topic(topic)?.partitions ?? []).map((p) => ({ topic, partition: p.partition })),
  );
}

/** The partition's offsets on its leader (log start and end, high watermark, LSO). */
export function leaderLog(cluster: KafkaCluster, tp: TopicPartitionRef) {
  return describePartitionLog(cluster, tp.topic, tp.partition, { maxBatches: 0 });
}

/** Every batch of a partition on its leader, through the documented raw-read API. */
function allBatches(cluster: KafkaCluster, tp: TopicPartitionRef, includeBytes = false) {
  return describePartitionLog(cluster, tp.topic, tp.partition, {
    maxBatches: Number.POSITIVE_INFINITY,
    includeBytes,
  }).batches;
}

/** Control batches of one type on a partition's leader, with their producer ids. */
export function controlBatches(
  cluster: KafkaCluster,
  tp: TopicPartitionRef,
  type: number,
): { offset: bigint; producerId: bigint; epoch: number }[] {
  return allBatches(cluster, tp)
    .filter((b) => b.isControl && b.controlType === type)
    .map((b) => ({ offset: b.baseOffset, producerId: b.producerId, epoch: b.partitionLeaderEpoch }));
}

/** Every batch of a partition on its leader as hex (byte-for-byte comparison). */
export function batchHex(cluster: KafkaCluster, tp: TopicPartitionRef): string[] {
  return allBatches(cluster, tp, true).map((b) => b.bytes!.toString("hex"));
}

/** `topic-partition`. */
export function tpName(tp: TopicPartitionRef): string {
  return `${tp.topic}-${tp.partition}`;
}
