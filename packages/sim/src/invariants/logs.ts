import type { KafkaCluster } from "@cluster-mirror/cluster";
import type { PartitionLog } from "@cluster-mirror/log";
import type { RecordBatch } from "@cluster-mirror/protocol";

/** The log of a partition on its running leader, or undefined (no topic, no running leader). */
export function leaderLog(cluster: KafkaCluster, topic: string, partition: number): PartitionLog | undefined {
  const meta = cluster.controller.image.partition(topic, partition);
  if (!meta || meta.leader < 0) return undefined;
  return cluster.broker(meta.leader)?.replica(topic, partition)?.log;
}

/** The batches of a log, by base offset. */
export function batchesByOffset(log: PartitionLog): Map<bigint, RecordBatch> {
  const out = new Map<bigint, RecordBatch>();
  for (const b of log.batches()) out.set(b.baseOffset, b);
  return out;
}

/** Hex of a batch's bytes. */
export function hexOf(batch: RecordBatch): string {
  return Buffer.from(batch.buffer).toString("hex");
}
