import { type KafkaCluster, offsetKey } from "@cluster-mirror/cluster";
import type { ActiveGroup } from "../model";
import { leaderLog } from "./logs";
import type { Violation } from "./violation";

/**
 * Group offset sync (spec §7): on a destination, every committed offset of a synced group on a mirrored
 * topic lies within [log start, high watermark] of the destination partition's leader (the sync clamps to
 * the high watermark, as MirrorMaker 2 syncs only replicated records: an offset past it would move a
 * consumer past the log end of a new leader that lacks the leader's unreplicated tail); and a group with active members on
 * the destination keeps its own commit (mirroring never overwrites it). With `commitMax`, a synced offset
 * is also never above the highest offset the group ever committed (see `checkGroupOffsetsInLog`).
 */
export function checkGroupOffsets(
  label: string,
  cluster: KafkaCluster,
  syncedGroups: ReadonlySet<string>,
  mirroredTopics: ReadonlySet<string>,
  activeGroups: readonly ActiveGroup[],
  commitMax?: ReadonlyMap<string, bigint>,
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
      const max = commitMax?.get(`${groupId}\0${key}`);
      // Raised to the log start (records deleted below it) is the clamp's, not a skip.
      if (
        commitMax &&
        (max === undefined || committed.offset > max) &&
        committed.offset > log.logStartOffset
      ) {
        out.push({
          invariant: "group-offset-committed",
          message: `${label} group ${groupId} ${key}: synced offset ${committed.offset} above every offset the group committed (${max ?? "none"}) and above the log start ${log.logStartOffset}`,
        });
      }
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

/** Mirror partition states past PREPARING's truncation, in which the log holds the source's offsets. */
const COPYING = new Set(["MIRRORING", "EPOCH_FENCING", "PAUSING", "PAUSED"]);

/** One mirror partition of a cluster with its committed state. */
export interface MirrorPartitionView {
  topic: string;
  partition: number;
  state: string;
}

/**
 * The consumer's side of group offset sync, at every instant: a group's committed offset on a mirror
 * partition never points past the destination leader's log end, where a consumer resuming from it after a
 * failover would skip whatever is written there later. Checked for every group (whoever committed it) while
 * the partition copies its source (past PREPARING, whose truncation must take committed offsets past its cut
 * with it), and for the groups this cluster never committed itself (`localGroups`: its own applications may
 * commit any offset on a writable topic) once it failed over (STOPPED). Groups active here are the
 * `group-active-kept` check's. The log end, not the high watermark: a new leader's high watermark lags
 * behind its predecessor's for a while (the settled check compares with the high watermark). And a synced
 * group (not `localGroups`) never holds more than the highest offset the workload ever committed for it
 * (`commitMax`), unless raised to the log start: the sync copies a commit or clamps it down (or up to the
 * log start, below which the records are deleted), so a consumer resuming from a synced offset
 * never starts past a record it did not commit on its source. (Only an upper bound: a periodic sync may
 * lag a source commit that moved back, which is the sync interval's, not a loss.)
 */
export function checkGroupOffsetsInLog(
  label: string,
  cluster: KafkaCluster,
  partitions: readonly MirrorPartitionView[],
  localGroups: ReadonlySet<string>,
  activeGroups: readonly ActiveGroup[],
  commitMax: ReadonlyMap<string, bigint>,
): Violation[] {
  const out: Violation[] = [];
  const active = new Set(activeGroups.map((g) => g.groupId));
  const groups = cluster.groups
    .listGroups()
    .map((g) => g.groupId)
    .filter((g) => !active.has(g));
  if (groups.length === 0) return out;
  for (const p of partitions) {
    const stopped = p.state === "STOPPED";
    if (!stopped && !COPYING.has(p.state)) continue;
    const log = leaderLog(cluster, p.topic, p.partition);
    if (!log) continue;
    const tp = [{ topic: p.topic, partition: p.partition }];
    for (const groupId of groups) {
      if (stopped && localGroups.has(groupId)) continue;
      const committed = cluster.groups.fetchOffsets(groupId, tp).get(offsetKey(tp[0]!));
      if (committed === undefined) continue;
      const max = commitMax.get(`${groupId}\0${offsetKey(tp[0]!)}`);
      if (
        !localGroups.has(groupId) &&
        (max === undefined || committed.offset > max) &&
        committed.offset > log.logStartOffset
      ) {
        out.push({
          invariant: "group-offset-committed",
          message: `${label} group ${groupId} ${p.topic}-${p.partition} (${p.state}): synced offset ${committed.offset} above every offset the group committed (${max ?? "none"}) and above the log start ${log.logStartOffset}: its consumer would skip records after its commit`,
        });
      }
      if (committed.offset <= log.logEndOffset) continue;
      out.push({
        invariant: "group-offset-in-log",
        message: `${label} group ${groupId} ${p.topic}-${p.partition} (${p.state}): committed offset ${committed.offset} past the log end ${log.logEndOffset}; a consumer resuming there after a failover skips the records written at ${log.logEndOffset}..${committed.offset - 1n}`,
      });
    }
  }
  return out;
}
