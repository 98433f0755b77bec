import { awaitConvergence } from "./convergence";
import { checkLeaderEpoch } from "./invariants/leader-epoch";
import { readMirrorStateHistory } from "./invariants/mirror-state-history";
import { checkOffsetIdentity } from "./invariants/offset-identity";
import { checkReplayMatchesLive } from "./invariants/replay";
import { checkReplicasAgree } from "./invariants/replicas-agree";
import { checkTransitions } from "./invariants/transitions";
import type { Violation } from "./invariants/violation";
import type { Simulation } from "./simulation";
import { frozenSourceCut } from "./source-cut";

/**
 * After the settled checks: resumes every PAUSED edge topic, waits until everything mirrors and caught up
 * again, and checks each resumed copy's offset identity in full. A resumed fetcher must find where its copy
 * diverged from a source that was cut while it was paused (its last fetched epoch ends earlier on the
 * source now) and truncate there before fetching: the check below the cut alone cannot see that. Then the
 * invariants the resumes touch again: committed prefixes, leader epochs, replicas agreeing, and the
 * `__mirror_state` history (valid steps, its replay equal to the live state).
 */
export async function resumePausedCopies(sim: Simulation): Promise<Violation[]> {
  // A copy of a deleted source topic failed for good (`converged`): it resumes nothing.
  const paused = sim
    .edgeTopics((s) => s === "PAUSED")
    .filter(({ edge, topic }) => !sim.orphaned(edge, topic));
  if (paused.length === 0) return [];
  const out: Violation[] = [];
  for (const { edge, topic } of paused) {
    try {
      await sim.world.time.run(sim.node(edge.to).mirroring.admin.resumeTopics(edge.mirror, topic), 120_000);
      sim.setEdgeState(edge, topic, "ACTIVE");
      sim.step(`settled: resume ${edge.mirror} ${topic}`);
    } catch (error) {
      out.push({
        invariant: "resume-after-settle",
        message: `${edge.mirror} ${topic}: every partition was PAUSED, yet resume was refused: ${error instanceof Error ? error.message : String(error)}`,
      });
    }
  }
  out.push(...(await awaitConvergence(sim)));
  sim.step("settled after resuming");
  // The resumed copies, and the copies downstream of them (a chain): those may have waited for the resumed
  // hop to write again (`frozenSourceCut`), and are compared in full now.
  const resumed = paused.filter(({ edge, topic }) => sim.edgeState(edge, topic) === "ACTIVE");
  const checked = [...resumed];
  for (let i = 0; i < checked.length; i++) {
    const { edge, topic } = checked[i]!;
    for (const next of sim.edges) {
      if (next.from !== edge.to || sim.edgeState(next, topic) !== "ACTIVE") continue;
      if (!checked.some((c) => c.edge === next && c.topic === topic)) checked.push({ edge: next, topic });
    }
  }
  for (const { edge, topic } of checked) {
    if (sim.orphaned(edge, topic)) continue;
    const src = sim.node(edge.from).cluster;
    const partitions = src.controller.image.topic(topic)?.partitions.length ?? 0;
    for (let p = 0; p < partitions; p++) {
      out.push(
        ...checkOffsetIdentity(
          `${edge.from}->${edge.to} (resumed)`,
          src,
          sim.node(edge.to).cluster,
          topic,
          p,
          frozenSourceCut(sim, edge, topic, p),
        ),
      );
    }
  }
  // The resumes wrote new transitions, and the fetchers may have cut logs: the invariants they touch again.
  sim.observePrefixes();
  for (const name of new Set(paused.map(({ edge }) => edge.to))) {
    const { cluster, mirroring } = sim.node(name);
    for (const topic of new Set(paused.filter((p) => p.edge.to === name).map((p) => p.topic)))
      out.push(...checkLeaderEpoch(name, cluster, topic));
    out.push(...checkReplicasAgree(name, cluster));
    const history = readMirrorStateHistory(cluster);
    out.push(...checkTransitions(name, history));
    if (history.incomplete.length === 0)
      out.push(...checkReplayMatchesLive(name, history, mirroring.coordinators.describe()));
  }
  sim.report(out);
  return out;
}
