import { KafkaError } from "@cluster-mirror/protocol";
import { leaderLog } from "./invariants/logs";
import { failoverTopic } from "./operator";
import type { Simulation } from "./simulation";
import type { MirrorEdge } from "./topology";
import {
  describeError,
  pick,
  produceAcked,
  recordAck,
  reportWrongRefusal,
  txnBegin,
  txnEnd,
} from "./workload";

/** Errors of a produce that say the broker lost (or never had) the idempotent producer's state. */
const PRODUCER_STATE_LOST = new Set([
  "OUT_OF_ORDER_SEQUENCE_NUMBER",
  "UNKNOWN_PRODUCER_ID",
  "INVALID_PRODUCER_EPOCH",
  "DUPLICATE_SEQUENCE_NUMBER",
]);

/** How long the command waits (virtual time) for the partition to fail and for FAILED's retry to end STOPPED. */
const FAIL_SEEN_MS = 5_000;
const BACK_TO_STOPPED_MS = 120_000;

/**
 * A failed-over partition fails again once its topic is writable (spec §4: FAILED is valid from any
 * state): a fetch error of the mirror's fetcher delivered late (`partitionFailed`, the fetcher's own path)
 * on a partition STOPPED, its read-only flag cleared. FAILED's retry runs STOPPING again (whose first step
 * sets the read-only flag again) and ends STOPPED; nothing of that may touch what the topic's own
 * producers wrote meanwhile: no ABORT marker over their open transactions, no second MIRROR_PID_RESET
 * wiping their producer state (`checkNoBarrierOverLocalWrites` after every command, the committed
 * transactions at settle).
 *
 * `choice` picks the (edge, topic, partition) among the STOPPED writable ones (when there is none, a
 * mirrored topic is failed over first, unplanned, waiting for STOPPED); `mode` bit 0: the node's
 * idempotent producer writes there first, bit 1: a transaction begins there first (when none is open).
 * Once STOPPED again, the transaction this command began commits and the idempotent producer writes once
 * more: a refusal saying the broker lost its producer state is a violation (`local-producer-continues`).
 */
export async function failStopped(sim: Simulation, choice: number, mode: number): Promise<void> {
  let targets = stoppedWritable(sim);
  if (targets.length === 0) {
    // None yet: the operator fails a mirrored topic over first (and waits for STOPPED), as `failover`.
    const et = pick(
      sim.edgeTopics((s) => s === "ACTIVE" || s === "PAUSED"),
      choice,
    );
    if (et) await failoverTopic(sim, et.edge, et.topic, "unplanned");
    targets = stoppedWritable(sim);
  }
  const target = pick(targets, choice);
  if (!target) {
    sim.step("fail a STOPPED partition: none writable");
    return;
  }
  const { edge, topic, partition } = target;
  const dest = sim.node(edge.to);
  const index = () => sim.writableTargets().findIndex((x) => x.node === edge.to && x.topic === topic);
  if ((mode & 1) !== 0) await produceAcked(sim, index(), partition, 1);
  const began = (mode & 2) !== 0 && !sim.openTxn;
  if (began) await txnBegin(sim, index(), partition);
  const view = currentView(sim, edge, topic, partition);
  if (view?.state !== "STOPPED") {
    sim.step(`fail ${edge.mirror} ${topic}-${partition}: ${view?.state ?? "not described"} by now`);
    return;
  }
  const open = sim.openTxn;
  const inTxn = open?.node === edge.to && open.topic === topic && open.partition === partition;
  const local = localDataAboveBarrier(sim, edge, topic, partition);
  dest.mirroring.coordinators.partitionFailed(view.key, "a fetch error delivered late", true);
  const moved = () =>
    (currentView(sim, edge, topic, partition)?.stateEpoch ?? view.stateEpoch) > view.stateEpoch;
  const failed = await sim.world.time.until(moved, "FAIL seen", FAIL_SEEN_MS, 100).then(
    () => true,
    () => false,
  );
  if (!failed) {
    sim.step(`fail ${edge.mirror} ${topic}-${partition} (STOPPED): the FAIL changed nothing`);
    return;
  }
  const back = () =>
    currentView(sim, edge, topic, partition)?.state === "STOPPED" &&
    dest.cluster.controller.image.partition(topic, partition)?.mirrorReadOnly !== true;
  const stopped = await sim.world.time.until(back, "STOPPED again", BACK_TO_STOPPED_MS, 100).then(
    () => true,
    () => false,
  );
  const now = currentView(sim, edge, topic, partition);
  sim.step(
    `fail ${edge.mirror} ${topic}-${partition} (STOPPED, writable) with a late fetch error: ${stopped ? "STOPPED and writable again" : `still ${now?.state ?? "not described"}${now?.errorMessage ? ` (${now.errorMessage})` : ""}`}`,
  );
  if (!stopped) return;
  if (local) sim.stats.stoppedFailedAgain++;
  if (local && inTxn) sim.stats.stoppedFailedAgainInTxn++;
  // The local producers go on: the transaction begun here commits, the idempotent producer writes again.
  if (began && sim.openTxn?.node === edge.to && sim.openTxn.topic === topic) await txnEnd(sim, true);
  await produceAfter(sim, edge.to, topic, partition);
}

