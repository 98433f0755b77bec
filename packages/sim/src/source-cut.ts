import type { Simulation } from "./simulation";
import type { MirrorEdge } from "./topology";

/**
 * The lowest offset the source's log of `topic`-`partition` was cut at since the edge topic last became
 * ACTIVE (undefined: never). A PAUSED copy, or one a failover froze, is the source as its fetcher last saw
 * it: when the source was cut since (a failback or re-add of the source itself), the copy keeps what the
 * source dropped, and matches it only below the cut. A cut while still ACTIVE counts too, as the fetcher may
 * not have fetched between the cut and the pause or failover; `resumePausedCopies` then checks that a paused
 * copy follows the cut once resumed, and a planned failover's promised writes are checked on their own.
 */
export function sourceCutSinceActive(
  sim: Simulation,
  edge: MirrorEdge,
  topic: string,
  partition: number,
): bigint | undefined {
  const since = sim.model.activeSince.get(`${edge.mirror}\0${topic}`) ?? 0;
  let cut: bigint | undefined;
  for (const t of sim.model.truncations) {
    if (t.node !== edge.from || t.topic !== topic || t.partition !== partition || t.at < since) continue;
    if (cut === undefined || t.offset < cut) cut = t.offset;
  }
  return cut;
}

/**
 * Where the copy on `edge` may stay ahead of its source (docs/protocol.md: it keeps what it committed past
 * the source's end until the source writes again): its source was cut since `edge` became ACTIVE (a re-add
 * that truncated), and nothing will write to the source for now: its own copy of `topic` is PAUSED, or
 * belongs to a source topic deleted since (`Simulation.orphaned`: failed for good). The copy matches its
 * source only below that cut. Undefined otherwise. `resumePausedCopies` resumes the paused ones and checks
 * the copies downstream in full once the source wrote again.
 */
export function frozenSourceCut(
  sim: Simulation,
  edge: MirrorEdge,
  topic: string,
  partition: number,
): bigint | undefined {
  const frozen = sim.edges.some((e) => {
    if (e.to !== edge.from) return false;
    const state = sim.edgeState(e, topic);
    return state === "PAUSED" || (state !== "REMOVED" && sim.orphaned(e, topic) !== undefined);
  });
  return frozen ? sourceCutSinceActive(sim, edge, topic, partition) : undefined;
}
