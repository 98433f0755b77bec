import { crashBroker, downBrokers } from "./faults";
import { leaderLog } from "./invariants/logs";
import { failoverTopic } from "./operator";
import type { Simulation } from "./simulation";
import { describeError, observeCommittedWrites, pick, produceAcked, rawWrite } from "./workload";

/**
 * Leaves a writable topic's partition with a new leader that has not learnt its high watermark: the
 * network between the target cluster's brokers is made slow (`latencyMs` per replica fetch, see
 * `KafkaCluster.setReplicationLatency`), one acks=-1 write is acknowledged, and the partition's leader
 * crashes at once (restarted `downMs` later). The follower whose fetch completed the commit learnt the new
 * high watermark in its answer; the other learns it only on its next fetch, `latencyMs` later. When that one
 * is elected, its high watermark stays below its epoch start until a follower fetched from it (another
 * `latencyMs`): a ListOffsets there must answer OFFSET_NOT_AVAILABLE, not the stale high watermark, or a
 * promote taken in that window barriers below the acknowledged write (KIP-207; the seeded bug
 * props-32-stale-high-watermark). The latency goes back to 0 `10 * latencyMs` later. `how % 3` picks what
 * the operator does at once, inside that window: 0 nothing, 1 fail the topic over with `--promote`, 2 a
 * planned failover (catch-up barrier first), on an edge that copies the topic from the crashed cluster;
 * `how >= 3` also cuts the links of the edges copying from that cluster during the write (healed right
 * after the crash), so their mirrors have yet to fetch the acknowledged record. `how >= 6` writes with
 * acks=1 instead (straight to the leader, `rawWrite`) and crashes the leader once its high watermark passed
 * the write (committed, though the client was told before the followers had it).
 */
export async function crashAfterAck(
  sim: Simulation,
  target: number,
  partitionChoice: number,
  latencyMs: number,
  downMs: number,
  how = 0,
): Promise<void> {
  const t = pick(sim.writableTargets(), target);
  if (!t) {
    sim.step("crash after ack: nothing writable");
    return;
  }
  const cluster = sim.node(t.node).cluster;
  if (downBrokers(cluster, sim.brokers).length > 0) {
    sim.step(`crash after ack on ${t.node}: a broker is down`);
    return;
  }
  cluster.setReplicationLatency(latencyMs);
  // Back to 0 later, unless another command set its own latency meanwhile.
  sim.world.scheduler.schedule(() => {
    if (cluster.replicationLatency() === latencyMs) cluster.setReplicationLatency(0);
  }, 10 * latencyMs);
  const cut =
    Math.abs(how) % 6 >= 3
      ? sim.edges
          .filter((e) => e.from === t.node)
          .map((e) => sim.world.link(e.from, e.to))
          .filter((l) => !l.isCut)
      : [];
  for (const link of cut) link.cutLink();
  const written =
    Math.abs(how) % 12 >= 6
      ? await leaderOnlyCommitted(sim, t, partitionChoice)
      : await produceAcked(sim, target, partitionChoice, 1);
  const leader = written
    ? cluster.controller.image.partition(written.topic, written.partition)?.leader
    : undefined;
  const up = written && leader !== undefined && leader >= 0 && downBrokers(cluster, sim.brokers).length === 0;
  if (up) {
    observeCommittedWrites(sim);
    crashBroker(cluster, leader);
    // The node's current process: a node restart meanwhile started every broker of a new one.
    sim.world.scheduler.schedule(() => sim.node(t.node).cluster.startBroker(leader), downMs);
  }
  for (const link of cut) link.heal();
  if (!up) {
    sim.step(`crash after ack on ${t.node}: no write acknowledged with its leader up`);
    return;
  }
  const hw = (id: number) =>
    cluster.localBroker(id)?.replica(written.topic, written.partition)?.log.highWatermark;
  const now = cluster.controller.image.partition(written.topic, written.partition)?.leader ?? -1;
  sim.step(
    `crash ${t.node} broker ${leader} (leader of ${written.topic}-${written.partition}) right after ${"leaderOnly" in written ? "an acks=1 write committed" : "an ack"} at ${written.offset}, replication latency ${latencyMs} ms${cut.length > 0 ? ", the mirrors' links cut during the write" : ""}; new leader ${now} (high watermark ${hw(now) ?? "-"}) for ${downMs} ms`,
  );
  const mode = ([undefined, "promote", "planned"] as const)[Math.abs(how) % 3];
  const edge = sim.edges.find((e) => {
    const state = e.from === t.node ? sim.edgeState(e, written.topic) : undefined;
    return state === "ACTIVE" || state === "PAUSED";
  });
  if (mode && !edge)
    sim.step(`crash after ack: no ${mode} failover, no edge copies ${t.node}/${written.topic}`);
  if (mode && edge) await failoverTopic(sim, edge, written.topic, mode);
}

/**
 * One acks=1 write to a partition of `t` (chosen as `produce` chooses), then a wait until its leader's high
 * watermark passed it. Undefined when the write was refused or never committed within 10 s.
 */
async function leaderOnlyCommitted(
  sim: Simulation,
  t: { node: string; topic: string },
  partitionChoice: number,
): Promise<{ topic: string; partition: number; offset: bigint; leaderOnly: true } | undefined> {
  const cluster = sim.node(t.node).cluster;
  const partitions = cluster.controller.image.topic(t.topic)?.partitions.length ?? 1;
  const partition = Math.abs(partitionChoice) % partitions;
  try {
    // Through virtual time: a slow disk acknowledges acks=1 only after a scheduled fsync.
    const offset = await sim.world.time.run(rawWrite(sim, t.node, t.topic, partition), 120_000);
    await sim.world.time.until(
      () => (leaderLog(cluster, t.topic, partition)?.highWatermark ?? -1n) > offset,
      `the high watermark of ${t.node}/${t.topic}-${partition} past ${offset}`,
      10_000,
      1,
    );
    return { topic: t.topic, partition, offset, leaderOnly: true };
  } catch (error) {
    sim.step(`acks=1 write to ${t.node}/${t.topic}-${partition}: ${describeError(error)}`);
    return undefined;
  }
}
