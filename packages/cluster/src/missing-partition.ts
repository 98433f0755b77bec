import type { MetadataImage } from "./metadata-image";

/**
 * Why `topic`-`partition` is not a partition the cluster has (what Kafka answers UNKNOWN_TOPIC_OR_PARTITION
 * for, as KafkaApis does for OffsetCommit and TxnOffsetCommit): the topic is missing, or has fewer
 * partitions. Undefined when the cluster has the partition.
 */
export function missingPartition(image: MetadataImage, topic: string, partition: number): string | undefined {
  if (image.partition(topic, partition) !== undefined) return undefined;
  const count = image.topic(topic)?.partitions.length;
  return count === undefined
    ? `topic '${topic}' does not exist`
    : `topic '${topic}' has partitions 0 to ${count - 1}; partition ${partition} does not exist`;
}
