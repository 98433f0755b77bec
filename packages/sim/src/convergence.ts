import { leaderLog } from "./invariants/logs";
import type { Violation } from "./invariants/violation";
import type { Simulation } from "./simulation";

const NO_FETCHER = "no fetcher on the leader";

/** True once every edge topic reached its requested state and every ACTIVE one is caught up. */
function converged(sim: Simulation): string | undefined {
  for (const { edge, topic } of sim.edgeTopics()) {
    const state = sim.edgeState(edge, topic)!;
    const src = sim.node(edge.from).cluster;
    const dst = sim.node(edge.to).cluster;
    const partitions = src.controller.image.topic(topic)?.partitions.length ?? 0;
    const views = sim
      .node(edge.to)
      .mirroring.coordinators.describe(edge.mirror)
      .filter((v) => v.key.topic === topic);
    const want = state === "ACTIVE" ? "MIRRORING" : state === "PAUSED" ? "PAUSED" : "STOPPED";
    const expected = state === "ACTIVE" ? partitions : views.length;
    if (views.length < expected || views.some((v) => v.state !== want)) {
      return `${edge.mirror} ${topic}: want ${want} x${expected}, have ${views.map((v) => `${v.key.partition}:${v.state}${v.errorMessage ? `(${v.errorMessage})` : ""}`).join(",")}`;
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
        return `${edge.mirror} ${topic}-${p}: source HW ${s.highWatermark}/LEO ${s.logEndOffset}, destination LEO ${d.logEndOffset}/HW ${d.highWatermark}`;
      }
      // Equal offsets are not a copy: a source cut and rewritten while the fetcher was away (paused, or
      // failed back) ends at the same offset with other epochs. The fetcher has not yet truncated when the
      // destination's last epoch ends earlier on the source, as a follower's diverging-epoch check sees it.
      const epoch = d.lastBatchLeaderEpoch();
      const end = epoch === undefined ? undefined : s.endOffsetForEpoch(epoch);
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
  const start = sim.world.clock.now();
  try {
    await sim.world.time.until(
      () => {
        sim.checkTxnMarkers();
        why = converged(sim);
        // A partition with no fetcher on its leader stays behind forever: report it after a minute.
        return why === undefined || (why.startsWith(NO_FETCHER) && sim.world.clock.now() - start > 60_000);
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
