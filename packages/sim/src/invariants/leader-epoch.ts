import type { KafkaCluster } from "@cluster-mirror/cluster";
import { leaderLog } from "./logs";
import type { Violation } from "./violation";

/**
 * Leader epoch invariant (spec §4): the destination partition's leader epoch is at least every batch's
 * partition leader epoch in its log (mirrored batches included), so local writes after a failover always
 * carry a higher epoch than anything mirrored.
 */
export function checkLeaderEpoch(label: string, cluster: KafkaCluster, topic: string): Violation[] {
  const meta = cluster.controller.image.topic(topic);
  if (!meta) return [];
  const out: Violation[] = [];
  for (const p of meta.partitions) {
    const log = leaderLog(cluster, topic, p.partition);
    if (!log) continue;
    let max = -1;
    let at = -1n;
    for (const b of log.batches()) {
      if (b.partitionLeaderEpoch > max) {
        max = b.partitionLeaderEpoch;
        at = b.baseOffset;
      }
    }
    if (max > p.leaderEpoch) {
      out.push({
        invariant: "leader-epoch",
        message: `${label} ${topic}-${p.partition}: leader epoch ${p.leaderEpoch} is below the epoch ${max} of the batch at offset ${at}`,
      });
    }
  }
  return out;
}
