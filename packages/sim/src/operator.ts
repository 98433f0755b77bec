import { KafkaError } from "@cluster-mirror/protocol";
import { checkPromisedWrites } from "./invariants/durability";
import { checkFailover, checkNoHangingTransaction } from "./invariants/failover";
import { leaderLog } from "./invariants/logs";
import type { Simulation } from "./simulation";
import { type MirrorEdge, mirrorName } from "./topology";
import { pick, recordAck, txnEnd } from "./workload";

function describeError(error: unknown): string {
  return error instanceof KafkaError
    ? `${error.errorName}: ${error.message}`
    : error instanceof Error
      ? error.message
      : String(error);
}

/**
 * After an operator call was refused: the refusal must leave the topic's `mirror.name` as it was (a refused
 * change is not applied). Re-syncs the model from the config either way.
 */
function checkRefusalLeftNoChange(
  sim: Simulation,
  edge: MirrorEdge,
  topic: string,
  op: string,
  error: unknown,
): void {
  const before = sim.edgeState(edge, topic);
  const after = sim.syncEdgeState(edge, topic);
  sim.step(`${op} ${edge.mirror} ${topic}: ${describeError(error)}`);
  if (after !== before) {
    sim.report([
      {
        invariant: "refused-op-atomic",
        message: `${edge.to} ${op} ${edge.mirror} ${topic} was refused (${describeError(error).split(":")[0]}) but mirror.name moved the topic from ${before} to ${after}`,
      },
    ]);
  }
}

/** Pauses a topic on an ACTIVE edge (refusals for partitions not MIRRORING are expected and logged). */
export async function pause(sim: Simulation, choice: number): Promise<void> {
  const et = pick(
    sim.edgeTopics((s) => s === "ACTIVE"),
    choice,
  );
  if (!et) {
    sim.step("pause: no active edge topic");
    return;
  }
  try {
    await sim.world.time.run(
      sim.node(et.edge.to).mirroring.admin.pauseTopics(et.edge.mirror, et.topic),
      120_000,
    );
    sim.setEdgeState(et.edge, et.topic, "PAUSED");
    sim.step(`pause ${et.edge.mirror} ${et.topic}`);
  } catch (error) {
    checkRefusalLeftNoChange(sim, et.edge, et.topic, "pause", error);
  }
}

/** Resumes a PAUSED topic. */
export async function resume(sim: Simulation, choice: number): Promise<void> {
  const et = pick(
    sim.edgeTopics((s) => s === "PAUSED"),
    choice,
  );
  if (!et) {
    sim.step("resume: no paused edge topic");
    return;
  }
  try {
    await sim.world.time.run(
      sim.node(et.edge.to).mirroring.admin.resumeTopics(et.edge.mirror, et.topic),
      120_000,
    );
    sim.setEdgeState(et.edge, et.topic, "ACTIVE");
    sim.step(`resume ${et.edge.mirror} ${et.topic}`);
  } catch (error) {
    checkRefusalLeftNoChange(sim, et.edge, et.topic, "resume", error);
  }
}

/**
 * Fails a topic over on an ACTIVE or PAUSED edge (`removeTopics`), waits until every partition is STOPPED
 * and checks the failover invariants on each, records the failover point and the writes it promises to
 * keep, then writes once to each partition (it must be writable, after the barrier).
 */
