import { leaderLog } from "./invariants/logs";
import type { Violation } from "./invariants/violation";
import type { Simulation } from "./simulation";
import { frozenSourceCut, sourceCutSinceActive } from "./source-cut";
import type { MirrorEdge } from "./topology";
import { produce } from "./workload";

const NO_FETCHER = "no fetcher on the leader";
const AHEAD = "ahead of its cut source: ";

/** The `edge`, topic and partition a convergence reason names (`<mirror> <topic>-<partition>: ...`). */
function namedPartition(sim: Simulation, why: string) {
  const m = /^(\S+) (\S+)-(\d+): /.exec(why.slice(AHEAD.length));
  const edge = m ? sim.edges.find((e) => e.mirror === m[1]) : undefined;
  return edge && m ? { edge, topic: m[2]!, partition: Number(m[3]) } : undefined;
}

/**
 * The cluster where `topic` is written upstream of `edge`: its source if writable, else the source's own
 * ACTIVE source, hop by hop (a chain).
 */
function writerUpstream(sim: Simulation, edge: MirrorEdge, topic: string): string | undefined {
  const seen = new Set<string>();
  let node = edge.from;
  while (!seen.has(node)) {
    if (sim.writable(node, topic)) return node;
    seen.add(node);
    const up = sim.edges.find((e) => e.to === node && sim.edgeState(e, topic) === "ACTIVE");
    if (!up) return undefined;
    node = up.from;
  }
  return undefined;
}

/** True once every edge topic reached its requested state and every ACTIVE one is caught up. */
function converged(sim: Simulation): string | undefined {
  for (const { edge, topic } of sim.edgeTopics()) {
    const state = sim.edgeState(edge, topic)!;
    const src = sim.node(edge.from).cluster;
    const dst = sim.node(edge.to).cluster;
    const partitions = src.controller.image.topic(topic)?.partitions.length ?? 0;
    const named = sim
      .node(edge.to)
      .mirroring.coordinators.describe(edge.mirror)
      .filter((v) => v.key.topic === topic);
    // Partitions of a copy deleted on the destination during its failover (`deletedCopies`): STOPPED if
    // they were by then, else FAILED for good; the rest are the copy of the topic the name has now.
    const copyId = dst.controller.image.topic(topic)?.topicId;
    for (const v of named) {
      const deleted = v.key.topicId === copyId ? undefined : sim.model.deletedCopies.get(v.key.topicId);
      if (!deleted) continue;
      const ended = deleted.stopped.has(v.key.partition)
        ? v.state === "STOPPED"
        : v.state === "FAILED" && v.retryAttempt === -1;
      if (!ended) {
        return `${edge.mirror} ${topic}-${v.key.partition} (copy ${v.key.topicId} deleted on ${edge.to}): want ${deleted.stopped.has(v.key.partition) ? "STOPPED" : "FAILED for good"}, have ${v.state}#${v.retryAttempt}`;
      }
    }
    const views = named.filter(
      (v) => v.key.topicId === copyId || !sim.model.deletedCopies.has(v.key.topicId),
    );
    const have = () =>
      views
        .map(
          (v) =>
            `${v.key.partition}:${v.state}${v.state === "FAILED" ? `#${v.retryAttempt}` : ""}${v.errorMessage ? `(${v.errorMessage})` : ""}`,
        )
        .join(",");
    if (state !== "REMOVED" && sim.orphaned(edge, topic)) {
      // The source topic was deleted (maybe created again): every partition of the copy fails for good,
      // paused or not (a retry could only fail again).
      const copied = dst.controller.image.topic(topic)?.partitions.length ?? 0;
      if (views.length < copied || views.some((v) => v.state !== "FAILED" || v.retryAttempt !== -1))
        return `${edge.mirror} ${topic} (source topic deleted): want FAILED for good x${copied}, have ${have()}`;
      continue;
    }
    const want = state === "ACTIVE" ? "MIRRORING" : state === "PAUSED" ? "PAUSED" : "STOPPED";
    const expected = state === "ACTIVE" ? partitions : views.length;
    if (views.length < expected || views.some((v) => v.state !== want)) {
      return `${edge.mirror} ${topic}: want ${want} x${expected}, have ${have()}`;
    }
    if (state !== "ACTIVE") continue;
    for (let p = 0; p < partitions; p++) {
      const s = leaderLog(src, topic, p);
      const d = leaderLog(dst, topic, p);
      if (!s || !d) return `${edge.mirror} ${topic}-${p}: no leader`;
      const leader = dst.controller.image.partition(topic, p)?.leader ?? -1;
      const view = views.find((v) => v.key.partition === p);
      if (
        view &&
        d.logEndOffset < s.highWatermark &&
        sim.node(edge.to).mirroring.fetchers(leader)?.offsets(view.key) === undefined
      ) {
        return `${NO_FETCHER}: ${edge.mirror} ${topic}-${p} is MIRRORING but its destination leader (broker ${leader}) runs no fetcher for it (destination LEO ${d.logEndOffset}, source HW ${s.highWatermark})`;
      }
      if (
        s.highWatermark !== s.logEndOffset ||
        d.logEndOffset !== s.highWatermark ||
        d.highWatermark !== d.logEndOffset
      ) {
        const why = `${edge.mirror} ${topic}-${p}: source HW ${s.highWatermark}/LEO ${s.logEndOffset}, destination LEO ${d.logEndOffset}/HW ${d.highWatermark}`;
        const cut = sourceCutSinceActive(sim, edge, topic, p);
        // A copy keeps what it committed past the end of a source that was cut since (a failback or re-add
        // upstream in a chain), until the source writes again and its epochs say where they diverge.
        const ahead = cut !== undefined && cut < d.logEndOffset && s.logEndOffset < d.logEndOffset;
        // ... for good when the source itself failed for good (its source topic was deleted).
        if (ahead && frozenSourceCut(sim, edge, topic, p) !== undefined) continue;
        return ahead ? `${AHEAD}${why}` : why;
      }
      // Equal offsets are not a copy: a source cut and rewritten while the fetcher was away (paused, or
      // failed back) ends at the same offset with other epochs. The fetcher has not yet truncated when the
      // destination's last epoch ends earlier on the source, as a follower's diverging-epoch check sees it.
      // An epoch above the source's latest (its log was cut and refilled with older epochs: a re-add
      // upstream in a chain) is answered as the source's leader answers it, its latest epoch ending at its
      // log end (`Partition.divergenceCheckFor`), so the copy is not counted caught up before it truncated.
      const epoch = d.lastBatchLeaderEpoch();
      const latest = s.latestEpoch;
      const end =
        epoch === undefined || latest === undefined
          ? undefined
          : epoch > latest
            ? { epoch: latest, endOffset: s.logEndOffset }
            : s.endOffsetForEpoch(epoch);
      if (end && end.epoch >= 0 && (end.epoch !== epoch || end.endOffset < d.logEndOffset)) {
        return `${edge.mirror} ${topic}-${p}: destination's last epoch ${epoch} ends at ${end.endOffset} (epoch ${end.epoch}) on the source, below the destination LEO ${d.logEndOffset}: not truncated yet`;
      }
    }
  }
  return undefined;
}

