import type { KafkaCluster } from "@cluster-mirror/cluster";
import { batchesByOffset, hexOf } from "./logs";
import type { Violation } from "./violation";

/**
 * Replica agreement: every in-sync replica of every partition stores, below the leader's high watermark and
 * above both log starts, byte for byte the batches its leader stores (the same base offsets, the same
 * bytes). A replica that holds other content there would serve it as committed once it leads; KIP-320's
 * epoch check cannot see it when both hold batches of the same epochs at the same offsets (a mirror's
 * truncation followed by the source's batches).
 */
export function checkReplicasAgree(label: string, cluster: KafkaCluster): Violation[] {
  const out: Violation[] = [];
  for (const topic of cluster.controller.image.topicsById.values()) {
    for (const meta of topic.partitions)
      out.push(...checkPartitionReplicasAgree(label, cluster, topic.name, meta.partition));
  }
  return out;
}

/**
 * `checkReplicasAgree` for one partition, from offset `from` on (batches ending below it are skipped): run
 * the moment a leader's high watermark moves, over what the move committed (`afterHighWatermarkMove`).
 */
export function checkPartitionReplicasAgree(
  label: string,
  cluster: KafkaCluster,
  topic: string,
  partition: number,
  from = 0n,
): Violation[] {
  const meta = cluster.controller.image.partition(topic, partition);
  if (!meta || meta.leader < 0) return [];
  const leader = cluster.broker(meta.leader)?.replica(topic, partition);
  if (!leader) return [];
  const out: Violation[] = [];
  const hw = leader.log.highWatermark;
  let leaderBatches: ReturnType<typeof batchesByOffset> | undefined;
  for (const id of meta.isr) {
    if (id === meta.leader) continue;
    const follower = cluster.broker(id)?.replica(topic, partition)?.log;
    if (!follower) continue;
    const start =
      follower.logStartOffset > leader.log.logStartOffset
        ? follower.logStartOffset
        : leader.log.logStartOffset;
    const name = `${label} ${topic}-${partition}`;
    for (const b of follower.batches()) {
      if (b.baseOffset < start || b.lastOffset < from) continue;
      if (b.lastOffset >= hw) break;
      leaderBatches ??= batchesByOffset(leader.log);
      const ours = leaderBatches.get(b.baseOffset);
      if (ours === undefined || hexOf(ours) !== hexOf(b)) {
        out.push({
          invariant: "replicas-agree",
          message: `${name}: in-sync broker ${id}'s batch at offset ${b.baseOffset} (epoch ${b.partitionLeaderEpoch}) ${ours ? `differs from leader ${meta.leader}'s (epoch ${ours.partitionLeaderEpoch})` : `is not a batch on leader ${meta.leader}`}, below its high watermark ${hw}`,
        });
        break;
      }
    }
  }
  return out;
}
