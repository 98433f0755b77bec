import type { KafkaCluster } from "@cluster-mirror/cluster";
import { exactTopicPattern, MirrorCommandTimeoutError, PromoteTimeoutError } from "@cluster-mirror/mirror";
import { KafkaError } from "@cluster-mirror/protocol";
import { abandonedTxnOpen } from "./abandoned-txns";
import { type CatchUpBarrier, completeFailovers } from "./failover-completion";
import type { TruncationAllowance } from "./invariants/committed-prefix";
import { stillAcknowledged } from "./invariants/durability";
import { checkNoHangingTransaction } from "./invariants/failover";
import { batchesByOffset, hexOf, leaderLog } from "./invariants/logs";
import { commitMarkerCommitted } from "./invariants/transactions";
import { MIRRORING_STATES } from "./liveness";
import type { AckedWrite, FailoverRecord } from "./model";
import type { Simulation } from "./simulation";
import { type MirrorEdge, mirrorName } from "./topology";
import { VirtualTimeoutError } from "./virtual-time";
import { describeError, pick, rawWrite, recordAck, reportWrongRefusal, txnEnd } from "./workload";

/**
 * After an operator call was refused: the refusal must leave the topic's `mirror.name` as it was (a refused
 * change is not applied). Re-syncs the model from the config either way. The simulation's own wait running
 * out (`VirtualTimeoutError`) is no refusal: as a client's timeout, it leaves the outcome unknown (a
 * failover whose `__mirror_state` writes each wait for an in-sync replica on a slow disk, under
 * min.insync.replicas=2, may take longer and still complete: min-insync failback FC_SEED=3 and 4 x20).
 * Nor is the engine's own (`MirrorCommandTimeoutError`, after `defaultApiTimeoutMs`), which says so too.
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
  if (after !== before && !isClientTimeout(error)) {
    sim.report([
      {
        invariant: "refused-op-atomic",
        message: `${edge.to} ${op} ${edge.mirror} ${topic} was refused (${describeError(error).split(":")[0]}) but mirror.name moved the topic from ${before} to ${after}`,
      },
    ]);
  }
}

/** A timeout whose change may still take effect: the simulation's own wait, or the engine's API timeout. */
export function isClientTimeout(error: unknown): boolean {
  return error instanceof VirtualTimeoutError || error instanceof MirrorCommandTimeoutError;
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
    sim.liveness.expect({
      invariant: "pause-ends",
      what: `pause ${et.edge.mirror} ${et.topic}`,
      edge: et.edge,
      topic: et.topic,
      targets: ["PAUSED"],
      needsSource: false,
    });
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
    sim.liveness.expect({
      invariant: "resume-mirrors",
      what: `resume ${et.edge.mirror} ${et.topic}`,
      edge: et.edge,
      topic: et.topic,
      targets: MIRRORING_STATES,
      needsSource: true,
      catchUp: true,
    });
  } catch (error) {
    checkRefusalLeftNoChange(sim, et.edge, et.topic, "resume", error);
  }
}

/**
 * `--recover` of a mirrored or paused topic: its FAILED partitions retry now, with a fresh retry budget,
 * whether or not the fault that failed them is gone (they fail again if not). Nothing may change what the
 * topic's `mirror.name` asks for, refused or not; every invariant is checked after it, as after any command.
 */
export async function recover(sim: Simulation, choice: number): Promise<void> {
  const et = pick(
    sim.edgeTopics((s) => s === "ACTIVE" || s === "PAUSED"),
    choice,
  );
  if (!et) {
    sim.step("recover: no mirrored edge topic");
    return;
  }
  try {
    const result = await sim.world.time.run(
      sim.node(et.edge.to).mirroring.admin.recoverTopics(et.edge.mirror, et.topic),
      120_000,
    );
    sim.stats.recoveredPartitions += result.partitions.length;
    sim.step(`recover ${et.edge.mirror} ${et.topic}: ${result.message}`);
  } catch (error) {
    checkRefusalLeftNoChange(sim, et.edge, et.topic, "recover", error);
    return;
  }
  const before = sim.edgeState(et.edge, et.topic);
  const after = sim.syncEdgeState(et.edge, et.topic);
  if (after !== before) {
    sim.report([
      {
        invariant: "recover-keeps-mirror-name",
        message: `${et.edge.to} recover ${et.edge.mirror} ${et.topic} moved the topic from ${before} to ${after}`,
      },
    ]);
  }
}

/** How the operator fails over: with or without a catch-up barrier first, waiting for STOPPED or not. */
export type FailoverMode = "planned" | "unplanned" | "planned-nowait" | "unplanned-nowait" | "promote";