/** Failed-over partitions STOPPED on their destination whose topic is writable there, in a stable order. */
function stoppedWritable(sim: Simulation): { edge: MirrorEdge; topic: string; partition: number }[] {
  const out: { edge: MirrorEdge; topic: string; partition: number }[] = [];
  for (const { edge, topic } of sim.edgeTopics((s) => s === "REMOVED")) {
    if (!sim.writable(edge.to, topic)) continue;
    const { cluster, mirroring } = sim.node(edge.to);
    const topicId = cluster.controller.image.topic(topic)?.topicId;
    const views = mirroring.coordinators
      .describe(edge.mirror)
      .filter((v) => v.key.topic === topic && v.key.topicId === topicId && v.state === "STOPPED")
      .sort((a, b) => a.key.partition - b.key.partition);
    for (const v of views) {
      if (cluster.controller.image.partition(topic, v.key.partition)?.mirrorReadOnly === true) continue;
      out.push({ edge, topic, partition: v.key.partition });
    }
  }
  return out;
}

/** Whether the leader of `edge`'s failed-over partition holds a data batch above its latest failover's barrier. */
function localDataAboveBarrier(sim: Simulation, edge: MirrorEdge, topic: string, partition: number): boolean {
  const f = [...sim.model.failovers]
    .reverse()
    .find(
      (x) => x.node === edge.to && x.mirror === edge.mirror && x.topic === topic && x.partition === partition,
    );
  const log = f && leaderLog(sim.node(edge.to).cluster, topic, partition);
  if (!f || !log) return false;
  for (const b of log.batches()) if (b.baseOffset > f.barrierOffset && !b.isControl) return true;
  return false;
}

/** The committed state of `edge`'s `topic`-`partition` on its destination now (undefined: not described). */
function currentView(sim: Simulation, edge: MirrorEdge, topic: string, partition: number) {
  return sim
    .node(edge.to)
    .mirroring.coordinators.describe(edge.mirror)
    .find((v) => v.key.topic === topic && v.key.partition === partition);
}

/**
 * The node's idempotent producer writes to the partition again (acks=all): acknowledged, it is recorded;
 * refused because the broker no longer knows its producer state, it is a violation.
 */
async function produceAfter(sim: Simulation, node: string, topic: string, partition: number): Promise<void> {
  try {
    const meta = await sim.world.time.run(
      (await sim.producer(node)).send({
        topic,
        messages: [{ key: "local", value: `local-${sim.steps.length}`, partition }],
        acks: -1,
      }),
      120_000,
    );
    for (const m of meta) recordAck(sim, node, topic, m.partition, BigInt(m.baseOffset));
    sim.step(`local produce to ${node}/${topic}-${partition}: ok at ${meta[0]?.baseOffset}`);
  } catch (error) {
    sim.step(`local produce to ${node}/${topic}-${partition}: ${describeError(error)}`);
    reportWrongRefusal(sim, node, topic, partition, error);
    if (error instanceof KafkaError && PRODUCER_STATE_LOST.has(error.errorName)) {
      sim.report([
        {
          invariant: "local-producer-continues",
          message: `${node} ${topic}-${partition}: the idempotent producer's next batch after the partition failed and returned to STOPPED was refused (${error.errorName}): the failover's retry lost the local producers' state`,
        },
      ]);
    }
  }
}
