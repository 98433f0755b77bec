import type { KafkaCluster } from "@cluster-mirror/cluster";
import { MIRROR_STATE_TOPIC } from "@cluster-mirror/mirror";
import {
  decodeMirrorStateRecord,
  decodeRecords,
  type MirrorPartitionStateValue,
} from "@cluster-mirror/protocol";
import { leaderLog } from "./logs";

/** One decoded `__mirror_state` record, in log order. */
export interface MirrorStateEntry {
  /** `__mirror_state` partition and offset. */
  statePartition: number;
  offset: bigint;
  /** `mirror/topicId/partition`. */
  keyId: string;
  kind: "MirrorPartitionState" | "LastMirrorEpochs";
  /** Null for a tombstone. */
  state: MirrorPartitionStateValue | null;
  lastMirrorEpoch: number | null;
}

/** The history of one cluster's `__mirror_state`, and whether any of it was unreadable right now. */
export interface MirrorStateHistory {
  entries: MirrorStateEntry[];
  /** Partitions with no running leader, or whose log no longer starts at 0 (compacted or deleted). */
  incomplete: number[];
  /** Records that did not decode (each is a finding of its own). */
  undecodable: string[];
}

/** `mirror/topicId/partition`, the topic id lowercased. */
export function keyIdOf(mirror: string, topicId: string, partition: number): string {
  return `${mirror}/${topicId.toLowerCase()}/${partition}`;
}

/**
 * Reads every record of every `__mirror_state` partition from its leader's log, from offset 0, and decodes
 * it independently of the engine's loader.
 */
export function readMirrorStateHistory(cluster: KafkaCluster): MirrorStateHistory {
  const topic = cluster.controller.image.topic(MIRROR_STATE_TOPIC);
  const history: MirrorStateHistory = { entries: [], incomplete: [], undecodable: [] };
  if (!topic) return history;
  for (const p of topic.partitions) {
    const log = leaderLog(cluster, MIRROR_STATE_TOPIC, p.partition);
    if (!log || log.logStartOffset > 0n) {
      history.incomplete.push(p.partition);
      if (!log) continue;
    }
    for (const batch of log.batches()) {
      if (batch.isControl) continue;
      for (const r of decodeRecords(batch)) {
        if (r.key === null) continue;
        const offset = batch.baseOffset + BigInt(r.offsetDelta);
        try {
          const d = decodeMirrorStateRecord(r.key, r.value);
          const keyId = keyIdOf(d.key.mirrorName, d.key.topicId, d.key.partition);
          if (d.key.kind === "MirrorPartitionState") {
            const state = d.value as MirrorPartitionStateValue | null;
            history.entries.push({
              statePartition: p.partition,
              offset,
              keyId,
              kind: d.key.kind,
              state,
              lastMirrorEpoch: null,
            });
          } else {
            const v = d.value as { lastMirrorEpoch: number } | null;
            history.entries.push({
              statePartition: p.partition,
              offset,
              keyId,
              kind: d.key.kind,
              state: null,
              lastMirrorEpoch: v === null ? null : v.lastMirrorEpoch,
            });
          }
        } catch (error) {
          history.undecodable.push(`${MIRROR_STATE_TOPIC}-${p.partition}@${offset}: ${String(error)}`);
        }
      }
    }
  }
  return history;
}

/** Last state and LME per key after replaying entries (tombstones delete). */
export interface FoldedState {
  state: MirrorPartitionStateValue | null;
  lastMirrorEpoch: number;
}

/** Replays entries in order into the last value per key (independent of the engine's fold). */
export function foldHistory(entries: readonly MirrorStateEntry[]): Map<string, FoldedState> {
  const out = new Map<string, FoldedState>();
  for (const e of entries) {
    const cur = out.get(e.keyId) ?? { state: null, lastMirrorEpoch: -1 };
    if (e.kind === "MirrorPartitionState") cur.state = e.state;
    else cur.lastMirrorEpoch = e.lastMirrorEpoch ?? -1;
    if (cur.state === null && cur.lastMirrorEpoch < 0) out.delete(e.keyId);
    else out.set(e.keyId, cur);
  }
  return out;
}

/** What log compaction keeps: the last record of each (key, kind), tombstones included, in offset order. */
export function compactHistory(entries: readonly MirrorStateEntry[]): MirrorStateEntry[] {
  const last = new Map<string, number>();
  entries.forEach((e, i) => {
    last.set(`${e.statePartition}\0${e.kind}\0${e.keyId}`, i);
  });
  const keep = new Set(last.values());
  return entries.filter((_, i) => keep.has(i));
}
