import type { KafkaCluster } from "@cluster-mirror/cluster";
import type { SourceTopicInfo } from "../ports";

/** One line of `cluster-mirror verify`: what was compared, whether source and destination agree, and where not. */
export interface VerifyCheck {
  /** `batches`, `offsets`, `topic ids`, `configs`, `acls`, `group offsets`. */
  check: string;
  ok: boolean;
  /** What was compared, e.g. `5 partitions, 42 batches`. */
  compared: string;
  /** Each difference found (empty when ok); for a check not compared, why and what to do. */
  differences: string[];
  /** Set when the check could not be made (the source refused to describe what it compares): not ok. */
  notCompared?: true;
}

/** Differences listed per check (the count says how many more). */
export const MAX_LISTED = 20;

/** "1 topic", "2 topics": a count with its noun. */
export function counted(n: number | bigint, singular: string, plural = `${singular}s`): string {
  return `${n} ${n === 1 || n === 1n ? singular : plural}`;
}

export function check(name: string, compared: string, differences: string[]): VerifyCheck {
  const listed = differences.slice(0, MAX_LISTED);
  if (differences.length > MAX_LISTED) listed.push(`... ${differences.length - MAX_LISTED} more`);
  return { check: name, ok: differences.length === 0, compared, differences: listed };
}

export function leader(destination: KafkaCluster, topic: string, partition: number) {
  const meta = destination.controller.image.partition(topic, partition);
  if (!meta || meta.leader < 0) return undefined;
  return destination.broker(meta.leader)?.replica(topic, partition)?.log;
}

/** The source's partition as it described it, undefined when it has no such topic or partition. */
export function sourcePartition(
  sourceTopics: ReadonlyMap<string, SourceTopicInfo>,
  topic: string,
  partition: number,
) {
  return sourceTopics.get(topic)?.partitions.find((x) => x.partition === partition);
}

export function partitionCount(destination: KafkaCluster, topic: string): number {
  return destination.controller.image.topic(topic)?.partitions.length ?? 0;
}
