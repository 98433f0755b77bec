import { MIRROR_STATE_TOPIC, mirrorStatePartitionFor } from "@cluster-mirror/mirror";
import { completeFailovers } from "./failover-completion";
import {
  crashBroker,
  crashMirrorStateLeader,
  downBrokers,
  electPreferredLeaders,
  restartAll,
  setControllerAvailable,
  setDiskLatency,
  uncleanLeaderElection,
} from "./faults";
import { partitionId } from "./model";
import type { Simulation } from "./simulation";
import { pick, produce, produceKeyed, txnBegin, txnEnd } from "./workload";

/** Crashes one broker of one cluster, keeping at most one broker down per cluster. */
export function crash(sim: Simulation, nodeChoice: number, brokerChoice: number): void {
  const node = pick(sim.world.spec.clusters, nodeChoice)!;
  const cluster = sim.node(node).cluster;
  if (downBrokers(cluster, sim.brokers).length > 0) {
    sim.step(`crash on ${node}: one broker already down`);
    return;
  }
  const broker = Math.abs(brokerChoice) % sim.brokers;
  crashBroker(cluster, broker);
  sim.step(`crash ${node} broker ${broker}`);
}

/**
 * Commits the open transaction (one begun on writable target `target`, partition `partition`, as `txnBegin`,
 * when none is open) and crashes the leader of its partition inside the commit,
 * restarting it `downMs` later: `when` 0 (even) right after that leader appended the COMMIT marker, while
 * the coordinator is still writing it; 1 (odd) once `commit()` returned, where the marker may still be on
 * the leader alone (its followers fetch it a moment later). `delayMs` 0 crashes before anything else runs,
 * as a process dying at that point; otherwise `delayMs` later. No crash when a broker of the cluster is
 * already down, or (`when` 0) the marker is not written while `commit()` runs.
 */
export async function txnCommitCrash(
  sim: Simulation,
  target: number,
  partition: number,
  when: number,
  delayMs: number,
  downMs: number,
): Promise<void> {
  if (!sim.openTxn) await txnBegin(sim, target, partition);
  const open = sim.openTxn;
  if (!open) return;
  const atAppend = when % 2 === 0;
  // The node's current process at each moment (a node restart may replace it while the crash waits).
  const current = () => sim.node(open.node).cluster;
  const crash = (brokerId: number) => {
    const cluster = current();
    if (downBrokers(cluster, sim.brokers).length > 0 || !cluster.broker(brokerId)) return;
    crashBroker(cluster, brokerId);
    sim.step(
      `crashed ${open.node} broker ${brokerId}, leader of ${open.topic}-${open.partition}, ${delayMs} ms after ${atAppend ? "it appended the marker" : "the commit returned"}`,
    );
    sim.world.scheduler.schedule(() => current().startBroker(brokerId), downMs);
  };
  const crashSoon = (brokerId: number) => {
    if (delayMs === 0) crash(brokerId);
    else sim.world.scheduler.schedule(() => crash(brokerId), delayMs);
  };
  const armed = (node: string, brokerId: number, topic: string, partition: number) => {
    if (node !== open.node || topic !== open.topic || partition !== open.partition) return;
    sim.controlAppendListeners.delete(armed);
    crashSoon(brokerId);
  };
  if (atAppend) sim.controlAppendListeners.add(armed);
  try {
    await txnEnd(sim, true);
  } finally {
    sim.controlAppendListeners.delete(armed);
  }
  if (atAppend) return;
  const leader = current().controller.image.partition(open.topic, open.partition)?.leader ?? -1;
  if (leader >= 0) crashSoon(leader);
}

/**
 * Schedules a crash of one broker `delayMs` from now and its restart `downMs` later, on the simulation's
 * scheduler: the crash lands inside whatever the next commands are doing (a waiting failover's STOPPING, a
 * failback's PREPARING, a transaction commit), not between commands. `brokerChoice` 0 picks the leader of
 * the `__mirror_state` partition that owns the node's first mirror partition (its in-flight state writes
 * lose their leader), 1 the leader of the first mirror partition, others a broker by id.
 */
