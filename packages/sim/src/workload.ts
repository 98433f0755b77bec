import { encodeRecordBatch, KafkaError } from "@cluster-mirror/protocol";
import { batchesByOffset, hexOf, leaderLog } from "./invariants/logs";
import { readOnlyReason } from "./invariants/mirror-verdict";
import { type AckedWrite, partitionId } from "./model";
import type { Simulation } from "./simulation";

/** Picks `list[i mod length]`, or undefined for an empty list (commands choose by index, so they shrink). */
export function pick<T>(list: readonly T[], i: number): T | undefined {
  return list.length === 0 ? undefined : list[Math.abs(i) % list.length];
}

/** A refusal as a step line: the Kafka error name and message, or the message. */
export function describeError(error: unknown): string {
  return error instanceof KafkaError
    ? `${error.errorName}: ${error.message}`
    : error instanceof Error
      ? error.message
      : String(error);
}

/**
 * Produces `count` records with the idempotent producer to a writable (node, topic), acks=all. Each
 * acknowledged batch is recorded with its bytes (for the durability check); the PID reset barrier of a
 * failed-over partition must precede it. A READ_ONLY_TOPIC refusal on a topic the model says is writable
 * is a violation (writable after STOPPED).
 */
export async function produce(
  sim: Simulation,
  target: number,
  partitionChoice: number,
  count: number,
): Promise<void> {
  await produceAcked(sim, target, partitionChoice, count);
}

/** `produce`, returning where the acknowledged records went (their first offset), or undefined. */
export async function produceAcked(
  sim: Simulation,
  target: number,
  partitionChoice: number,
  count: number,
): Promise<{ node: string; topic: string; partition: number; offset: bigint } | undefined> {
  const t = pick(sim.writableTargets(), target);
  if (!t) {
    sim.step("produce: nothing writable");
    return undefined;
  }
  const topic = sim.model.topics.get(t.topic)!;
  const cluster = sim.node(t.node).cluster;
  const partitions = cluster.controller.image.topic(t.topic)?.partitions.length ?? topic.partitions;
  const partition = Math.abs(partitionChoice) % partitions;
  sim.lastWrite = { topic: t.topic, partition };
  const messages = Array.from({ length: Math.max(1, count) }, (_, i) => ({
    key: topic.compacted ? `k${i % 3}` : `k${sim.steps.length}-${i}`,
    value: `${t.node}-${sim.steps.length}-${i}`,
    partition,
  }));
  try {
    const meta = await sim.world.time.run(
      (await sim.producer(t.node)).send({ topic: t.topic, messages, acks: -1 }),
      120_000,
    );
    for (const m of meta) recordAck(sim, t.node, t.topic, m.partition, BigInt(m.baseOffset));
    sim.step(`produce ${messages.length} to ${t.node}/${t.topic}-${partition}: ok at ${meta[0]?.baseOffset}`);
    const offset = meta[0] ? BigInt(meta[0].baseOffset) : undefined;
    return offset === undefined ? undefined : { node: t.node, topic: t.topic, partition, offset };
  } catch (error) {
    sim.step(`produce to ${t.node}/${t.topic}-${partition}: ${describeError(error)}`);
    reportWrongRefusal(sim, t.node, t.topic, partition, error);
    return undefined;
  }
}

/**
 * Produces `count` records to every partition of a writable (node, topic) in one send, acks=all, as a
 * producer of keyed records does (its partitioner spreads them over the topic's partitions): one batch per
 * partition, each acknowledged once its partition's ISR has it. Recorded as `produce` records its batches.
 * A refusal (of any partition: the send fails whole) is logged; the batches acknowledged then are not recorded.
 */
export async function produceKeyed(sim: Simulation, target: number, count: number): Promise<void> {
  const t = pick(sim.writableTargets(), target);
  if (!t) {
    sim.step("produce keyed: nothing writable");
    return;
  }
  const topic = sim.model.topics.get(t.topic)!;
  const partitions =
    sim.node(t.node).cluster.controller.image.topic(t.topic)?.partitions.length ?? topic.partitions;
  const messages = Array.from({ length: partitions }, (_, partition) =>
    Array.from({ length: Math.max(1, count) }, (_, i) => ({
      key: topic.compacted ? `k${i % 3}` : `k${sim.steps.length}-${partition}-${i}`,
      value: `${t.node}-${sim.steps.length}-${partition}-${i}`,
      partition,
    })),
  ).flat();
  sim.lastWrite = { topic: t.topic, partition: partitions - 1 };
  try {
    const meta = await sim.world.time.run(
      (await sim.producer(t.node)).send({ topic: t.topic, messages, acks: -1 }),
      120_000,
    );
    for (const m of meta) recordAck(sim, t.node, t.topic, m.partition, BigInt(m.baseOffset));
    sim.step(
      `produce ${count} to each partition of ${t.node}/${t.topic}: ok at ${meta.map((m) => `${m.partition}@${m.baseOffset}`).join(",")}`,
    );
  } catch (error) {
    // Which partition refused is not known here: `produce` checks a READ_ONLY_TOPIC refusal.
    sim.step(`produce keyed to ${t.node}/${t.topic}: ${describeError(error)}`);
  }
}