/** Every failover mode, in the order a command's mode argument picks them. */
export const FAILOVER_MODES: readonly FailoverMode[] = [
  "planned",
  "unplanned",
  "planned-nowait",
  "unplanned-nowait",
  "promote",
];

/**
 * A `whenCaughtUp`-style barrier on one topic of a mirror, as an operator takes it before a planned
 * failover: waits (up to 30 s of virtual time) until `describe` shows every partition of the topic
 * MIRRORING with lag 0. Returns what it then promises (every write acknowledged and every transaction whose
 * COMMIT marker is committed on the source so far), or undefined if the mirror never said it caught up.
 */
async function catchUpBarrier(
  sim: Simulation,
  edge: MirrorEdge,
  topic: string,
): Promise<CatchUpBarrier | undefined> {
  const admin = sim.node(edge.to).mirroring.admin;
  try {
    await sim.world.time.until(
      async () => {
        const rows = (await sim.world.time.run(admin.describe(edge.mirror), 30_000)).filter(
          (r) => r.topic === topic,
        );
        return rows.length > 0 && rows.every((r) => r.state === "MIRRORING" && r.lag === 0n);
      },
      `${edge.mirror} ${topic} caught up`,
      30_000,
      50,
    );
  } catch {
    return undefined;
  }
  return sourcePromises(sim, edge, topic);
}

/**
 * What a caught-up copy of `topic` promises: every write acknowledged on the edge's source and every
 * transaction whose COMMIT marker is committed there so far.
 */
export function sourcePromises(sim: Simulation, edge: MirrorEdge, topic: string): CatchUpBarrier {
  const source = sim.node(edge.from).cluster;
  // Only writes the source still holds: one it dropped by consent (a failback or re-add of the source with
  // `--truncate-local-writes`) is not the source's to give (soak `failback` FC_SEED=34 x100, run 734; as
  // for the writes below the HW a failover promises, see `completeFailoverPartition`).
  // And of the writes its leader alone acknowledged (acks=1, `rawWrite`) that no high watermark was seen to
  // pass yet (`observeCommittedWrites`), only those below the source's high watermark, which is all a
  // caught-up mirror (lag 0 against the HW) has copied. An acks=all write is
  // promised wherever the HW is: a new leader's HW may lag behind writes the old one acknowledged, and a
  // mirror that calls itself caught up then has lost them. With no leader, no leader-only write is promised
  // (the next clean election may truncate it).
  const partitions = source.controller.image.topic(topic)?.partitions.length ?? 0;
  const acked = Array.from({ length: partitions }, (_, p) => {
    const hw = leaderLog(source, topic, p)?.highWatermark;
    return stillAcknowledged(
      source,
      sim.model.acked.filter(
        (w) =>
          w.node === edge.from &&
          w.topic === topic &&
          w.partition === p &&
          (w.leaderOnly !== true || (hw !== undefined && w.offset < hw)),
      ),
    );
  }).flat();
  return {
    acked,
    commits: sim.model.commits.filter(
      (c) => c.node === edge.from && c.topic === topic && commitMarkerCommitted(source, c),
    ),
  };
}

/**
 * Fails a topic over on an ACTIVE or PAUSED edge (`removeTopics`). A planned failover first takes a
 * catch-up barrier (without one it is unplanned). Waiting modes then wait until every partition is STOPPED,
 * check it (`completeFailovers`: failover invariants, the barrier's promises), and write once to each
 * partition (it must be writable, after the PID reset barrier). The `-nowait` modes return as soon as
 * `removeTopics` does, so later commands and faults land inside STOPPING; the STOPPED checks then run when
 * STOPPED is first seen (after a command, or before a produce reaches the partition).
 */
export async function failover(
  sim: Simulation,
  choice: number,
  mode: FailoverMode = "unplanned",
): Promise<void> {
  const et = pick(
    sim.edgeTopics((s) => s === "ACTIVE" || s === "PAUSED"),
    choice,
  );
  if (!et) {
    sim.step("failover: nothing mirrored");
    return;
  }
  await failoverTopic(sim, et.edge, et.topic, mode);
}

