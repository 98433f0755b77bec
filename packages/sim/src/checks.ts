import type { MirrorPartitionKey } from "@cluster-mirror/mirror";
import { checkAbandonedTxns } from "./abandoned-txns";
import { awaitConvergence } from "./convergence";
import { completeFailovers } from "./failover-completion";
import { restartAll } from "./faults";
import { checkPromisedWrites } from "./invariants/durability";
import { checkGroupOffsets, checkGroupOffsetsInLog } from "./invariants/group-offsets";
import { checkLeaderEpoch } from "./invariants/leader-epoch";
import { checkNoBarrierOverLocalWrites } from "./invariants/local-writes-kept";
import { readMirrorStateHistory } from "./invariants/mirror-state-history";
import { checkOffsetIdentity } from "./invariants/offset-identity";
import { checkPidResetAnswers } from "./invariants/pid-reset";
import { probeReadOnly } from "./invariants/read-only";
import { checkReplayMatchesLive } from "./invariants/replay";
import { checkReplicasAgree } from "./invariants/replicas-agree";
import { checkReplicasInSync } from "./invariants/replicas-in-sync";
import { checkCommittedTxns } from "./invariants/transactions";
import { checkTransitions } from "./invariants/transitions";
import type { Violation } from "./invariants/violation";
import { partitionId } from "./model";
import { resumePausedCopies } from "./paused-copies";
import type { Simulation } from "./simulation";
import { frozenSourceCut, sourceCutSinceActive } from "./source-cut";
import { observeCommittedWrites } from "./workload";

/** The committed state of one mirror partition as its coordinator describes it now (undefined: none). */
function committedState(
  mirroring: ReturnType<Simulation["node"]>["mirroring"],
  key: MirrorPartitionKey,
): string | undefined {
  return mirroring.coordinators
    .describe(key.mirror)
    .find((w) => w.key.topic === key.topic && w.key.partition === key.partition)?.state;
}

/** Topics that `node` receives through one of its mirrors (any requested state). */
function mirroredInto(sim: Simulation, node: string, states?: readonly string[]): Set<string> {
  const out = new Set<string>();
  for (const { edge, topic } of sim.edgeTopics((s) => !states || states.includes(s))) {
    if (edge.to === node) out.add(topic);
  }
  return out;
}

/** Every metadata record a broker failed to apply: each one is a broker that missed a change. */
function metadataFailures(sim: Simulation): Violation[] {
  return [
    ...sim.world.metadataFailures.map((message) => ({ invariant: "metadata-applied", message })),
    ...sim.world.taskFailures.map((message) => ({ invariant: "broker-task", message })),
    ...[...new Set(sim.world.tasksAfterKill)].map((node) => ({
      invariant: "killed-process-quiet",
      message: `${node}'s killed process scheduled a task after the kill (the node restarted: its old process must do nothing more)`,
    })),
  ];
}

/**
 * The invariants that hold at every instant, checked after every command: the STOPPED checks of failovers
 * that reached STOPPED, the committed prefix of every partition, leader epoch >= mirrored epochs, read-only
 * until STOPPED (a probe produce to every mirror partition not STOPPED, besides the produce guard that
 * sees every produce), valid-from plus StateEpoch steps over each cluster's `__mirror_state` history,
 * every replica's `endsWithPidReset()` answer against what it stores, every in-sync replica's batches
 * below the high watermark against its leader's, no committed transaction left open on its leader, and no
 * group's committed offset on a mirror partition past its log end (`checkGroupOffsetsInLog`).
 */
