import type { KafkaCluster } from "@cluster-mirror/cluster";
import type { MirrorPartitionView } from "@cluster-mirror/mirror";
import { failoverAlignment } from "./invariants/alignment";
import { checkPromisedWrites, stillAcknowledged } from "./invariants/durability";
import { checkBarrierAfterElection, checkFailover } from "./invariants/failover";
import { leaderLog } from "./invariants/logs";
import { foldHistory, keyIdOf, readMirrorStateHistory } from "./invariants/mirror-state-history";
import { checkCommittedTxns } from "./invariants/transactions";
import {
  checkFailoverWithoutMirroredData,
  failoverWithoutMirroredData,
} from "./invariants/unmirrored-failover";
import type { AckedWrite, CommittedTxn } from "./model";
import type { Simulation } from "./simulation";
import type { MirrorEdge } from "./topology";

/** What a planned failover's catch-up barrier promised: everything acknowledged and committed before it. */
export interface CatchUpBarrier {
  acked: AckedWrite[];
  commits: CommittedTxn[];
}

/** A failover whose `removeTopics` returned, with partitions not yet checked at STOPPED. */
export interface PendingFailover {
  edge: MirrorEdge;
  topic: string;
  /** Committed state per partition when the failover was asked for. */
  before: Map<number, string>;
  barrier: CatchUpBarrier | undefined;
  /** Partitions already checked at STOPPED. */
  done: Set<number>;
  /** Partitions whose log end an unclean election on the destination lost before they were checked. */
  lostByElection: Set<number>;
}

/**
 * Runs the STOPPED checks of every pending failover partition that reached STOPPED, before anything else
 * can write to it: called after each command, before every produce reaches a broker, and at settle. A
 * failover whose topic was re-added meanwhile is dropped (it was cancelled).
 *
 * A partition is checked once its topic is writable: STOPPED recorded and its read-only flag cleared
 * (STOPPED's step), the point the failover's promise is about. Until then nothing but the engine
 * writes to it, and STOPPED's step may still write the barrier again on a leader an unclean election chose
 * without it (`EffectExecutor.clearReadOnly`); checked at STOPPED's record, such a leader was reported
 * (soak faults FC_SEED=502 with that step). At `settled` every STOPPED partition is checked, read-only or not.
 */
export function completeFailovers(sim: Simulation, settled = false): void {
  for (const f of [...sim.pendingFailovers]) {
    if (sim.edgeState(f.edge, f.topic) !== "REMOVED") {
      sim.pendingFailovers.splice(sim.pendingFailovers.indexOf(f), 1);
      continue;
    }
    const dest = sim.node(f.edge.to);
    const partitions = dest.cluster.controller.image.topic(f.topic)?.partitions.length ?? 0;
    const views = dest.mirroring.coordinators.describe(f.edge.mirror).filter((v) => v.key.topic === f.topic);
    for (const view of [...views, ...stoppedInHistoryOnly(sim, f, views, partitions)]) {
      if (view.state !== "STOPPED" || f.done.has(view.key.partition)) continue;
      if (!settled && awaitsStoppedStep(dest.cluster, f.topic, view.key.partition)) continue;
      f.done.add(view.key.partition);
      completeFailoverPartition(sim, f, view);
    }
    if (f.done.size >= partitions) sim.pendingFailovers.splice(sim.pendingFailovers.indexOf(f), 1);
  }
}

/**
 * Whether `topic-partition`, STOPPED, waits for STOPPED's step: the controller still holds its read-only
 * flag (what the step clears) and no mirror asks for the topic (`mirror.name` unset or removed). A
 * `mirror.name` set by another mirror meanwhile (a failback onto this cluster) keeps the flag, and STOPPED's
 * step leaves it to that mirror: the partition is checked now, before that mirror's PREPARING cuts the log
 * (soak chain FC_SEED=214).
 */
function awaitsStoppedStep(cluster: KafkaCluster, topic: string, partition: number): boolean {
  const meta = cluster.controller.image.partition(topic, partition);
  const mirrorName = cluster.controller.image.topic(topic)?.configs.get("mirror.name");
  if (meta === undefined || (mirrorName !== undefined && !mirrorName.endsWith(".removed"))) return false;
  return meta.mirrorReadOnly ?? mirrorName !== undefined;
}

/**
 * The partitions of `f` not yet checked that no live coordinator describes (one is loading its
 * `__mirror_state` partition after a leader move) but whose committed record says STOPPED: their topic is
 * writable, so they are checked now, before a produce lands (soak `transitions` FC_SEED=9 x100: a produce
 * right after a bounce of the coordinator's broker came first, and the check then saw it as the log end).
 */