export function crashSoon(
  sim: Simulation,
  nodeChoice: number,
  brokerChoice: number,
  delayMs: number,
  downMs: number,
): void {
  const node = pick(sim.world.spec.clusters, nodeChoice)!;
  const choose = () => faultBroker(sim, node, brokerChoice);
  // The node's current process when each lands (a node restart may replace it meanwhile).
  sim.world.scheduler.schedule(() => {
    const cluster = sim.node(node).cluster;
    if (downBrokers(cluster, sim.brokers).length > 0) return;
    const broker = choose();
    if (broker === undefined) return;
    crashBroker(cluster, broker);
    sim.world.scheduler.schedule(() => {
      sim.node(node).cluster.startBroker(broker);
    }, downMs);
  }, delayMs);
  sim.step(`crash ${node} broker (choice ${brokerChoice}) in ${delayMs} ms for ${downMs} ms`);
}

/**
 * The broker a scheduled fault hits on `node`, chosen when it lands: `brokerChoice` 0 (mod 3) the leader of
 * the `__mirror_state` partition that owns the node's first mirror partition, 1 the leader of the first
 * mirror partition, others a broker by id; undefined when the chosen partition has no leader.
 */
function faultBroker(sim: Simulation, node: string, brokerChoice: number): number | undefined {
  const cluster = sim.node(node).cluster;
  const mirrored = sim.node(node).mirroring.coordinators.describe()[0]?.key;
  const statePartitions = cluster.controller.image.topic(MIRROR_STATE_TOPIC)?.partitions.length ?? 1;
  const meta =
    brokerChoice % 3 === 0
      ? cluster.controller.image.partition(
          MIRROR_STATE_TOPIC,
          mirrored ? mirrorStatePartitionFor(mirrored, statePartitions) : 0,
        )
      : brokerChoice % 3 === 1 && mirrored
        ? cluster.controller.image.partition(mirrored.topic, mirrored.partition)
        : undefined;
  if (meta) return meta.leader >= 0 ? meta.leader : undefined;
  return Math.abs(brokerChoice) % sim.brokers;
}

/**
 * Fills one broker's disk `delayMs` from now, on the simulation's scheduler (so it lands inside whatever the
 * next commands are doing), and frees space on it `fullMs` later: meanwhile its appends (as leader, as
 * follower, the mirror's), compaction rewrites and checkpoint writes fail with KAFKA_STORAGE_ERROR. The
 * broker keeps running. `brokerChoice` as `crashSoon`'s. Nothing is lost: every write that failed is retried.
 */
export function diskFull(
  sim: Simulation,
  nodeChoice: number,
  brokerChoice: number,
  delayMs: number,
  fullMs: number,
): void {
  const node = pick(sim.world.spec.clusters, nodeChoice)!;
  // The node's current process when each lands (the disk outlives a node restart, its process does not).
  sim.world.scheduler.schedule(() => {
    const broker = faultBroker(sim, node, brokerChoice);
    if (broker === undefined) return;
    sim.node(node).cluster.setDiskFull(broker, true);
    sim.stats.fullDisks++;
    sim.step(`disk of ${node} broker ${broker} full`);
    sim.world.scheduler.schedule(() => {
      sim.node(node).cluster.setDiskFull(broker, false);
      sim.step(`disk of ${node} broker ${broker} has space again`);
    }, fullMs);
  }, delayMs);
  sim.step(`disk full on ${node} broker (choice ${brokerChoice}) in ${delayMs} ms for ${fullMs} ms`);
}

/** Restarts every down broker of one cluster. */
export async function restart(sim: Simulation, nodeChoice: number): Promise<void> {
  const node = pick(sim.world.spec.clusters, nodeChoice)!;
  const restarted = restartAll(sim.node(node).cluster, sim.brokers);
  sim.step(`restart ${node} brokers [${restarted.join(",")}]`);
  await sim.world.time.advance(100);
}