export async function checkNow(sim: Simulation): Promise<Violation[]> {
  sim.liveness.check();
  completeFailovers(sim);
  observeCommittedWrites(sim);
  sim.observePrefixes();
  sim.observeUnderMinIsr();
  sim.checkTxnMarkers();
  sim.checkOrphans();
  const out: Violation[] = metadataFailures(sim);
  out.push(
    ...sim.configsKept.observe(
      sim
        .edgeTopics((s) => s === "ACTIVE")
        .map(({ edge, topic }) => ({
          mirror: edge.mirror,
          topic,
          source: sim.node(edge.from).cluster,
          destination: sim.node(edge.to).cluster,
        })),
    ),
  );
  // Partitions whose source had an unclean election: a copy cuts its log where the source did, below
  // offsets synced from the source (whose own committed offsets point past its new log end as well).
  const diverged = new Set([...sim.model.diverged].map((id) => id.slice(id.indexOf("/") + 1)));
  for (const name of sim.world.spec.clusters) {
    const { cluster, mirroring } = sim.node(name);
    for (const topic of mirroredInto(sim, name)) out.push(...checkLeaderEpoch(name, cluster, topic));
    const local = new Set(
      [...sim.model.sourceGroups].flatMap((k) => {
        const [node, groupId] = k.split("\0") as [string, string];
        return node === name ? [groupId] : [];
      }),
    );
    out.push(
      ...checkGroupOffsetsInLog(
        name,
        cluster,
        mirroring.coordinators
          .describe()
          .filter(
            (v) =>
              cluster.controller.image.topic(v.key.topic)?.topicId === v.key.topicId &&
              !diverged.has(`${v.key.topic}/${v.key.partition}`),
          )
          .map((v) => ({ topic: v.key.topic, partition: v.key.partition, state: v.state })),
        local,
        sim.model.activeGroups.filter((g) => g.node === name),
        sim.model.groupCommitMax,
      ),
    );
    for (const v of mirroring.coordinators.describe()) {
      if (v.state === "STOPPED") continue;
      // A partition of a topic deleted here (the name may be another topic's now): nothing to probe.
      if (cluster.controller.image.topic(v.key.topic)?.topicId !== v.key.topicId) continue;
      // Each probe lets virtual time pass, so the views read before the loop may be stale by now: probe
      // with the partition's committed state of this instant, and count an accepted produce only if the
      // partition is still not STOPPED once it returns (read-only is cleared only after STOPPED commits,
      // so a STOPPED committed during the probe explains the accept; the produce guard sees every produce).
      const before = committedState(mirroring, v.key);
      if (before === undefined || before === "STOPPED") continue;
      const found = await sim.world.time.run(
        probeReadOnly(name, cluster, v.key.topic, v.key.partition, before),
      );
      if (found.length > 0 && committedState(mirroring, v.key) === "STOPPED") continue;
      out.push(...found);
    }
    out.push(...checkTransitions(name, readMirrorStateHistory(cluster)));
    out.push(...checkPidResetAnswers(name, cluster, sim.model.topics.keys()));
    out.push(...checkNoBarrierOverLocalWrites(name, cluster, sim.model.failovers));
    out.push(...checkReplicasAgree(name, cluster));
  }
  sim.report(out);
  return out;
}

/**
 * Settles the world and checks everything: heals every link, restarts every broker, lets a metadata
 * refresh pass (checking every virtual second that no committed transaction stays open on its leader),
 * waits (virtual time) until every mirror reached its requested state and caught up, then
 * checks offset identity / log matching on every edge, acknowledged-write durability after failover and
 * failback, leader epochs, group offsets, config and partition sync, the `__mirror_state` history and the
 * replay-equals-live round trip. Not converging within 10 virtual minutes is itself a violation. A PAUSED
 * copy is compared below any cut of its source since it was last ACTIVE; then every PAUSED topic is resumed
 * and, once caught up again, compared in full (`resumePausedCopies`).
 */