/**
 * A produce refused as READ_ONLY_TOPIC where nothing makes the partition read-only (every mirror state of
 * it is STOPPED and no replica holds it read-only: see `readOnlyReason`) is a violation: writable after
 * STOPPED. While a failover is still STOPPING (an operator who did not wait) the refusal is right.
 */
export function reportWrongRefusal(
  sim: Simulation,
  node: string,
  topic: string,
  partition: number,
  error: unknown,
): void {
  if (!(error instanceof KafkaError) || error.errorName !== "READ_ONLY_TOPIC") return;
  const { cluster, mirroring } = sim.node(node);
  if (readOnlyReason(cluster, mirroring.coordinators.describe(), topic, partition) !== undefined) return;
  sim.report([
    {
      invariant: "writable-after-stopped",
      message: `${node} ${topic}-${partition}: produce refused as READ_ONLY_TOPIC but every mirror state of the partition is STOPPED (or it never was a mirror)`,
    },
  ]);
}

/** Records an acknowledged batch and checks that it follows the partition's latest PID reset barrier. */
export function recordAck(
  sim: Simulation,
  node: string,
  topic: string,
  partition: number,
  offset: bigint,
  acks: -1 | 1 = -1,
): void {
  const log = leaderLog(sim.node(node).cluster, topic, partition);
  const b = log ? batchesByOffset(log).get(offset) : undefined;
  if (b) {
    const write: AckedWrite = { node, topic, partition, offset, hex: hexOf(b) };
    if (acks === 1) write.leaderOnly = true;
    sim.model.acked.push(write);
  }
  const barrier = [...sim.model.failovers]
    .reverse()
    .find((f) => f.node === node && f.topic === topic && f.partition === partition);
  // An unclean election on this partition may have lost the barrier with the rest of its tail; a mirror's
  // cut at or below it (a re-add or failback since) removed it, and a failover of that add from PREPARING
  // over a log holding no mirrored data writes none (readd-cut-fault FC_SEED=2: a re-add's full cut at 0,
  // made by the leader's successor, then the topic removed again).
  if (
    barrier &&
    offset <= barrier.barrierOffset &&
    (barrier.rewrittenFrom === undefined || barrier.rewrittenFrom > barrier.barrierOffset) &&
    !sim.model.diverged.has(partitionId(node, topic, partition))
  ) {
    sim.report([
      {
        invariant: "pid-barrier-first",
        message: `${node} ${topic}-${partition}: local write at offset ${offset} is not after the MIRROR_PID_RESET barrier at ${barrier.barrierOffset}`,
      },
    ]);
  }
}

/**
 * Acks=1 writes (`leaderOnly`) that their partition's leader's high watermark has passed, the leader still
 * holding them (the same bytes at their offset: not a later batch written there after the write was lost
 * or cut by consent), are committed: from now on they are promised wherever the high watermark is, as
 * acks=all writes are (a new leader's may lag behind them, see `crashAfterAck`). Called after every
 * command (`checkNow`) and by `crashAfterAck` just before it crashes the leader.
 */
export function observeCommittedWrites(sim: Simulation): void {
  const logs = new Map<string, Map<bigint, string> | undefined>();
  for (const w of sim.model.acked) {
    if (w.leaderOnly !== true) continue;
    const log = leaderLog(sim.node(w.node).cluster, w.topic, w.partition);
    if (!log || log.highWatermark <= w.offset) continue;
    const id = partitionId(w.node, w.topic, w.partition);
    if (!logs.has(id)) {
      const held = new Map<bigint, string>();
      for (const [offset, b] of batchesByOffset(log)) held.set(offset, hexOf(b));
      logs.set(id, held);
    }
    if (logs.get(id)?.get(w.offset) === w.hex) delete w.leaderOnly;
  }
}