export async function failover(sim: Simulation, choice: number): Promise<void> {
  const et = pick(
    sim.edgeTopics((s) => s === "ACTIVE" || s === "PAUSED"),
    choice,
  );
  if (!et) {
    sim.step("failover: nothing mirrored");
    return;
  }
  const { edge, topic } = et;
  const dest = sim.node(edge.to);
  const before = new Map(
    dest.mirroring.coordinators
      .describe(edge.mirror)
      .filter((v) => v.key.topic === topic)
      .map((v) => [v.key.partition, v.state]),
  );
  let refused = "";
  try {
    await sim.world.time.run(dest.mirroring.admin.removeTopics(edge.mirror, topic), 120_000);
  } catch (error) {
    checkRefusalLeftNoChange(sim, edge, topic, "failover", error);
    if (sim.edgeState(edge, topic) !== "REMOVED") return;
    refused = " (after a refused removeTopics)";
  }
  sim.setEdgeState(edge, topic, "REMOVED");
  const views = () => dest.mirroring.coordinators.describe(edge.mirror).filter((v) => v.key.topic === topic);
  const partitions = dest.cluster.controller.image.topic(topic)?.partitions.length ?? 0;
  try {
    await sim.world.time.until(
      () => views().length >= partitions && views().every((v) => v.state === "STOPPED"),
      `${edge.mirror} ${topic} STOPPED`,
      300_000,
      100,
    );
  } catch {
    const states = views().map(
      (v) => `${v.key.partition}:${v.state}${v.errorMessage ? `(${v.errorMessage})` : ""}`,
    );
    sim.report([
      {
        invariant: "failover-completes",
        message: `${edge.mirror} ${topic}: not STOPPED within 300 s of virtual time${refused} (${states.join(", ")})`,
      },
    ]);
    return;
  }
  sim.step(`failover ${edge.mirror} ${topic}: STOPPED`);
  for (const view of views()) {
    const p = view.key.partition;
    const { point, violations } = checkFailover(edge.to, dest.cluster, view);
    sim.report(violations);
    if (!point) continue;
    // The destination HW at failover, before STOPPING's own writes (markers, barrier).
    const mirroredHw = point.highWatermark < point.mirroredEnd ? point.highWatermark : point.mirroredEnd;
    const promised = sim.model.acked.filter(
      (w) => w.node === edge.from && w.topic === topic && w.partition === p && w.offset < mirroredHw,
    );
    const compacted = sim.model.topics.get(topic)?.compacted ?? false;
    sim.model.failovers.push({
      mirror: edge.mirror,
      node: edge.to,
      topic,
      partition: p,
      ...point,
      stoppedFrom: before.get(p) ?? "UNKNOWN",
      promised: compacted ? [] : promised,
    });
    if (!compacted) sim.report(checkPromisedWrites(`${edge.to} after failover`, dest.cluster, promised));
    await sim.world.time
      .until(
        () => {
          const log = leaderLog(dest.cluster, topic, p);
          return !log || log.highWatermark === log.logEndOffset;
        },
        "HW reaches LEO",
        60_000,
      )
      .catch(() => undefined);
    sim.report(checkNoHangingTransaction(edge.to, dest.cluster, topic, p));
  }
  for (let p = 0; p < partitions; p++) {
    try {
      const meta = await sim.world.time.run(
        (await sim.producer(edge.to)).send({
          topic,
          messages: [{ key: "after", value: `on-${edge.to}`, partition: p }],
        }),
        120_000,
      );
      for (const m of meta) recordAck(sim, edge.to, topic, m.partition, BigInt(m.baseOffset));
    } catch (error) {
      sim.step(`write after failover ${edge.to}/${topic}-${p}: ${describeError(error)}`);
      if (error instanceof KafkaError && error.errorName === "READ_ONLY_TOPIC") {
        sim.report([
          {
            invariant: "writable-after-stopped",
            message: `${edge.to} ${topic}-${p}: STOPPED but a produce was refused as READ_ONLY_TOPIC`,
          },
        ]);
      }
    }
  }
}

/**
 * Fails back: for a topic failed over on edge from -> to, the old primary `from` mirrors it back from
 * `to` (creating the reverse mirror on first use, re-adding the topic after that). `from` truncates to
 * the LME and becomes a copy of `to`; the settle checks then compare them (log matching).
 */
export async function failback(sim: Simulation, choice: number): Promise<void> {
  const candidates = sim
    .edgeTopics((s) => s === "REMOVED")
    .filter(({ edge, topic }) => {
      const reverse = sim.edges.find((e) => e.from === edge.to && e.to === edge.from);
      const r = reverse ? sim.edgeState(reverse, topic) : undefined;
      return (
        (r === undefined || r === "REMOVED") && sim.writable(edge.to, topic) && sim.writable(edge.from, topic)
      );
    });
  const et = pick(candidates, choice);
  if (!et) {
    sim.step("failback: nothing failed over");
    return;
  }
  const { edge, topic } = et;
  let reverse: MirrorEdge | undefined = sim.edges.find((e) => e.from === edge.to && e.to === edge.from);
  const old = sim.node(edge.from);
  try {
    if (!reverse) {
      reverse = { from: edge.to, to: edge.from, mirror: mirrorName(edge.to, edge.from) };
      await sim.world.time.run(
        old.mirroring.admin.createMirror(reverse.mirror, { "bootstrap.servers": `${edge.to}:9092` }),
      );
      sim.edges.push(reverse);
    }
    // An operator ends transactions on the old primary before it becomes a mirror again.
    if (sim.openTxn?.node === edge.from && sim.openTxn.topic === topic) await txnEnd(sim, false);
    await sim.world.time.run(old.mirroring.admin.addTopics(reverse.mirror, topic), 120_000);
    sim.setEdgeState(reverse, topic, "ACTIVE");
    sim.step(`failback ${reverse.mirror} ${topic}`);
  } catch (error) {
    sim.step(`failback ${edge.from} <- ${edge.to} ${topic}: ${describeError(error)}`);
    if (reverse && sim.edges.includes(reverse)) sim.syncEdgeState(reverse, topic);
  }
}