export async function settleAndCheck(sim: Simulation): Promise<Violation[]> {
  const out: Violation[] = [];
  for (const link of sim.world.allLinks()) {
    link.heal();
    link.refuseConfigs(false);
  }
  for (const name of sim.world.spec.clusters) {
    const cluster = sim.node(name).cluster;
    cluster.controller.setAvailable(true);
    cluster.setReplicationLatency(0);
    for (let b = 0; b < sim.brokers; b++) {
      cluster.setDiskLatency(b, 0);
      cluster.setDiskFull(b, false);
    }
    restartAll(cluster, sim.brokers);
  }
  // A virtual second at a time, so that a committed transaction left open on a leader is seen within the
  // settling, before the housekeeping pass (10 s) would restore its marker (`TxnMarkerWatch`).
  for (let s = 0; s < 35; s++) {
    await sim.world.time.advance(1_000);
    sim.checkTxnMarkers();
  }
  // Past their timeout (waiting for it if needed): transactions whose producer died in a node restart.
  out.push(...(await checkAbandonedTxns(sim)));
  // Past every deadline by now: the commands' liveness expectations (see `LivenessWatch`).
  sim.liveness.finish();
  out.push(...(await awaitConvergence(sim)));
  out.push(...metadataFailures(sim));
  sim.step("settled");
  completeFailovers(sim, true);
  observeCommittedWrites(sim);
  sim.observeUnderMinIsr();
  sim.observePrefixes();
  sim.checkOrphans();
  for (const { edge, topic } of sim.edgeTopics()) {
    // A copy of a deleted source topic has no source to compare with: `checkOrphans` checked it.
    if (sim.orphaned(edge, topic)) continue;
    const state = sim.edgeState(edge, topic)!;
    const src = sim.node(edge.from).cluster;
    const dst = sim.node(edge.to).cluster;
    const partitions = dst.controller.image.topic(topic)?.partitions.length ?? 0;
    for (let p = 0; p < partitions; p++) {
      const label = `${edge.from}->${edge.to}`;
      if (state !== "REMOVED") {
        const upTo =
          state === "PAUSED"
            ? sourceCutSinceActive(sim, edge, topic, p)
            : frozenSourceCut(sim, edge, topic, p);
        out.push(...checkOffsetIdentity(label, src, dst, topic, p, upTo));
        continue;
      }
      if (sim.model.diverged.has(partitionId(edge.from, topic, p))) continue;
      const f = [...sim.model.failovers]
        .reverse()
        .find((x) => x.mirror === edge.mirror && x.topic === topic && x.partition === p);
      // Up to where this node's log was cut since (it joined a mirror again: from there on it is that
      // source's copy; soak `chain` FC_SEED=11 x100, a failback to another hop of the chain).
      // And below where the source's log was cut since this edge last became ACTIVE: the failover froze
      // the copy of the source as its fetcher last saw it, and a later failback of the source rewrites the
      // source (soak `fan-out` FC_SEED=16 x100, run 650; as for a PAUSED copy).
      let upTo =
        f && f.rewrittenFrom !== undefined && f.rewrittenFrom < f.mirroredEnd
          ? f.rewrittenFrom
          : f?.mirroredEnd;
      const sourceCut = sourceCutSinceActive(sim, edge, topic, p);
      if (upTo !== undefined && sourceCut !== undefined && sourceCut < upTo) upTo = sourceCut;
      if (f)
        out.push(
          ...checkOffsetIdentity(`${label} (failed over from ${f.stoppedFrom})`, src, dst, topic, p, upTo),
        );
    }
    if (state === "ACTIVE") {
      const srcRetention = src.controller.image.topic(topic)?.configs.get("retention.ms");
      const dstRetention = dst.controller.image.topic(topic)?.configs.get("retention.ms");
      if (srcRetention !== undefined && srcRetention !== dstRetention) {
        out.push({
          invariant: "config-sync",
          message: `${edge.mirror} ${topic}: source retention.ms=${srcRetention}, destination ${dstRetention ?? "unset"}`,
        });
      }
    }
  }
  for (const c of sim.model.commits) {
    if (sim.mayBeReplaced(c) || sim.model.diverged.has(partitionId(c.node, c.topic, c.partition))) continue;
    out.push(...checkCommittedTxns(`${c.node} (its own)`, sim.node(c.node).cluster, [c]));
  }
  for (const f of sim.model.failovers) {
    // On the new primary, up to where its log was cut since (it joined a mirror again, a cut the
    // truncation allowances checked as it happened): from there on its log is that source's, as for the
    // offset identity above (soak `chain` FC_SEED=214 x20: c1, failed over from c0, failed back onto c2,
    // which had failed over from c1 before c0's write reached it).
    const kept = <T extends { offset: bigint }>(xs: readonly T[]): T[] =>
      f.rewrittenFrom === undefined ? [...xs] : xs.filter((x) => x.offset < f.rewrittenFrom!);
    out.push(...checkPromisedWrites(`${f.node} (new primary)`, sim.node(f.node).cluster, kept(f.promised)));
    out.push(
      ...checkCommittedTxns(`${f.node} (new primary)`, sim.node(f.node).cluster, kept(f.promisedCommits)),
    );
    const orig = sim.edges.find((e) => e.mirror === f.mirror);
    const back = orig
      ? sim.edges.find(
          (e) => e.from === orig.to && e.to === orig.from && sim.edgeState(e, f.topic) === "ACTIVE",
        )
      : undefined;
    // The old primary mirrors the new one back: it follows the new primary's log, cut since or not (soak
    // `chain` FC_SEED=357 x10: c1 failed back onto c2 with --truncate-local-writes and took c2's log from
    // offset 0, and c0, failed back from c1, followed it).
    if (back) {
      out.push(
        ...checkPromisedWrites(`${back.to} (after failback)`, sim.node(back.to).cluster, kept(f.promised)),
      );
      out.push(
        ...checkCommittedTxns(
          `${back.to} (after failback)`,
          sim.node(back.to).cluster,
          kept(f.promisedCommits),
        ),
      );
    }
  }
  for (const name of sim.world.spec.clusters) {
    const { cluster, mirroring } = sim.node(name);
    for (const topic of mirroredInto(sim, name)) out.push(...checkLeaderEpoch(name, cluster, topic));
    const active = sim.model.activeGroups.filter((g) => g.node === name);
    // Groups committed on this cluster itself are its own, not synced: only the others are checked.
    const committedOn = [...sim.model.sourceGroups].map((k) => k.split("\0") as [string, string]);
    const local = new Set(committedOn.filter(([n]) => n === name).map(([, g]) => g));
    const synced = new Set(committedOn.map(([, g]) => g).filter((g) => !local.has(g)));
    out.push(
      ...checkGroupOffsets(
        name,
        cluster,
        synced,
        mirroredInto(sim, name, ["ACTIVE"]),
        active,
        sim.model.groupCommitMax,
      ),
    );
    out.push(...checkPidResetAnswers(name, cluster, sim.model.topics.keys()));
    out.push(...checkNoBarrierOverLocalWrites(name, cluster, sim.model.failovers));
    out.push(...checkReplicasAgree(name, cluster));
    out.push(
      ...checkReplicasInSync(name, cluster, (topic, p) =>
        sim.model.diverged.has(partitionId(name, topic, p)),
      ),
    );
    const history = readMirrorStateHistory(cluster);
    out.push(...checkTransitions(name, history));
    if (history.incomplete.length === 0)
      out.push(...checkReplayMatchesLive(name, history, mirroring.coordinators.describe()));
  }
  out.push(...(await resumePausedCopies(sim)));
  sim.report(out);
  return out;
}