function stoppedInHistoryOnly(
  sim: Simulation,
  f: PendingFailover,
  views: readonly MirrorPartitionView[],
  partitions: number,
): MirrorPartitionView[] {
  const described = new Set(views.map((v) => v.key.partition));
  const missing: number[] = [];
  for (let p = 0; p < partitions; p++) if (!described.has(p) && !f.done.has(p)) missing.push(p);
  if (missing.length === 0) return [];
  const cluster = sim.node(f.edge.to).cluster;
  const topicId = cluster.controller.image.topic(f.topic)?.topicId;
  if (topicId === undefined) return [];
  const folded = foldHistory(readMirrorStateHistory(cluster).entries);
  const out: MirrorPartitionView[] = [];
  for (const p of missing) {
    const committed = folded.get(keyIdOf(f.edge.mirror, topicId, p));
    if (committed?.state?.state !== "STOPPED") continue;
    out.push({
      key: { mirror: f.edge.mirror, topic: f.topic, topicId, partition: p },
      ...committed.state,
      lastMirrorEpoch: committed.lastMirrorEpoch,
    });
  }
  return out;
}

/**
 * The failover checks of one partition just seen STOPPED (nothing written since): the failover invariants
 * (`checkFailover`), then the absolute promises: every write acknowledged on the source before a planned
 * failover's catch-up barrier, and every write the destination had below its HW, is on the destination at
 * the same offset, byte for byte; every transaction committed before the barrier reads as committed there.
 * Records the failover point (`sim.model.failovers`) for the later checks.
 */
export function completeFailoverPartition(
  sim: Simulation,
  f: PendingFailover,
  view: MirrorPartitionView,
): void {
  const { edge, topic } = f;
  const dest = sim.node(edge.to);
  const p = view.key.partition;
  const end = leaderLog(dest.cluster, topic, p)?.logEndOffset;
  if (end !== undefined) sim.model.stoppedEnds.set(`${edge.mirror}\0${topic}\0${p}`, end);
  const alignment = failoverAlignment(dest.cluster, view.key);
  if (f.lostByElection.has(p)) {
    // The destination's own loss (its committed-prefix allowance says so): what the failover promised of the
    // source may be gone with it. Its barrier is not: the engine writes it again on the leader elected.
    sim.step(
      `${edge.to} ${topic}-${p} STOPPED: failover checks skipped (an unclean election lost its log end) but its barrier's`,
    );
    if (!failoverWithoutMirroredData(alignment)) {
      sim.report(checkBarrierAfterElection(edge.to, dest.cluster, view));
    }
    return;
  }
  if (failoverWithoutMirroredData(alignment)) {
    // Failed over from FAILED (or PREPARING before its truncation) over the topic's own log: no barrier,
    // nothing mirrored to promise (its markers are checked as STOPPED commits, `UnmirroredFailoverWatch`;
    // its LME by `checkFailoverWithoutMirroredData`). Decided from the committed history, as
    // the engine decides: the state the operator saw before `--remove` may be older (a coordinator that was
    // still loading after a broker crash described nothing) or newer than the one STOPPING came from.
    sim.report(checkFailoverWithoutMirroredData(edge.to, dest.cluster, view, alignment));
    return;
  }
  const { point, violations } = checkFailover(edge.to, dest.cluster, view);
  sim.report(violations);
  if (!point) return;
  const compacted = sim.model.topics.get(topic)?.compacted ?? false;
  // The destination HW at failover, before STOPPING's own writes (markers, barrier).
  const mirroredHw = point.highWatermark < point.mirroredEnd ? point.highWatermark : point.mirroredEnd;
  const promised = new Map<bigint, AckedWrite>();
  // A failover before PREPARING aligned the log (a failback stopped early) keeps the topic's own log: the
  // source's writes below the HW were never copied, so only a barrier could promise them.
  const unaligned = alignment !== undefined && !alignment.aligned;
  // Only writes the source still holds: one it dropped by consent before this mirror copied it (a failback
  // with `--truncate-local-writes` of the source itself) is not the source's to give any more (soak
  // failback FC_SEED=8 x100). Its own loss is the source's committed-prefix check.
  // A copy of a source topic deleted since (maybe created again under the name) promises none of the
  // writes of the source's topic of that name now: they are another topic's (`checkOrphans` checks it).
  const orphaned = sim.orphaned(edge, topic) !== undefined;
  const sourceWrites = sim.model.acked.filter(
    (w) =>
      !orphaned && w.node === edge.from && w.topic === topic && w.partition === p && w.offset < mirroredHw,
  );
  for (const w of unaligned ? [] : stillAcknowledged(sim.node(edge.from).cluster, sourceWrites)) {
    promised.set(w.offset, w);
  }
  for (const w of f.barrier?.acked ?? []) if (w.partition === p) promised.set(w.offset, w);
  const promisedCommits = (f.barrier?.commits ?? []).filter((c) => c.partition === p);
  const record = {
    mirror: edge.mirror,
    node: edge.to,
    topic,
    partition: p,
    ...point,
    stoppedFrom: alignment?.stoppedFrom ?? f.before.get(p) ?? "UNKNOWN",
    aligned: !unaligned,
    promised: compacted ? [] : [...promised.values()].sort((a, b) => (a.offset < b.offset ? -1 : 1)),
    promisedCommits,
    planned: f.barrier !== undefined,
  };
  sim.model.failovers.push(record);
  const label = `${edge.to} after ${record.planned ? "a planned" : "an unplanned"} failover from ${record.stoppedFrom}`;
  sim.report(checkPromisedWrites(label, dest.cluster, record.promised));
  sim.report(checkCommittedTxns(label, dest.cluster, promisedCommits));
}