/** Begins a transaction on a writable (node, topic) and sends one record in it (no-op if one is open). */
export async function txnBegin(sim: Simulation, target: number, partitionChoice: number): Promise<void> {
  if (sim.openTxn) {
    sim.step("txn begin: one is already open");
    return;
  }
  const t = pick(sim.writableTargets(), target);
  if (!t) {
    sim.step("txn begin: nothing writable");
    return;
  }
  const partitions = sim.node(t.node).cluster.controller.image.topic(t.topic)?.partitions.length ?? 1;
  const partition = Math.abs(partitionChoice) % partitions;
  const transactionalId = sim.nextTransactionalId(t.node);
  const producer = sim.node(t.node).kafka.producer({
    transactionalId,
    retry: { retries: 3, initialRetryTime: 100 },
  });
  const beganAt = sim.world.clock.now();
  try {
    await producer.connect();
    const txn = await sim.world.time.run(producer.transaction(), 120_000);
    const meta = await sim.world.time.run(
      txn.send({ topic: t.topic, messages: [{ key: "tx", value: `tx-${sim.steps.length}`, partition }] }),
      120_000,
    );
    const offset = BigInt(meta[0]?.baseOffset ?? -1);
    sim.openTxn = {
      node: t.node,
      topic: t.topic,
      transactionalId,
      partition,
      offset,
      beganAt,
      producer,
      txn,
    };
    sim.step(`txn begin on ${t.node}/${t.topic}-${partition}`);
  } catch (error) {
    sim.step(`txn begin on ${t.node}/${t.topic}: ${describeError(error)}`);
  }
}

/** Records a committed transaction (its data batch's producer id read from the partition leader's log). */
export function recordCommit(
  sim: Simulation,
  node: string,
  topic: string,
  partition: number,
  offset: bigint,
): void {
  const log = leaderLog(sim.node(node).cluster, topic, partition);
  const b = log ? batchesByOffset(log).get(offset) : undefined;
  if (b)
    sim.model.commits.push({
      node,
      topic,
      partition,
      producerId: b.producerId,
      offset,
      decidedAt: sim.world.clock.now(),
    });
}

/** Commits or aborts the open transaction (no-op when none is open). */
export async function txnEnd(sim: Simulation, commit: boolean): Promise<void> {
  const open = sim.openTxn;
  if (!open) {
    sim.step(`txn ${commit ? "commit" : "abort"}: none open`);
    return;
  }
  sim.openTxn = undefined;
  try {
    await sim.world.time.run(commit ? open.txn.commit() : open.txn.abort(), 120_000);
    if (commit) recordCommit(sim, open.node, open.topic, open.partition, open.offset);
    sim.step(`txn ${commit ? "commit" : "abort"} on ${open.node}/${open.topic}: ok`);
  } catch (error) {
    sim.step(`txn ${commit ? "commit" : "abort"} on ${open.node}/${open.topic}: ${describeError(error)}`);
  }
}

/**
 * A consumer group commits an offset (a simple commit, as a stopped consumer's last commit) on a writable
 * (node, topic): somewhere in [0, log end + 5], so that the mirror's clamping is exercised.
 */
export function groupCommit(sim: Simulation, target: number, group: number, offsetChoice: number): void {
  const t = pick(sim.writableTargets(), target);
  if (!t) {
    sim.step("group commit: nothing writable");
    return;
  }
  const cluster = sim.node(t.node).cluster;
  const log = leaderLog(cluster, t.topic, 0);
  const end = log ? Number(log.logEndOffset) : 0;
  const offset = BigInt(Math.abs(offsetChoice) % (end + 6));
  const groupId = `g${Math.abs(group) % 2}`;
  try {
    cluster.groups.commitOffsets({ groupId, offsets: [{ topic: t.topic, partition: 0, offset }] });
    sim.model.sourceGroups.add(`${t.node}\0${groupId}`);
    const max = `${groupId}\0${t.topic}:0`;
    if ((sim.model.groupCommitMax.get(max) ?? -1n) < offset) sim.model.groupCommitMax.set(max, offset);
    sim.step(`group ${groupId} commits ${t.node}/${t.topic}-0 @${offset}`);
  } catch (error) {
    sim.step(`group ${groupId} commit on ${t.node}: ${describeError(error)}`);
  }
}

/**
 * On a destination of an ACTIVE edge, a consumer joins group `g0` (so it is active there) and commits its
 * own offset 0; mirroring must leave that commit alone.
 */
export function activateDestinationGroup(sim: Simulation, target: number): void {
  const et = pick(
    sim.edgeTopics((s) => s === "ACTIVE"),
    target,
  );
  if (!et) {
    sim.step("activate group: no active edge");
    return;
  }
  const node = et.edge.to;
  if (sim.model.activeGroups.some((g) => g.node === node)) {
    sim.step(`activate group: ${node} has one`);
    return;
  }
  const groups = sim.node(node).cluster.groups;
  const groupId = "g0";
  try {
    const join = groups.joinGroup({ groupId, topics: [et.topic], sessionTimeoutMs: 1_000_000_000 });
    groups.commitOffsets({
      groupId,
      memberId: join.memberId,
      generationId: join.generationId,
      offsets: [{ topic: et.topic, partition: 0, offset: 0n }],
    });
    sim.model.activeGroups.push({ node, groupId, topic: et.topic, partition: 0, offset: 0n });
    const max = `${groupId}\0${et.topic}:0`;
    if (!sim.model.groupCommitMax.has(max)) sim.model.groupCommitMax.set(max, 0n);
    sim.step(`group ${groupId} active on ${node} with ${et.topic}-0 @0`);
  } catch (error) {
    sim.step(`activate group on ${node}: ${describeError(error)}`);
  }
}

