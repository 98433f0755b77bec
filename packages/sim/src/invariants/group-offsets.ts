import { type KafkaCluster, offsetKey } from "@cluster-mirror/cluster";
import type { ActiveGroup } from "../model";
import { leaderLog } from "./logs";
import type { Violation } from "./violation";

/**
 * Group offset sync (spec §7): on a destination, every committed offset of a synced group on a mirrored
 * topic lies within [log start, high watermark] of the destination partition's leader (the sync clamps to
 * the high watermark, as MirrorMaker 2 syncs only replicated records: an offset past it would move a
 * consumer past the log end of a new leader that lacks the leader's unreplicated tail); and a group with active members on
 * the destination keeps its own commit (mirroring never overwrites it).
 */
export function checkGroupOffsets(
  label: string,
  cluster: KafkaCluster,
  syncedGroups: ReadonlySet<string>,
  mirroredTopics: ReadonlySet<string>,
  activeGroups: readonly ActiveGroup[],
): Violation[] {
  const out: Violation[] = [];
  const active = new Set(activeGroups.map((g) => g.groupId));
  for (const groupId of syncedGroups) {
    if (active.has(groupId)) continue;
    for (const [key, committed] of cluster.groups.fetchOffsets(groupId)) {
      const i = key.lastIndexOf(":");
      const topic = key.slice(0, i);
      const partition = Number(key.slice(i + 1));
      if (!mirroredTopics.has(topic)) continue;
      const log = leaderLog(cluster, topic, partition);
      if (!log) continue;
      if (committed.offset < log.logStartOffset || committed.offset > log.highWatermark) {
        out.push({
          invariant: "group-offset-range",
          message: `${label} group ${groupId} ${key}: synced offset ${committed.offset} outside [${log.logStartOffset}, ${log.highWatermark}] (log start, high watermark)`,
        });
      }
    }
  }
  for (const g of activeGroups) {
    const c = cluster.groups
      .fetchOffsets(g.groupId)
      .get(offsetKey({ topic: g.topic, partition: g.partition }));
    if (c?.offset !== g.offset) {
      out.push({
        invariant: "group-active-kept",
        message: `${label} active group ${g.groupId} ${g.topic}-${g.partition}: committed ${g.offset} on the destination but now ${c?.offset ?? "none"} (overwritten by the mirror)`,
      });
    }
  }
  return out;
}