/** `failover` of one ACTIVE or PAUSED edge topic, chosen by the caller. */
export async function failoverTopic(
  sim: Simulation,
  edge: MirrorEdge,
  topic: string,
  mode: FailoverMode,
): Promise<void> {
  const dest = sim.node(edge.to);
  const promote = mode === "promote";
  let barrier = mode.startsWith("planned") ? await catchUpBarrier(sim, edge, topic) : undefined;
  const before = new Map(
    dest.mirroring.coordinators
      .describe(edge.mirror)
      .filter((v) => v.key.topic === topic)
      .map((v) => [v.key.partition, v.state]),
  );
  let refused = "";
  // Without waiting, the operator's applications may already write while the removal is in flight.
  const racing = mode.endsWith("nowait")
    ? rawWrite(sim, edge.to, topic, 0).then(
        () => "accepted",
        (error: unknown) => describeError(error).split(":")[0],
      )
    : undefined;
  // Writers are stopped (no command runs meanwhile), so what the source promises now is what it promises
  // when the promote returns; taken now, before the promote's catch-up read the source's HW, so that a
  // leader-only write the HW passed later is not promised by a catch-up that never covered it.
  const promised = promote ? sourcePromises(sim, edge, topic) : undefined;
  try {
    if (promote) {
      // `--promote`: the engine's own catch-up (to the source's live high watermark), then the failover
      // and the wait for STOPPED. Once it returns every write the source acknowledged is promised; when
      // it fails, nothing may be failed over, then or later.
      await sim.world.time.run(
        dest.mirroring.admin.promoteTopics(edge.mirror, exactTopicPattern([topic]), { timeoutMs: 20_000 }),
        120_000,
      );
      barrier = promised;
    } else await sim.world.time.run(dest.mirroring.admin.removeTopics(edge.mirror, topic), 120_000);
    if (racing) sim.step(`a write racing the removal: ${await sim.world.time.run(racing)}`);
  } catch (error) {
    if (error instanceof PromoteTimeoutError && error.phase === "STOP") {
      // Only its wait for STOPPED ran out: the failover was made (not a refusal), and the catch-up was
      // reached, so its promises hold.
      sim.syncEdgeState(edge, topic);
      sim.step(`promote ${edge.mirror} ${topic}: timed out waiting for STOPPED`);
      barrier = promised;
    } else {
      checkRefusalLeftNoChange(sim, edge, topic, promote ? "promote" : "failover", error);
      refused = " (after a refused removeTopics)";
    }
    if (sim.edgeState(edge, topic) !== "REMOVED") return;
  }
  sim.setEdgeState(edge, topic, "REMOVED");
  // An add still under way is cancelled: the truncation it was allowed ends with its session.
  sim.prefix.cancel(edge.to, topic);
  const what = `${promote ? "promote" : barrier ? "planned" : "unplanned"} failover ${edge.mirror} ${topic}`;
  sim.liveness.expect({
    invariant: "failover-ends",
    what: `${what} (${mode})`,
    edge,
    topic,
    targets: ["STOPPED"],
    needsSource: false,
  });
  sim.pendingFailovers.push({ edge, topic, before, barrier, done: new Set(), lostByElection: new Set() });
  if (mode.endsWith("nowait")) {
    sim.step(`${what}: removeTopics returned${refused} (not waiting for STOPPED)`);
    // Applications start writing as soon as the operator says "Removed": each partition gets one produce
    // right away, inside STOPPING. The broker guard reports it if it is appended before STOPPED.
    const partitionCount = dest.cluster.controller.image.topic(topic)?.partitions.length ?? 0;
    for (let p = 0; p < partitionCount; p++) await writeAfter(sim, edge, topic, p, "impatient write");
    return;
  }
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
  completeFailovers(sim);
  sim.step(`${what}: STOPPED`);
  for (let p = 0; p < partitions; p++) {
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
    // A transaction abandoned by a restart of this node, on a log the failover kept as the topic's own,
    // is its coordinator's to abort at its timeout (`checkAbandonedTxns`), not a hanging one.
    const abandoned = (open: { producerId: bigint; firstOffset: bigint }) => {
      const t = abandonedTxnOpen(sim, edge.to, topic, p, open);
      if (t) {
        sim.step(
          `${edge.to}/${topic}-${p}: the abandoned transaction of producer ${t.producerId} (data at ${t.offset}) is open after STOPPED, for ${edge.to}'s coordinator to abort at its timeout`,
        );
      }
      return t !== undefined;
    };
    sim.report(checkNoHangingTransaction(edge.to, dest.cluster, topic, p, abandoned));
  }
  for (let p = 0; p < partitions; p++) await writeAfter(sim, edge, topic, p, "write after failover");
}

/** One produce to a failed-over partition on the new primary (acked: recorded; refused: logged, checked). */
async function writeAfter(sim: Simulation, edge: MirrorEdge, topic: string, p: number, what: string) {
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
    sim.step(`${what} ${edge.to}/${topic}-${p}: ${describeError(error)}`);
    reportWrongRefusal(sim, edge.to, topic, p, error);
  }
}