/** Moves a `__mirror_state` partition's leadership by crashing its leader (at most one broker down). */
export function moveStateLeader(sim: Simulation, nodeChoice: number, partitionChoice: number): void {
  const node = pick(sim.world.spec.clusters, nodeChoice)!;
  const cluster = sim.node(node).cluster;
  if (downBrokers(cluster, sim.brokers).length > 0) {
    sim.step(`move state leader on ${node}: a broker is down`);
    return;
  }
  const partitions = cluster.controller.image.topic(MIRROR_STATE_TOPIC)?.partitions.length ?? 1;
  const p = Math.abs(partitionChoice) % partitions;
  const crashed = crashMirrorStateLeader(cluster, p);
  sim.step(`move ${MIRROR_STATE_TOPIC}-${p} leader on ${node}: crashed broker ${crashed ?? "-"}`);
}

/** Preferred leader election on one cluster (moves leaders, coordinators included, back home). */
export function electPreferred(sim: Simulation, nodeChoice: number): void {
  const node = pick(sim.world.spec.clusters, nodeChoice)!;
  electPreferredLeaders(sim.node(node).cluster);
  sim.step(`preferred leader election on ${node}`);
}

/** Cuts the link of one edge. */
export function cutLink(sim: Simulation, edgeChoice: number): void {
  const edge = pick(sim.edges, edgeChoice);
  if (!edge) return;
  sim.world.link(edge.from, edge.to).cutLink();
  sim.step(`cut link ${edge.from}->${edge.to}`);
}

/**
 * For the next `ms` of virtual time (the command advances it), the source of one edge answers its topic
 * metadata without configs (as a refused DescribeConfigs): the mirror must take them as unknown and change
 * none it copied.
 */
export async function refuseConfigs(sim: Simulation, edgeChoice: number, ms: number): Promise<void> {
  const edge = pick(sim.edges, edgeChoice);
  if (!edge) return;
  const link = sim.world.link(edge.from, edge.to);
  link.refuseConfigs(true);
  sim.step(`configs of ${edge.from} refused to ${edge.to} for ${ms} ms`);
  try {
    await sim.world.time.advance(ms);
  } finally {
    link.refuseConfigs(false);
  }
}

/** Heals the link of one edge. */
export function healLink(sim: Simulation, edgeChoice: number): void {
  const edge = pick(sim.edges, edgeChoice);
  if (!edge) return;
  sim.world.link(edge.from, edge.to).heal();
  sim.step(`heal link ${edge.from}->${edge.to}`);
}

/** Lets virtual time pass. */
export async function advance(sim: Simulation, ms: number): Promise<void> {
  await sim.world.time.advance(ms);
  sim.step(`advance ${ms} ms`);
}

/**
 * Unclean leader election on a writable, non-compacted source partition (see `uncleanLeaderElection`);
 * acknowledged writes the source itself lost are dropped from the model (that loss is the source's).
 */
