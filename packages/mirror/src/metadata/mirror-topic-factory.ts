import type { KafkaCluster } from "@cluster-mirror/cluster";
import type { MirrorDefinition } from "../admin/mirror-config";
import type { SourceTopicInfo } from "../ports";
import { MIRROR_NAME_CONFIG } from "./mirror-topics";
import { mirroredTopicConfigs } from "./topic-configs";

/** The partition count of a source topic (its highest partition index + 1). */
export function sourcePartitionCount(topic: SourceTopicInfo): number {
  return topic.partitions.reduce((n, p) => Math.max(n, p.partition + 1), 0);
}

/**
 * Creates the destination mirror topic of a source topic: same name, same topic id, same partition count,
 * the source's configs minus the exclusion list, plus `mirror.name=<mirror>` (read-only from birth).
 * The replication factor is the one asked for, else the mirror's `default.replication.factor`, else the
 * destination's default. Throws the controller's ClusterError (TOPIC_ALREADY_EXISTS, INCONSISTENT_TOPIC_ID,
 * INVALID_REPLICATION_FACTOR...).
 */
export function createMirrorTopic(
  destination: KafkaCluster,
  def: MirrorDefinition,
  source: SourceTopicInfo,
  replicationFactor?: number,
  options: { validateOnly?: boolean } = {},
): void {
  destination.controller.createTopic(
    {
      name: source.name,
      topicId: source.topicId,
      numPartitions: sourcePartitionCount(source),
      replicationFactor: replicationFactor ?? def.defaultReplicationFactor,
      configs: {
        // Configs the source refused to describe: created without them (the data is still mirrored, as
        // Kafka serves a principal without DESCRIBE_CONFIGS); the sync copies them once they are readable.
        ...mirroredTopicConfigs(source.configs ?? {}, def.topicPropertiesExclude),
        [MIRROR_NAME_CONFIG]: def.name,
      },
    },
    options,
  );
}
