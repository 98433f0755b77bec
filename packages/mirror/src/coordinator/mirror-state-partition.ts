import { murmur2, toPositive } from "@cluster-mirror/cluster";
import { encodeMirrorStateKey } from "@cluster-mirror/protocol";
import type { MirrorPartitionKey } from "../ports";

/**
 * The `__mirror_state` partition whose coordinator owns a mirror partition (spec §3):
 * `abs(murmur2(key)) % numPartitions` over the encoded `MirrorPartitionState` key (mirror name, topic id,
 * partition), the same stable hash Kafka's partitioner uses, so every broker, the metadata manager and the
 * admin API agree on the owner. The `LastMirrorEpochs` record of a partition lives in the same partition.
 */
export function mirrorStatePartitionFor(
  key: Pick<MirrorPartitionKey, "mirror" | "topicId" | "partition">,
  numPartitions: number,
): number {
  if (!Number.isInteger(numPartitions) || numPartitions < 1) {
    throw new RangeError(`mirror.topic.num.partitions must be a positive integer, got ${numPartitions}`);
  }
  const bytes = encodeMirrorStateKey({
    kind: "MirrorPartitionState",
    mirrorName: key.mirror,
    topicId: key.topicId,
    partition: key.partition,
  });
  return toPositive(murmur2(bytes)) % numPartitions;
}

/**
 * The id of one mirror partition (mirror, topic id, partition): the coordinator's map key and the partition
 * actor's id, as XState's inspection shows it. Unambiguous: a topic id has a fixed length and the partition
 * is the number after the last `/`.
 */
export function partitionKeyId(key: Pick<MirrorPartitionKey, "mirror" | "topicId" | "partition">): string {
  return `${key.mirror}/${key.topicId}/${key.partition}`;
}