export async function uncleanElection(sim: Simulation, target: number): Promise<void> {
  const t = pick(
    sim.writableTargets().filter((x) => !sim.model.topics.get(x.topic)?.compacted),
    target,
  );
  if (!t) {
    sim.step("unclean election: nothing writable");
    return;
  }
  const cluster = sim.node(t.node).cluster;
  const outcome = await uncleanLeaderElection(
    cluster,
    sim.world.time,
    t.topic,
    0,
    () =>
      produce(
        sim,
        sim.writableTargets().findIndex((x) => x.node === t.node && x.topic === t.topic),
        0,
        2,
      ),
    // A failover of the topic that reached STOPPED meanwhile is checked before the crashes lose its end.
    () => completeFailovers(sim),
  );
  if ("skipped" in outcome) {
    sim.stats.uncleanSkipped++;
    sim.step(`unclean election on ${t.node}/${t.topic}-0 (skipped: ${outcome.skipped})`);
    return;
  }
  sim.stats.uncleanElections++;
  // Every partition of the topic the crash elected uncleanly (the setting is the topic's), not only 0.
  for (const { partition, newLeaderEnd: end } of outcome.unclean) {
    sim.model.diverged.add(partitionId(t.node, t.topic, partition));
    // The source lost what its new leader never had; every copy of the partition may follow it down there.
    for (const node of sim.world.spec.clusters) {
      sim.prefix.allow({
        node,
        topic: t.topic,
        partition,
        floor: end,
        reason: `unclean election on ${t.node}`,
        expires: "never",
      });
    }
    sim.model.acked = sim.model.acked.filter(
      (w) => !(w.node === t.node && w.topic === t.topic && w.partition === partition && w.offset >= end),
    );
    // A failover onto this node promised its source's writes below the HW it had then; the election lost
    // its log from `end` on, those included (soak faults FC_SEED=384: orders-1 of a new primary, elected
    // uncleanly along with partition 0 since the setting is the topic's).
    for (const f of sim.model.failovers) {
      if (f.node !== t.node || f.topic !== t.topic || f.partition !== partition) continue;
      if (f.rewrittenFrom === undefined || end < f.rewrittenFrom) f.rewrittenFrom = end;
    }
    // A failover of the partition not yet checked at STOPPED (still STOPPING at the crashes, the setting
    // being the topic's) may have had its barrier on the lost log end: nothing is left to check it on (soak
    // faults FC_SEED=502).
    for (const f of sim.pendingFailovers) {
      if (f.edge.to === t.node && f.topic === t.topic && !f.done.has(partition))
        f.lostByElection.add(partition);
    }
  }
  const others = outcome.unclean
    .filter((u) => u.partition !== 0)
    .map((u) => `${u.partition}@${u.newLeaderEnd}`);
  sim.step(
    `unclean election on ${t.node}/${t.topic}-0: new leader log end ${outcome.newLeaderEnd}${others.length > 0 ? ` (also unclean: ${others.join(",")})` : ""}`,
  );
}

/** Makes one broker's disk slow (`ms` per fsync: delayed produce acks and follower fetches); see faults.ts. */
export function slowDisk(sim: Simulation, nodeChoice: number, brokerChoice: number, ms: number): void {
  const node = pick(sim.world.spec.clusters, nodeChoice)!;
  const broker = Math.abs(brokerChoice) % sim.brokers;
  setDiskLatency(sim.node(node).cluster, broker, ms);
  sim.stats.slowDisks++;
  sim.step(`slow disk ${node} broker ${broker}: ${ms} ms`);
}

/**
 * Slows (or, `ms` 0, speeds up again) the network between one cluster's brokers: every replica fetch takes
 * `ms` of virtual time each way (`KafkaCluster.setReplicationLatency`), until the next such command or the
 * settle. Followers then learn a leader's cut (a mirror's truncation) that much later, so a mirror's append
 * lands while they still hold the cut batches, and the high watermark must not count them
 * (`afterHighWatermarkMove` checks every move the moment it happens).
 */
export function slowReplication(sim: Simulation, nodeChoice: number, ms: number): void {
  const node = pick(sim.world.spec.clusters, nodeChoice)!;
  sim.node(node).cluster.setReplicationLatency(ms);
  sim.step(ms === 0 ? `fast replication on ${node}` : `slow replication on ${node}: ${ms} ms`);
}

/** Makes every disk of one cluster fast again. */
export function fastDisk(sim: Simulation, nodeChoice: number): void {
  const node = pick(sim.world.spec.clusters, nodeChoice)!;
  const cluster = sim.node(node).cluster;
  for (let b = 0; b < sim.brokers; b++) setDiskLatency(cluster, b, 0);
  sim.step(`fast disks on ${node}`);
}

/**
 * A controller failover on one cluster: no active controller for `ms` of virtual time (mutating requests
 * fail with NOT_CONTROLLER, broker fencing is queued), then a new one takes over. When `crashChoice` is a
 * multiple of 3 and no broker of the cluster is down, one broker crashes in the middle of the window (the
 * new controller fences it when it takes over).
 */