/**
 * Waits (up to 10 virtual minutes) until every edge topic reached its requested state and every ACTIVE one
 * caught up (`converged`), checking every step that no committed transaction stays open on its leader. A
 * MIRRORING partition whose leader runs no fetcher is reported after a virtual minute; not converging at
 * all is a violation too.
 */
export async function awaitConvergence(sim: Simulation): Promise<Violation[]> {
  const out: Violation[] = [];
  let why: string | undefined;
  const nudged = new Set<string>();
  let aheadSince: number | undefined;
  /** Since when the same partition has been MIRRORING with no fetcher on its leader (see below). */
  let noFetcher: { why: string; since: number } | undefined;
  try {
    await sim.world.time.until(
      async () => {
        sim.checkTxnMarkers();
        why = converged(sim);
        const now = sim.world.clock.now();
        aheadSince = why?.startsWith(AHEAD) ? (aheadSince ?? now) : undefined;
        if (why?.startsWith(AHEAD) && now - (aheadSince ?? now) >= 30_000 && !nudged.has(why)) {
          // Still ahead after 30 s: the source writes once (where it is written, up the chain), so the copy
          // can find where it diverges and follow; then everything is checked in full as usual.
          nudged.add(why);
          await nudgeSource(sim, why);
          aheadSince = undefined;
        }
        // A partition with no fetcher on its leader stays behind forever: report it once it has had none for
        // a minute (not one that just turned MIRRORING, whose fetcher is still looking up its source leader:
        // soak `recreated-source` FC_SEED=262 x60).
        if (!why?.startsWith(NO_FETCHER)) noFetcher = undefined;
        else if (noFetcher?.why !== why) noFetcher = { why, since: now };
        return why === undefined || (noFetcher !== undefined && now - noFetcher.since > 60_000);
      },
      "convergence",
      600_000,
      250,
    );
  } catch {
    out.push({ invariant: "converges", message: `not settled after 10 virtual minutes: ${why}` });
  }
  if (why?.startsWith(NO_FETCHER)) out.push({ invariant: "fetcher-follows-leader", message: why });
  return out;
}

/** One write to the partition `why` names, where its topic is written upstream (see `awaitConvergence`). */
async function nudgeSource(sim: Simulation, why: string): Promise<void> {
  const named = namedPartition(sim, why);
  const writer = named && writerUpstream(sim, named.edge, named.topic);
  if (!named || writer === undefined) {
    sim.step(`settle: ${why} (no writable cluster upstream to write to)`);
    return;
  }
  sim.step(`settle: ${why}; one write to ${writer}/${named.topic}-${named.partition}`);
  const target = sim.writableTargets().findIndex((t) => t.node === writer && t.topic === named.topic);
  await produce(sim, target, named.partition, 1);
}
