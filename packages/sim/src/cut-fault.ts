import { checkNow } from "./checks";
import { crashBroker, downBrokers, setControllerAvailable } from "./faults";
import { leaderLog } from "./invariants/logs";
import { failoverTopic, rejoin } from "./operator";
import type { Simulation } from "./simulation";
import { pick, produce, writePromoted } from "./workload";

/** What `cutFault` does to the cut it lands in (its `mode` argument, modulo their number). */
export const CUT_FAULT_MODES = [
  "leader-disk-full-dies",
  "follower-disk-full-leader-dies",
  "reports-lost-restart",
] as const;

/**
 * Arms a fault that lands inside the next mirror cut of a leader's log that drops something (a re-add's or
 * failback's truncation, a divergence), on any cluster. The controller records the cut for every replica
 * first (`ReplicaTruncationRecord`); each replica makes it, stores that it did and reports it. The fault
 * breaks that chain where a replica could end up cutting twice or not at all:
 * - `leader-disk-full-dies` (mode 0): the leader's disk is full as it cuts, so its own cut, or storing that
 *   it made it, fails after the record; the leader crashes `delayMs` later (the next leader, having made the
 *   cut, stores the source's batches there) and starts again, its disk freed,
 *   `downMs` after that. It must come back holding what the new leader holds.
 * - `follower-disk-full-leader-dies` (mode 1): a follower's disk (`followerChoice`) is full as the leader
 *   cuts, so it cannot make the cut it owes; the leader crashes `delayMs` later, and the follower may be
 *   elected: it must not lead over the batches the mirror cut. Its disk is freed and the old leader started
 *   again `downMs` after the crash.
 * - `reports-lost-restart` (mode 2): the controller becomes unavailable right after the cut, so no replica's
 *   report of it is heard; `delayMs` later every broker of the cluster crashes, and `downMs` after that they
 *   start again (their disks keep what they stored), the followers first, then the controller is back, the
 *   old leader last: every replica still owes the cut on the controller's books but made it, and what it
 *   fetched since may be committed. It must not cut again.
 * The crash of modes 0 and 1 is skipped when a broker of the cluster is already down. One fault is armed at a
 * time (arming again replaces it); one that never fires does nothing. Of the owed-truncation bugs, mode 2
 * reaches a replica that cut again after a restart (with `OwedTruncations.load` taken out, readd-cut-fault
 * fails at FC_SEED=3 and 4); modes 0 and 1 have not been seen to reach theirs (a re-add's cut batches are
 * local writes, of other epochs than the source's that replace them, so a follower's KIP-320 check or the
 * mirror's divergence check drops them anyway).
 */
