import type { KafkaCluster } from "@cluster-mirror/cluster";

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

/** The partition's log on its leader. */
export function leaderLog(cluster: KafkaCluster, tp: TopicPartitionRef) {
  return cluster.leaderFor(tp.topic, tp.partition).replica(tp.topic, tp.partition)!.log;
}

/** Control batches of one type on a partition's leader, with their producer ids. */
export function controlBatches(
  cluster: KafkaCluster,
  tp: TopicPartitionRef,
  type: number,
): { offset: bigint; producerId: bigint; epoch: number }[] {
  return [...leaderLog(cluster, tp).batches()]
    .filter((b) => b.isControl && b.controlType === type)
    .map((b) => ({ offset: b.baseOffset, producerId: b.producerId, epoch: b.partitionLeaderEpoch }));
}

/** Every batch of a partition on its leader as hex (byte-for-byte comparison). */
export function batchHex(cluster: KafkaCluster, tp: TopicPartitionRef): string[] {
  return [...leaderLog(cluster, tp).batches()].map((b) => b.buffer.toString("hex"));
}

/** `topic-partition`. */
export function tpName(tp: TopicPartitionRef): string {
  return `${tp.topic}-${tp.partition}`;
}