/** Creates a new topic on a root and adds it along every edge (a chain hop by hop). */
export async function addTopic(sim: Simulation, rootChoice: number, partitions: number): Promise<void> {
  const roots = [...new Set([...sim.model.topics.values()].map((t) => t.root))].sort();
  const root = pick(roots, rootChoice);
  if (!root) return;
  const name = sim.nextTopicName();
  try {
    await sim.createTopic(root, name, 1 + (Math.abs(partitions) % 2), false);
    await sim.addAlongEdges(name);
    sim.step(`add topic ${name} on ${root}`);
  } catch (error) {
    sim.step(`add topic ${name} on ${root}: ${describeError(error)}`);
  }
}

/** Changes a dynamic config (`retention.ms`) of a topic on a writable node; mirrors copy it at refresh. */
export async function alterSourceConfig(sim: Simulation, target: number, value: number): Promise<void> {
  const t = pick(sim.writableTargets(), target);
  if (!t) return;
  const ms = String(3_600_000 * (1 + (Math.abs(value) % 100)));
  try {
    sim
      .node(t.node)
      .cluster.controller.incrementalAlterConfigs({ type: "topic", name: t.topic }, [
        { name: "retention.ms", op: "SET", value: ms },
      ]);
    sim.step(`config ${t.node}/${t.topic} retention.ms=${ms}`);
  } catch (error) {
    sim.step(`config ${t.node}/${t.topic}: ${describeError(error)}`);
  }
}

/** Adds one partition to a topic on a writable node; mirrors create it at refresh. */
export async function addPartition(sim: Simulation, target: number): Promise<void> {
  const t = pick(sim.writableTargets(), target);
  if (!t) return;
  const current = sim.node(t.node).cluster.controller.image.topic(t.topic)?.partitions.length ?? 0;
  if (current >= 4) {
    sim.step(`partitions ${t.topic}: already ${current}`);
    return;
  }
  try {
    sim.node(t.node).cluster.controller.createPartitions(t.topic, current + 1);
    const model = sim.model.topics.get(t.topic)!;
    model.partitions = Math.max(model.partitions, current + 1);
    sim.step(`partitions ${t.node}/${t.topic} -> ${current + 1}`);
  } catch (error) {
    sim.step(`partitions ${t.node}/${t.topic}: ${describeError(error)}`);
  }
}

/**
 * An application's write straight to the leader of `node`'s partition (acks=1, no retry), as a client with
 * fresh metadata racing an operator command; acknowledged writes are recorded. Returns the write's offset;
 * throws the broker's refusal.
 */
export async function rawWrite(
  sim: Simulation,
  node: string,
  topic: string,
  partition: number,
  acks: 1 | -1 = 1,
): Promise<bigint> {
  const cluster = sim.node(node).cluster;
  const batch = encodeRecordBatch({
    baseTimestamp: BigInt(cluster.clock.now()),
    records: [
      {
        attributes: 0,
        offsetDelta: 0,
        timestampDelta: 0n,
        key: null,
        value: Buffer.from("racing"),
        headers: [],
      },
    ],
  });
  const r = await cluster.leaderFor(topic, partition).produce({ topic, partition, batch, acks });
  recordAck(sim, node, topic, partition, r.baseOffset, 1);
  return r.baseOffset;
}

/**
 * An application moved to a failed-over topic's new primary writes there (`produce` aimed at a topic whose
 * edge was removed, on its destination): the records a later re-add or failback must not drop silently.
 * `choice` picks the failed-over (edge, topic); nothing happens when none is writable.
 */
export async function writePromoted(
  sim: Simulation,
  choice: number,
  partitionChoice: number,
  count: number,
): Promise<void> {
  const promoted = sim
    .edgeTopics((s) => s === "REMOVED")
    .filter(({ edge, topic }) => sim.writable(edge.to, topic));
  const et = pick(promoted, choice);
  if (!et) {
    sim.step("write to a promoted copy: none");
    return;
  }
  const target = sim.writableTargets().findIndex((x) => x.node === et.edge.to && x.topic === et.topic);
  await produce(sim, target, partitionChoice, count);
}