export async function controllerFailover(
  sim: Simulation,
  nodeChoice: number,
  ms: number,
  crashChoice: number,
): Promise<void> {
  const node = pick(sim.world.spec.clusters, nodeChoice)!;
  const cluster = sim.node(node).cluster;
  const crashed =
    Math.abs(crashChoice) % 3 === 0 && downBrokers(cluster, sim.brokers).length === 0
      ? Math.floor(Math.abs(crashChoice) / 3) % sim.brokers
      : undefined;
  setControllerAvailable(cluster, false);
  sim.stats.controllerFailovers++;
  try {
    const half = Math.floor(ms / 2);
    await sim.world.time.advance(half);
    if (crashed !== undefined) crashBroker(cluster, crashed);
    await sim.world.time.advance(ms - half);
  } finally {
    setControllerAvailable(cluster, true);
  }
  sim.step(
    `controller failover on ${node}: unavailable ${ms} ms${crashed === undefined ? "" : `, broker ${crashed} crashed meanwhile`}`,
  );
}

/**
 * A power loss of one broker, `delayMs` from now (on the simulation's scheduler, so it lands inside whatever
 * the next commands are doing), the broker back `downMs` later with any other broker of the cluster then
 * down (the operator brings the cluster back). The broker dies without a clean shutdown, and its last write
 * to one partition reached the disk only in part: that partition's last batch is torn (Kafka does not fsync
 * each write, it counts on replication: a write still in the page cache is lost with the power). Its log
 * recovery cuts the torn batch, so the controller takes the replica out of the ISR or, as the last ISR
 * member, elects an eligible leader replica fenced out of the ISR (KIP-966).
 *
 * The broker is that partition's leader when the fault lands, the partition chosen among the cluster's
 * (workload topics and mirror copies) by `partitionChoice`: 0 (mod 3) the one with the fewest in-sync
 * replicas (where a power loss hurts most), 1 the one the workload wrote last (the broker taking the
 * writes), else by index. It strikes even with another broker of the cluster down: with
 * min.insync.replicas=2, every acks=all write acknowledged and every record below a high watermark is on a
 * second replica, which must keep it. One such loss at a time: a power loss while another broker of the
 * cluster still recovers from one (down, or a replica of it not back in its ISR) tears nothing, as if its
 * writes had been synced (two replicas losing the same write is more than min.insync.replicas=2 promises to
 * survive). Without min.insync.replicas a leader alone in its ISR commits alone, and this loses data for
 * good (as it would in Kafka): for `SimulationOptions.minInsyncReplicas` worlds only.
 */