/**
 * Topics failed over on an edge (REMOVED there) whose reverse edge does not mirror them (never added, or
 * removed again), writable on both clusters: where a failback (or a loop race) can start.
 */
export function failedOverTopics(sim: Simulation): ReturnType<Simulation["edgeTopics"]> {
  return sim
    .edgeTopics((s) => s === "REMOVED")
    .filter(({ edge, topic }) => {
      const reverse = sim.edges.find((e) => e.from === edge.to && e.to === edge.from);
      const r = reverse ? sim.edgeState(reverse, topic) : undefined;
      return (
        (r === undefined || r === "REMOVED") && sim.writable(edge.to, topic) && sim.writable(edge.from, topic)
      );
    });
}

/**
 * Fails back: for a topic failed over on edge from -> to, the old primary `from` mirrors it back from
 * `to` (creating the reverse mirror on first use, re-adding the topic after that). `from` truncates to
 * the LME and becomes a copy of `to`; the settle checks then compare them (log matching). With
 * `failOverFirst`, when nothing is failed over it first fails a mirrored topic over (unplanned, waiting).
 */
export async function failback(sim: Simulation, choice: number, failOverFirst = false): Promise<void> {
  const candidates = () => failedOverTopics(sim);
  if (failOverFirst && candidates().length === 0) {
    // A whole cycle: nothing failed over yet, so the operator fails a mirrored topic over first (waiting
    // for STOPPED); random runs then reach the old primary mirroring again (and its epoch bump) more often.
    const mirrored = pick(
      sim.edgeTopics((s) => s === "ACTIVE" || s === "PAUSED"),
      choice,
    );
    if (mirrored) await failoverTopic(sim, mirrored.edge, mirrored.topic, "unplanned");
  }
  const et = pick(candidates(), choice);
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
  } catch (error) {
    sim.step(`failback ${edge.from} <- ${edge.to} ${topic}: ${describeError(error)}`);
    return;
  }
  // The spec's failback, as an operator runs it: if the old primary wrote locally since its own earlier
  // failover, the add is refused (UNSAFE_TRUNCATION) and the operator then asks for the truncation.
  const refused = await rejoin(sim, reverse, topic, "failback", false);
  if (refused instanceof KafkaError && refused.errorName === "UNSAFE_TRUNCATION") {
    await rejoin(sim, reverse, topic, "failback", true);
  }
}

/**
 * `node` re-adds `topic` to its mirror of `edge.from` (a failback, or a re-add of a failed-over topic): the
 * partitions may be truncated from where `node`'s log stops matching the source's (the failback's
 * truncation to the LME), never below. Unless the operator asks for it (`truncateLocalWrites`, Cluster
 * Linking's truncate-and-restore), acknowledged local writes made after the partition's latest PID reset
 * barrier are protected too: the add must be refused rather than drop them. On success the edge topic is
 * ACTIVE and `node`'s committed transactions on it are no longer checked on `node` itself (the mirror may
 * replace them). Returns the refusal, if any.
 */
export async function rejoin(
  sim: Simulation,
  edge: MirrorEdge,
  topic: string,
  what: string,
  truncateLocalWrites: boolean,
): Promise<unknown> {
  const allowances = allowRejoinTruncation(sim, edge, topic, what, !truncateLocalWrites);
  const before = sim.edgeState(edge, topic);
  const flag = truncateLocalWrites ? " --truncate-local-writes" : "";
  let refusal: unknown;
  try {
    await sim.world.time.run(
      sim.node(edge.to).mirroring.admin.addTopics(edge.mirror, topic, { truncateLocalWrites }),
      120_000,
    );
    sim.setEdgeState(edge, topic, "ACTIVE");
    sim.liveness.expect({
      invariant: "add-mirrors",
      what: `${what}${flag} ${edge.mirror} ${topic}`,
      edge,
      topic,
      targets: MIRRORING_STATES,
      needsSource: true,
      catchUp: true,
    });
    const floors = allowances
      .filter((a) => a.node === edge.to)
      .map((a) => `${a.partition}@${a.floor}`)
      .join(",");
    sim.step(`${what}${flag} ${edge.mirror} ${topic} (may truncate from ${floors})`);
  } catch (error) {
    refusal = error;
    sim.step(`${what}${flag} ${edge.mirror} ${topic}: ${describeError(error)}`);
    if (sim.syncEdgeState(edge, topic) === before) for (const a of allowances) sim.prefix.withdraw(a);
  }
  if (sim.edgeState(edge, topic) === "ACTIVE") {
    for (const c of sim.model.commits) if (c.node === edge.to && c.topic === topic) c.rejoined = true;
  }
  return refusal;
}

