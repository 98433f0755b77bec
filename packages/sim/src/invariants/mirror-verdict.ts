import type { KafkaCluster } from "@cluster-mirror/cluster";
import type { MirrorPartitionView } from "@cluster-mirror/mirror";
import { foldHistory, readMirrorStateHistory } from "./mirror-state-history";

/**
 * Why a partition must refuse produces right now (spec §5: read-only from the moment a partition becomes a
 * mirror until it is STOPPED), or undefined when it may accept them. Judged independently of the broker's
 * own flag:
 * - the committed `__mirror_state` record of any mirror key of the partition (read from the log, plus the
 *   live coordinators' committed views when part of the log has no running leader) is not STOPPED;
 * - its topic's `mirror.name` asks for mirroring (not `.removed`): a re-add made it a mirror again, its
 *   START maybe still to come, or the topic was created as one;
 * - any running replica of the partition holds it read-only (the cluster disagrees with itself).
 * Internal topics (`__*`) are never mirrors.
 */
export function readOnlyReason(
  cluster: KafkaCluster,
  views: readonly MirrorPartitionView[],
  topic: string,
  partition: number,
): string | undefined {
  if (topic.startsWith("__")) return undefined;
  const meta = cluster.controller.image.topic(topic);
  if (!meta) return undefined;
  const suffix = `/${meta.topicId.toLowerCase()}/${partition}`;
  const history = readMirrorStateHistory(cluster);
  for (const [keyId, f] of foldHistory(history.entries)) {
    if (!keyId.endsWith(suffix) || !f.state || f.state.state === "STOPPED") continue;
    return `its committed mirror state (${keyId.slice(0, -suffix.length)}) is ${f.state.state}`;
  }
  if (history.incomplete.length > 0) {
    const live = views.find(
      (v) => v.key.topicId === meta.topicId && v.key.partition === partition && v.state !== "STOPPED",
    );
    if (live) return `its committed mirror state (${live.key.mirror}, live coordinator) is ${live.state}`;
  }
  const mirrorName = meta.configs.get("mirror.name");
  if (mirrorName !== undefined && !mirrorName.endsWith(".removed")) {
    return `its topic's mirror.name (${mirrorName}) asks for mirroring`;
  }
  for (const id of cluster.runningBrokers()) {
    if (cluster.broker(id)?.replica(topic, partition)?.isReadOnly(mirrorName)) {
      return `broker ${id} holds its replica read-only (mirror.name=${mirrorName ?? "unset"})`;
    }
  }
  return undefined;
}
