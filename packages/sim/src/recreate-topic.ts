import type { KafkaCluster } from "@cluster-mirror/cluster";
import { hexOf, leaderLog } from "./invariants/logs";
import type { DeletedIncarnation, TopicModel } from "./model";
import { failoverTopic, rejoin } from "./operator";
import type { Simulation } from "./simulation";
import { describeError, pick, produce } from "./workload";

/** Every batch any running replica of `topic`-`partition` holds (base offset -> hex). */
function heldBatches(cluster: KafkaCluster, brokers: number, topic: string, partition: number) {
  const out = new Map<bigint, string>();
  for (let id = 0; id < brokers; id++) {
    const log = cluster.localBroker(id)?.replica(topic, partition)?.log;
    for (const b of log?.batches() ?? []) if (!out.has(b.baseOffset)) out.set(b.baseOffset, hexOf(b));
  }
  return out;
}

/**
 * Deletes a topic on the cluster it was created on (where it is written, not mirrored) and creates it again
 * under its name, with `grow` more partitions, then writes `count` records to it: the new topic has another
 * id, and its offsets overlap the old topic's. The mirrors that copied the old topic must never append the
 * new topic's batches to their copies (fetching by name would), fail their partitions for good, and measure
 * no lag against the new topic. Before the deletion the sim snapshots the old topic's batches and every
 * copy's (`DeletedIncarnation`); the old topic's acknowledged writes and commits leave the model (the
 * operator deleted them), so nothing promises them again.
 */
export async function recreateTopic(sim: Simulation, choice: number, grow: number, count: number) {
  const t = pick(recreatable(sim), choice);
  if (!t) {
    sim.step("recreate: no topic written where it was created");
    return;
  }
  await recreate(sim, t, grow, count);
}

/** Topics written where they were created, with no transaction open on them: those `recreate` may take. */
function recreatable(sim: Simulation): TopicModel[] {
  return [...sim.model.topics.values()].filter(
    (x) => sim.writable(x.root, x.name) && (sim.openTxn?.node !== x.root || sim.openTxn.topic !== x.name),
  );
}

/**
 * A re-add (`readd`) of a failed-over topic, with the source topic deleted and created again while the
 * re-add's PREPARING looks up where to truncate. An ACTIVE edge topic is first written to on its source
 * (three records per partition), left a few seconds to copy, and failed over (waiting for STOPPED), so the
 * copy holds mirrored data the re-add must keep; the re-add then asks for `--truncate-local-writes` (the
 * failover wrote locally). The link to the source is slowed to 2 s each way for the add, so its lookups are
 * still in flight when `addTopics` returns and the topic is replaced. PREPARING must truncate nothing by the
 * new topic's offsets (its lookups name the old topic's id and are refused): the re-add's allowed cut,
 * computed against the old topic, is the committed-prefix check's floor.
 */
export async function readdRecreate(
  sim: Simulation,
  choice: number,
  truncateLocalWrites: boolean,
  grow: number,
) {
  const et = pick(
    sim
      .edgeTopics((s) => s === "REMOVED" || s === "ACTIVE")
      .filter(({ edge, topic }) => recreatable(sim).some((t) => t.root === edge.from && t.name === topic)),
    choice,
  );
  if (!et) {
    sim.step("re-add while the source topic is recreated: nothing mirrored from where it is written");
    return;
  }
  const { edge, topic } = et;
  if (sim.openTxn?.node === edge.to && sim.openTxn.topic === topic) {
    sim.step(`re-add ${edge.mirror} ${topic}: a transaction is open there`);
    return;
  }
  let truncate = truncateLocalWrites;
  if (sim.edgeState(edge, topic) === "ACTIVE") {
    const target = sim.writableTargets().findIndex((t) => t.node === edge.from && t.topic === topic);
    const partitions = sim.node(edge.from).cluster.controller.image.topic(topic)?.partitions.length ?? 0;
    for (let p = 0; p < partitions; p++) await produce(sim, target, p, 3);
    await sim.world.time.advance(5_000);
    await failoverTopic(sim, edge, topic, "unplanned");
    if (sim.edgeState(edge, topic) !== "REMOVED") return;
    truncate = true;
  }
  const link = sim.world.link(edge.from, edge.to);
  link.slowDown(2_000);
  try {
    await rejoin(sim, edge, topic, "re-add", truncate);
    if (sim.edgeState(edge, topic) !== "ACTIVE") return;
    const t = sim.model.topics.get(topic);
    if (t) await recreate(sim, t, grow, 1);
  } finally {
    link.slowDown(0);
  }
}

