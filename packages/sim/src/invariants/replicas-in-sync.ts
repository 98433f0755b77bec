import type { KafkaCluster } from "@cluster-mirror/cluster";
import type { Violation } from "./violation";

/**
 * Once the world settled (every broker running, links healed, mirrors caught up), every running replica of
 * every partition has caught up with its leader and is back in the ISR: a follower that cannot take what
 * its leader sends (a batch it refuses on every fetch) would stay out for good, and the partition would
 * silently run on fewer copies than its replication factor. `skip(topic, partition)` names partitions
 * where a follower may rightly refuse (its leader lost data it still holds).
 */
export function checkReplicasInSync(
  label: string,
  cluster: KafkaCluster,
  skip: (topic: string, partition: number) => boolean,
): Violation[] {
  const out: Violation[] = [];
  for (const topic of cluster.controller.image.topicsById.values()) {
    for (const meta of topic.partitions) {
      if (meta.leader < 0 || skip(topic.name, meta.partition)) continue;
      const leader = cluster.broker(meta.leader)?.replica(topic.name, meta.partition)?.log;
      if (!leader) continue;
      for (const id of meta.replicas) {
        if (id === meta.leader) continue;
        const follower = cluster.broker(id)?.replica(topic.name, meta.partition)?.log;
        if (!follower) continue;
        if (follower.logEndOffset === leader.logEndOffset && meta.isr.includes(id)) continue;
        out.push({
          invariant: "replicas-in-sync",
          message: `${label} ${topic.name}-${meta.partition}: settled, but running broker ${id} is ${meta.isr.includes(id) ? "in" : "out of"} the ISR at log end ${follower.logEndOffset} (log ${follower.logStartOffset}..${follower.logEndOffset}), leader ${meta.leader} at ${leader.logStartOffset}..${leader.logEndOffset}`,
        });
      }
    }
  }
  return out;
}