/** Registers the truncations a re-add of `topic` on `edge.to` may do (see `rejoin`). */
export function allowRejoinTruncation(
  sim: Simulation,
  edge: MirrorEdge,
  topic: string,
  what: string,
  protectLocal: boolean,
): TruncationAllowance[] {
  const dest = sim.node(edge.to).cluster;
  const source = sim.node(edge.from).cluster;
  // A topic deleted here is created again by the add, from the source's (with its id): its copies
  // downstream then follow a log that starts over (soak recreated-source fan-out FC_SEED=249).
  const partitions =
    dest.controller.image.topic(topic)?.partitions.length ??
    source.controller.image.topic(topic)?.partitions.length ??
    0;
  const out: TruncationAllowance[] = [];
  for (let p = 0; p < partitions; p++) {
    sim.prefix.endCancelled(edge.to, topic, p);
    let floor = commonPrefixEnd(dest, source, topic, p);
    if (protectLocal) {
      for (const w of localWrites(sim, edge.to, topic, p).writes) {
        if (w.offset >= floor) floor = w.offset + 1n;
      }
    }
    const own = sim.prefix.allow({
      node: edge.to,
      topic,
      partition: p,
      floor,
      reason: `${what} ${edge.mirror} ${topic}`,
      mirror: edge.mirror,
      expires: "mirroring",
    });
    out.push(own, ...allowDownstream(sim, edge.to, topic, own, new Set([edge.to])));
  }
  return out;
}

/**
 * The acknowledged writes of `node`'s partition that a re-add without `--truncate-local-writes` must keep:
 * those after the barrier of the latest failover of a log that held mirrored data (a failover of a re-add
 * stopped before its truncation appends another barrier after writes that stay local, and the engine keeps
 * protecting them: soak FC_SEED=4), and still in the log as acknowledged (an earlier consented truncation
 * may have removed them, and their offsets may hold other batches since). `failover` is that latest
 * failover, if any.
 */
export function localWrites(
  sim: Simulation,
  node: string,
  topic: string,
  partition: number,
): { failover: FailoverRecord | undefined; writes: AckedWrite[] } {
  const failover = [...sim.model.failovers]
    .reverse()
    .find((f) => f.node === node && f.topic === topic && f.partition === partition && f.aligned);
  if (!failover) return { failover, writes: [] };
  const log = leaderLog(sim.node(node).cluster, topic, partition);
  const present = log ? batchesByOffset(log) : new Map();
  const writes = sim.model.acked.filter((w) => {
    if (w.node !== node || w.topic !== topic || w.partition !== partition) return false;
    const b = present.get(w.offset);
    return w.offset > failover.barrierOffset && b !== undefined && hexOf(b) === w.hex;
  });
  return { failover, writes };
}

/**
 * The copies of `node`'s topic (its mirrors' destinations, and theirs, down a chain) follow a truncation of
 * `node`'s partition: each may cut at the same floor, until it has caught up with its source again.
 */
export function allowDownstream(
  sim: Simulation,
  node: string,
  topic: string,
  upstream: TruncationAllowance,
  seen: Set<string>,
): TruncationAllowance[] {
  const out: TruncationAllowance[] = [];
  for (const e of sim.edges) {
    if (e.from !== node || seen.has(e.to)) continue;
    const state = sim.edgeState(e, topic);
    if (state !== "ACTIVE" && state !== "PAUSED") continue;
    seen.add(e.to);
    const a = sim.prefix.allow({
      node: e.to,
      topic,
      partition: upstream.partition,
      floor: upstream.floor,
      reason: `${upstream.reason}, followed downstream by ${e.mirror}`,
      expires: "converged",
      upstream: node,
      after: upstream,
    });
    out.push(a, ...allowDownstream(sim, e.to, topic, a, seen));
  }
  return out;
}

/**
 * Where `dest`'s log of a partition stops being byte-identical to `source`'s (the first differing or missing
 * batch from `dest`'s log start, or its log end): a failback truncation never needs to cut below it.
 */
function commonPrefixEnd(dest: KafkaCluster, source: KafkaCluster, topic: string, partition: number): bigint {
  const d = leaderLog(dest, topic, partition);
  const s = leaderLog(source, topic, partition);
  if (!d) return 0n;
  if (!s) return d.logStartOffset;
  const theirs = batchesByOffset(s);
  for (const b of d.batches()) {
    if (b.lastOffset < d.logStartOffset) continue;
    const o = theirs.get(b.baseOffset);
    if (!o || hexOf(o) !== hexOf(b)) return b.baseOffset;
  }
  return d.logEndOffset;
}