export function powerLoss(
  sim: Simulation,
  nodeChoice: number,
  partitionChoice: number,
  delayMs: number,
  downMs: number,
): void {
  const node = pick(sim.world.spec.clusters, nodeChoice)!;
  const land = () => {
    const cluster = sim.node(node).cluster;
    const image = cluster.controller.image;
    const partitions = [...image.topicIdsByName.keys()]
      .filter((t) => !t.startsWith("__"))
      .sort()
      .flatMap((topic) =>
        (image.topic(topic)?.partitions ?? []).map((_, partition) => ({ topic, partition })),
      );
    const last = sim.lastWrite;
    const exposed = partitions
      .map((x) => ({ ...x, meta: image.partition(x.topic, x.partition) }))
      .filter((x) => x.meta && x.meta.leader >= 0)
      .sort((x, y) => x.meta!.isr.length - y.meta!.isr.length)[0];
    const target =
      partitionChoice % 3 === 0 && exposed
        ? exposed
        : partitionChoice % 3 === 1 && last && image.partition(last.topic, last.partition)
          ? last
          : pick(partitions, Math.floor(partitionChoice / 3));
    if (!target) return;
    const leader = image.partition(target.topic, target.partition)?.leader ?? -1;
    const log =
      leader >= 0 ? cluster.broker(leader)?.replica(target.topic, target.partition)?.log : undefined;
    if (!log) return;
    let tail: { baseOffset: bigint; sizeInBytes: number } | undefined;
    for (const b of log.batches()) tail = b;
    // Another broker of the cluster still recovering from a power loss (down, or a replica not yet back in
    // its ISR) may miss the same writes: min.insync.replicas=2 survives one such loss at a time, not two.
    const recovering = Array.from({ length: sim.brokers }, (_, b) => b).find(
      (b) =>
        b !== leader &&
        (sim.tornBrokers.has(`${node}/${b}`) ||
          (cluster
            .localBroker(b)
            ?.replicas()
            .some((r) => r.recoveryLoss !== undefined) ??
            false)),
    );
    crashBroker(cluster, leader);
    // The torn write: the active segment ends inside its last batch.
    const storage = sim.world.dataDir(node, leader)?.openLog(target.topic, target.partition);
    const segment = storage?.segments().at(-1);
    let torn = "";
    if (recovering !== undefined) torn = ` (nothing torn: broker ${recovering} is still recovering from one)`;
    else if (
      storage &&
      segment &&
      tail &&
      segment.baseOffset <= tail.baseOffset &&
      segment.sizeInBytes >= tail.sizeInBytes
    ) {
      storage.truncate(segment.baseOffset, segment.sizeInBytes - Math.ceil(tail.sizeInBytes / 2));
      sim.tornBrokers.add(`${node}/${leader}`);
      torn = `, its last batch (${tail.baseOffset}) torn`;
    }
    sim.stats.powerLosses++;
    sim.step(`power loss of ${node} broker ${leader}, leader of ${target.topic}-${target.partition}${torn}`);
    sim.world.scheduler.schedule(() => {
      sim.tornBrokers.delete(`${node}/${leader}`);
      const now = sim.node(node).cluster;
      // The operator brings the cluster back: this broker, then any other one down. A partition whose last
      // in-sync replica lost data waits for an eligible leader replica, which may be one of those.
      const down = downBrokers(now, sim.brokers);
      if (down.length === 0) return;
      now.startBroker(leader);
      for (const b of down) now.startBroker(b);
      sim.step(`power back on ${node}: brokers [${down.join(",")}] start`);
    }, downMs);
  };
  if (delayMs === 0) land();
  else sim.world.scheduler.schedule(land, delayMs);
  sim.step(`power loss on ${node} (choice ${partitionChoice}) in ${delayMs} ms for ${downMs} ms`);
}

/**
 * A cluster under load loses a broker and another broker's disk fills (for `fullMs`) while the producers
 * keep writing: a keyed acks=all produce to writable target `target` (`produceKeyed`, awaited), then
 * replica.lag.time.max.ms of virtual time (11 s, the simulation's 10 s and one more) as the load goes on.
 * Partitions led by the third broker get writes that neither follower can take: their ISR falls to the
 * leader alone, under min.insync.replicas=2, with the writes in flight, whose acknowledgements must wait
 * (the high watermark held) until a follower is back. A broker of the cluster already down counts as the
 * crashed one; the disk that fills is one of the two others' (`fullChoice`).
 */
export async function underMinIsrWrites(
  sim: Simulation,
  nodeChoice: number,
  brokerChoice: number,
  fullChoice: number,
  fullMs: number,
  target: number,
  count: number,
): Promise<void> {
  const node = pick(sim.world.spec.clusters, nodeChoice)!;
  const cluster = sim.node(node).cluster;
  const down = downBrokers(cluster, sim.brokers)[0] ?? Math.abs(brokerChoice) % sim.brokers;
  if (cluster.runningBrokers().includes(down)) {
    crashBroker(cluster, down);
    sim.step(`crash ${node} broker ${down}`);
  }
  const others = Array.from({ length: sim.brokers }, (_, b) => b).filter((b) => b !== down);
  const full = others[Math.abs(fullChoice) % others.length]!;
  cluster.setDiskFull(full, true);
  sim.stats.fullDisks++;
  sim.step(`disk of ${node} broker ${full} full for ${fullMs} ms`);
  sim.world.scheduler.schedule(() => {
    sim.node(node).cluster.setDiskFull(full, false);
    sim.step(`disk of ${node} broker ${full} has space again`);
  }, fullMs);
  await produceKeyed(sim, target, count);
  await sim.world.time.advance(11_000);
  sim.step("11000 ms of load under min.insync.replicas");
}