/** `recreateTopic` of one topic. */
async function recreate(sim: Simulation, t: TopicModel, grow: number, count: number): Promise<void> {
  const cluster = sim.node(t.root).cluster;
  const meta = cluster.controller.image.topic(t.name);
  if (!meta) return;
  const batches = new Map<number, Map<bigint, string>>();
  for (const p of meta.partitions) {
    const log = leaderLog(cluster, t.name, p.partition);
    if (!log) {
      sim.step(`recreate ${t.root}/${t.name}: partition ${p.partition} has no leader`);
      return;
    }
    batches.set(p.partition, new Map([...log.batches()].map((b) => [b.baseOffset, hexOf(b)])));
  }
  const copies: DeletedIncarnation["copies"] = new Map();
  for (const edge of sim.edges) {
    if (edge.from !== t.root || sim.edgeState(edge, t.name) === undefined) continue;
    const dst = sim.node(edge.to).cluster;
    const copy = dst.controller.image.topic(t.name);
    if (copy?.topicId !== meta.topicId) continue;
    copies.set(
      edge.mirror,
      new Map(copy.partitions.map((p) => [p.partition, heldBatches(dst, sim.brokers, t.name, p.partition)])),
    );
  }
  // Mirror partitions of the topic on this cluster itself (it is the destination of a failover that has not
  // reached STOPPED): those not STOPPED by the deletion must fail for good, the new topic is not theirs.
  const mirrored = sim
    .node(t.root)
    .mirroring.coordinators.describe()
    .filter((v) => v.key.topicId === meta.topicId);
  const admin = sim.node(t.root).kafka.admin();
  try {
    await sim.world.time.run(admin.deleteTopics({ topics: [t.name] }), 120_000);
  } catch (error) {
    if (cluster.controller.image.topic(t.name)?.topicId === meta.topicId) {
      sim.step(`recreate ${t.root}/${t.name}: delete refused: ${describeError(error)}`);
      return;
    }
  }
  sim.model.incarnations.set(meta.topicId, {
    node: t.root,
    topic: t.name,
    topicId: meta.topicId,
    batches,
    copies,
  });
  if (mirrored.length > 0) {
    sim.model.deletedCopies.set(meta.topicId, {
      node: t.root,
      topic: t.name,
      stopped: new Set(mirrored.filter((v) => v.state === "STOPPED").map((v) => v.key.partition)),
    });
  }
  const ours = (x: { node: string; topic: string }) => x.node === t.root && x.topic === t.name;
  // A failover into the deleted topic has nothing left to complete.
  for (const f of [...sim.pendingFailovers]) {
    if (f.edge.to === t.root && f.topic === t.name)
      sim.pendingFailovers.splice(sim.pendingFailovers.indexOf(f), 1);
  }
  sim.model.acked = sim.model.acked.filter((w) => !ours(w));
  sim.model.commits = sim.model.commits.filter((c) => !ours(c));
  sim.model.failovers = sim.model.failovers.filter((f) => !ours(f));
  sim.prefix.forget(t.root, t.name);
  const partitions = meta.partitions.length + (Math.abs(grow) % 2);
  try {
    await sim.createTopic(t.root, t.name, partitions, t.compacted);
  } catch (error) {
    sim.step(
      `recreate ${t.root}/${t.name}: deleted (id ${meta.topicId}), create refused: ${describeError(error)}`,
    );
    return;
  }
  const id = cluster.controller.image.topic(t.name)?.topicId;
  sim.step(
    `recreate ${t.root}/${t.name}: id ${meta.topicId} deleted, created again as ${id} (${partitions} partitions)`,
  );
  // The node's idempotent producer has sequences for the old topic's partitions, which the new topic does
  // not know (it would accept them, as Kafka does from a producer it has no state for): its applications
  // start a new producer.
  const producer = sim.producers.get(t.root);
  sim.producers.delete(t.root);
  await producer?.disconnect().catch(() => undefined);
  const target = sim.writableTargets().findIndex(ours);
  for (let p = 0; p < partitions && count > 0; p++) await produce(sim, target, p, count);
}