export function cutFault(
  sim: Simulation,
  modeChoice: number,
  followerChoice: number,
  delayMs: number,
  downMs: number,
): void {
  const mode = CUT_FAULT_MODES[Math.abs(modeChoice) % CUT_FAULT_MODES.length]!;
  for (const l of [...sim.truncateListeners]) if (armedFaults.has(l)) sim.truncateListeners.delete(l);
  const armed = (node: string, topic: string, partition: number, offset: bigint, full: boolean) => {
    if (topic.startsWith("__")) return;
    const cluster = sim.node(node).cluster;
    const meta = cluster.controller.image.partition(topic, partition);
    const end = leaderLog(cluster, topic, partition)?.logEndOffset;
    if (!meta || meta.leader < 0 || (!full && (end === undefined || offset >= end))) return;
    sim.truncateListeners.delete(armed);
    const leader = meta.leader;
    const where = `${node} ${topic}-${partition} (cut at ${offset}${full ? ", full" : ""}, leader ${leader})`;
    // The node's process when each later part lands (a node restart may replace it meanwhile).
    const current = () => sim.node(node).cluster;
    const crashLeaderLater = (then: () => void) => {
      sim.world.scheduler.schedule(() => {
        const c = current();
        const crashed = downBrokers(c, sim.brokers).length === 0 && c.broker(leader) !== undefined;
        if (crashed) crashBroker(c, leader);
        sim.step(`cut fault on ${where}: leader ${crashed ? "crashed" : "not crashed (a broker is down)"}`);
        sim.world.scheduler.schedule(() => {
          then();
          if (crashed && !current().broker(leader)) current().startBroker(leader);
        }, downMs);
      }, delayMs);
    };
    if (mode === "leader-disk-full-dies") {
      cluster.setDiskFull(leader, true);
      sim.stats.fullDisks++;
      sim.step(`cut fault on ${where}: the leader's disk is full as it cuts`);
      crashLeaderLater(() => current().setDiskFull(leader, false));
    } else if (mode === "follower-disk-full-leader-dies") {
      const followers = meta.replicas.filter((r) => r !== leader);
      const follower = followers[Math.abs(followerChoice) % Math.max(1, followers.length)];
      if (follower === undefined) return;
      cluster.setDiskFull(follower, true);
      sim.stats.fullDisks++;
      sim.step(`cut fault on ${where}: follower ${follower}'s disk is full as the leader cuts`);
      crashLeaderLater(() => current().setDiskFull(follower, false));
    } else {
      // After the cut (and its record): a task of its own, as the controller fails over a moment later.
      sim.world.scheduler.schedule(() => {
        setControllerAvailable(current(), false);
        sim.stats.controllerFailovers++;
        sim.step(`cut fault on ${where}: the controller is unavailable right after the cut`);
        sim.world.scheduler.schedule(() => {
          const c = current();
          const crashed = c.runningBrokers();
          for (const b of crashed) crashBroker(c, b);
          sim.step(`cut fault on ${where}: every broker of ${node} crashed`);
          sim.world.scheduler.schedule(() => {
            // The followers first, then the controller is back; the old leader last.
            for (const b of crashed) if (b !== leader && !current().broker(b)) current().startBroker(b);
            setControllerAvailable(current(), true);
            sim.world.scheduler.schedule(() => {
              if (crashed.includes(leader) && !current().broker(leader)) current().startBroker(leader);
            }, 50);
          }, downMs);
        }, delayMs);
      }, 0);
    }
  };
  armedFaults.add(armed);
  sim.truncateListeners.add(armed);
  sim.step(`cut fault armed: ${mode} (follower choice ${followerChoice}, ${delayMs} ms, ${downMs} ms)`);
}

/** The listeners `cutFault` armed (so arming again replaces the one not fired yet). */
const armedFaults = new WeakSet<object>();

/**
 * A re-add that cuts local writes with a `cutFault` inside its cut: on an edge topic (`choice`; an ACTIVE
 * one is first written to on its source and failed over, unplanned), writes `count` records to the promoted
 * copy's partition (`partitionChoice`) and as many to the source's (what the mirror copies after the cut),
 * arms the fault and re-adds the topic with `--truncate-local-writes`, then lets the fault play out, with
 * every check each half second.
 */
export async function readdCutFault(
  sim: Simulation,
  choice: number,
  partitionChoice: number,
  count: number,
  modeChoice: number,
  followerChoice: number,
  delayMs: number,
  downMs: number,
): Promise<void> {
  const et = pick(
    sim.edgeTopics((s) => s === "ACTIVE" || s === "REMOVED"),
    choice,
  );
  if (!et) {
    sim.step("re-add with a cut fault: no edge topic");
    return;
  }
  const { edge, topic } = et;
  const writeSource = async () => {
    const target = sim.writableTargets().findIndex((t) => t.node === edge.from && t.topic === topic);
    if (target >= 0) await produce(sim, target, partitionChoice, count);
  };
  if (sim.edgeState(edge, topic) === "ACTIVE") {
    await writeSource();
    await sim.world.time.advance(500);
    await failoverTopic(sim, edge, topic, "unplanned");
    if (sim.edgeState(edge, topic) !== "REMOVED") return;
  }
  const promoted = sim
    .edgeTopics((s) => s === "REMOVED")
    .filter((x) => sim.writable(x.edge.to, x.topic))
    .findIndex((x) => x.edge === edge && x.topic === topic);
  if (promoted >= 0) await writePromoted(sim, promoted, partitionChoice, count);
  await writeSource();
  if (!sim.holds(edge.from, topic) || (sim.openTxn?.node === edge.to && sim.openTxn.topic === topic)) {
    sim.step(`re-add ${edge.mirror} ${topic} with a cut fault: not possible now`);
    return;
  }
  cutFault(sim, modeChoice, followerChoice, delayMs, downMs);
  await rejoin(sim, edge, topic, "re-add", true);
  // Every check at each half second until the fault played out: the re-add's consent to cut ends once
  // the partition was seen MIRRORING twice, so a cut made again after the fault's crash is not taken for it.
  const until = sim.world.clock.now() + delayMs + downMs + 1_000;
  while (sim.world.clock.now() < until) {
    await sim.world.time.advance(500);
    await checkNow(sim);
  }
}
