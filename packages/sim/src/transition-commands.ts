import { exactTopicPattern, type MirrorPartitionView, PromoteTimeoutError } from "@cluster-mirror/mirror";
import { encodeRecordBatch } from "@cluster-mirror/protocol";
import type { CatchUpBarrier } from "./failover-completion";
import { crashBroker, downBrokers } from "./faults";
import { leaderLog } from "./invariants/logs";
import { transactionOutcome } from "./invariants/transactions";
import { expectRequested, slowestDisk } from "./liveness";
import { resolveRacedLoop } from "./loop-race";
import { allowDownstream, allowRejoinTruncation, localWrites, rejoin, sourcePromises } from "./operator";
import type { Simulation } from "./simulation";
import { type MirrorEdge, mirrorName } from "./topology";
import { describeError, pick, rawWrite } from "./workload";

/**
 * Re-adds a failed-over topic on the same edge (`addTopics` on the destination matching a topic it failed
 * over): the destination becomes a mirror of the source again. Acknowledged writes made there after the
 * PID reset must not be dropped silently (refused, or kept) unless the operator asks (`truncateLocalWrites`).
 */
export async function readd(sim: Simulation, choice: number, truncateLocalWrites = false): Promise<void> {
  const et = pick(
    sim.edgeTopics((s) => s === "REMOVED").filter(({ edge, topic }) => sim.holds(edge.from, topic)),
    choice,
  );
  if (!et) {
    sim.step("re-add: nothing failed over");
    return;
  }
  if (sim.openTxn?.node === et.edge.to && sim.openTxn.topic === et.topic) {
    sim.step(`re-add ${et.edge.mirror} ${et.topic}: a transaction is open there`);
    return;
  }
  await rejoin(sim, et.edge, et.topic, "re-add", truncateLocalWrites);
}

/**
 * A mirror loop: on the source of an ACTIVE edge, adds a mirror of the destination's copy of the same topic.
 * It must be refused before anything changes (the source's live topic stays writable, nothing is written
 * into it); an accepted loop is a violation, after which the operator removes it again.
 */
export async function loopAdd(sim: Simulation, choice: number): Promise<void> {
  const et = pick(
    sim.edgeTopics((s) => s === "ACTIVE"),
    choice,
  );
  if (!et) {
    sim.step("loop add: no active edge");
    return;
  }
  const { edge, topic } = et;
  const node = sim.node(edge.from);
  let reverse: MirrorEdge | undefined = sim.edges.find((e) => e.from === edge.to && e.to === edge.from);
  try {
    if (!reverse) {
      reverse = { from: edge.to, to: edge.from, mirror: mirrorName(edge.to, edge.from) };
      await sim.world.time.run(
        node.mirroring.admin.createMirror(reverse.mirror, { "bootstrap.servers": `${edge.to}:9092` }),
      );
      sim.edges.push(reverse);
    }
  } catch (error) {
    sim.step(`loop add: create ${mirrorName(edge.to, edge.from)}: ${describeError(error)}`);
    return;
  }
  const configBefore = node.cluster.controller.image.topic(topic)?.configs.get("mirror.name");
  try {
    await sim.world.time.run(node.mirroring.admin.addTopics(reverse.mirror, topic), 120_000);
  } catch (error) {
    const configAfter = node.cluster.controller.image.topic(topic)?.configs.get("mirror.name");
    sim.step(`loop add ${reverse.mirror} ${topic}: refused (${describeError(error).split(":")[0]})`);
    if (configAfter !== configBefore) {
      sim.report([
        {
          invariant: "mirror-loop-refused",
          message: `${edge.from} ${topic}: a refused mirror-loop add changed mirror.name from ${configBefore ?? "unset"} to ${configAfter ?? "unset"}`,
        },
      ]);
    }
    return;
  }
  sim.report([
    {
      invariant: "mirror-loop-refused",
      message: `${edge.from}: adding ${topic} to ${reverse.mirror} (a mirror of ${edge.to}, which mirrors ${edge.from}'s ${topic}) was accepted: a mirror loop`,
    },
  ]);
  sim.step(`loop add ${reverse.mirror} ${topic}: accepted`);
  // The operator's way out: remove it again (the topic must become writable).
  try {
    await sim.world.time.run(node.mirroring.admin.removeTopics(reverse.mirror, topic), 120_000);
  } catch (error) {
    sim.step(`loop add: remove ${reverse.mirror} ${topic}: ${describeError(error)}`);
  }
  await sim.world.time.advance(5_000);
}

/** One operator call of a `concurrent` pair, prepared before either starts. */
interface PreparedOp {
  label: string;
  edge: MirrorEdge;
  topic: string;
  before: string | undefined;
  start: () => Promise<unknown>;
}

const OPS = ["remove", "pause", "resume", "readd", "write"] as const;

function prepareOp(sim: Simulation, kind: number, choice: number): PreparedOp | undefined {
  const op = OPS[Math.abs(kind) % OPS.length]!;
  const wanted = {
    remove: ["ACTIVE", "PAUSED"],
    pause: ["ACTIVE"],
    resume: ["PAUSED"],
    readd: ["REMOVED"],
    write: ["ACTIVE", "PAUSED", "REMOVED"],
  }[op];
  const et = pick(
    sim.edgeTopics((s) => wanted.includes(s)),
    choice,
  );
  if (!et) return undefined;
  const admin = sim.node(et.edge.to).mirroring.admin;
  const call = {
    remove: () => admin.removeTopics(et.edge.mirror, et.topic),
    pause: () => admin.pauseTopics(et.edge.mirror, et.topic),
    resume: () => admin.resumeTopics(et.edge.mirror, et.topic),
    readd: () => admin.addTopics(et.edge.mirror, et.topic),
    // An application writing to the destination's copy while the operator acts (a failover in flight),
    // straight to the partition leader (acks=1) as a client with fresh metadata: no retry hides the race.
    // The broker guard reports an append before STOPPED; an acknowledgement is recorded like any other.
    write: () => rawWrite(sim, et.edge.to, et.topic, 0),
  }[op];
  return {
    label: `${op} ${et.edge.mirror} ${et.topic}`,
    edge: et.edge,
    topic: et.topic,
    before: sim.edgeState(et.edge, et.topic),
    start: call,
  };
}

/**
 * Two operator calls issued without awaiting the first (any of remove, pause, resume, re-add, possibly on
 * the same topic, or an application's write to the destination's copy racing them). Afterwards the model follows the destination's `mirror.name` (the source of truth); a
 * removal that took effect is a pending (unplanned) failover, checked when STOPPED is reached. A re-add
 * here may truncate only what a failback could (local writes after the PID reset are protected).
 */
export async function concurrent(
  sim: Simulation,
  kindA: number,
  choiceA: number,
  kindB: number,
  choiceB: number,
): Promise<void> {
  const a = prepareOp(sim, kindA, choiceA);
  const b = prepareOp(sim, kindB, choiceB);
  if (!a || !b) {
    sim.step("concurrent: nothing to do");
    return;
  }
  await race(sim, a, b, kindA, choiceB);
}

/**
 * When `readdRemoveRace`'s removal lands: right after the re-add's `mirror.name` (a microtask later), right
 * after its START was handed to the coordinator (waiting for its append), or this many virtual ms after the
 * re-add starts.
 */
const REMOVAL_TRIGGERS = ["mirror.name", "START", 0, 2, 10, 30, 100, 300] as const;

/**
 * A re-add (`--add`, with `--truncate-local-writes` when `choice` says so) of a failed-over topic and, some
 * milliseconds after it starts, the operator's removal of the same topic through its config
 * (kafka-configs: `mirror.name=NAME.removed`, outside the mirror's command queue). The removal lands
 * anywhere in the re-add: before its `mirror.name`, between it and its START, while the START waits for its
 * append, during PREPARING, or after. Whichever wins, nothing acknowledged may be lost but what the re-add
 * may truncate, the read-only flag may not clear while `mirror.name` asks for mirroring, and a topic that
 * ends removed must end writable (the workload's next write there checks it).
 */
export async function readdRemoveRace(sim: Simulation, choice: number, delayChoice: number): Promise<void> {
  const et = pick(
    sim.edgeTopics((s) => s === "REMOVED").filter(({ edge, topic }) => sim.holds(edge.from, topic)),
    choice,
  );
  if (!et) {
    sim.step("re-add/remove race: nothing failed over");
    return;
  }
  const { edge, topic } = et;
  if (sim.openTxn?.node === edge.to && sim.openTxn.topic === topic) {
    sim.step(`re-add/remove race ${edge.mirror} ${topic}: a transaction is open there`);
    return;
  }
  const trigger = REMOVAL_TRIGGERS[Math.abs(delayChoice) % REMOVAL_TRIGGERS.length]!;
  const truncateLocalWrites = Math.abs(delayChoice) >= REMOVAL_TRIGGERS.length;
  const node = sim.node(edge.to);
  const allowances = allowRejoinTruncation(sim, edge, topic, "re-add", !truncateLocalWrites);
  // A re-add that may truncate local writes may cut this node's own transactions of the topic.
  if (truncateLocalWrites)
    for (const c of sim.model.commits) if (c.node === edge.to && c.topic === topic) c.rejoined = true;
  // The removal, then an application's write (acks=all, straight to the leader), retried while refused.
  let written: bigint | undefined;
  let refusal = "";
  let removeNow: () => void = () => {};
  const removal = new Promise<void>((resolve, reject) => {
    let done = false;
    removeNow = () => {
      if (done) return;
      done = true;
      try {
        node.cluster.controller.incrementalAlterConfigs({ type: "topic", name: topic }, [
          { name: "mirror.name", op: "SET", value: `${edge.mirror}.removed` },
        ]);
      } catch (error) {
        reject(error);
        return;
      }
      // An application retrying every 5 ms for up to 300 ms: acknowledged once the topic is writable.
      let attempts = 0;
      const write = () =>
        rawWrite(sim, edge.to, topic, 0, -1).then(
          (offset) => {
            written = offset;
            resolve();
          },
          (error: unknown) => {
            refusal = describeError(error);
            if (++attempts < 60) sim.world.scheduler.schedule(write, 5);
            else resolve();
          },
        );
      void write();
    };
  });
  const coordinators = node.mirroring.coordinators;
  const command = coordinators.command;
  let stopWatch = () => {};
  if (typeof trigger === "number") sim.world.scheduler.schedule(() => removeNow(), trigger);
  else if (trigger === "START") {
    // The START of the re-added topic is in the coordinator's hands (its record waits for its append).
    coordinators.command = (key, c) => {
      const sent = command.call(coordinators, key, c);
      if (c.type === "START" && key.topic === topic) removeNow();
      return sent;
    };
    stopWatch = () => {
      coordinators.command = command;
    };
  } else {
    stopWatch = node.cluster.controller.subscribe(({ record }) => {
      if (record.type === "Config" && record.resourceName === topic && record.value === edge.mirror)
        queueMicrotask(removeNow); // not from inside the controller's publish
    }, node.cluster.controller.metadataLog().length);
  }
  const add = node.mirroring.admin.addTopics(edge.mirror, topic, { truncateLocalWrites });
  // A re-add refused before its mirror.name: the removal goes ahead alone.
  void add.then(undefined, () => queueMicrotask(removeNow));
  let outcomes: PromiseSettledResult<unknown>[];
  try {
    outcomes = await sim.world.time.run(Promise.allSettled([add, removal]), 240_000);
  } finally {
    stopWatch();
  }
  const [added, removed] = outcomes.map((o) => (o.status === "fulfilled" ? "ok" : describeError(o.reason)));
  const flag = truncateLocalWrites ? " --truncate-local-writes" : "";
  const wrote = written === undefined ? `refused (${refusal})` : `acknowledged at ${written}`;
  sim.step(
    `re-add${flag} ${edge.mirror} ${topic} -> ${added} | kafka-configs removal ${typeof trigger === "number" ? `${trigger} ms later` : `right after its ${trigger}`} -> ${removed}, a write after it ${wrote}`,
  );
  // A removal that came last must end promptly on a healthy cluster (`failover-ends`, see LivenessWatch):
  // a STOP left to the metadata refresh (30 s) is caught.
  if (node.cluster.controller.image.topic(topic)?.configs.get("mirror.name") === `${edge.mirror}.removed`) {
    sim.liveness.expect({
      invariant: "failover-ends",
      what: `re-add/remove race ${edge.mirror} ${topic}: removed last`,
      edge,
      topic,
      targets: ["STOPPED"],
      needsSource: false,
    });
  }
  // The metadata manager follows the last mirror.name (a removal, unless it landed before the re-add's).
  await sim.world.time.advance(5_000);
  const final = sim.syncEdgeState(edge, topic);
  sim.step(
    `re-add/remove race ${edge.mirror} ${topic}: ${final === "ACTIVE" ? "the re-add" : "the removal"} came last`,
  );
  if (final === "ACTIVE") return;
  // The removal was the last word: nothing may have cut the write acknowledged after it.
  const log = leaderLog(node.cluster, topic, 0);
  if (written !== undefined && log !== undefined) {
    const kept = [...log.batches()].some((b) => b.baseOffset === written && !b.isControl);
    if (!kept) {
      sim.report([
        {
          invariant: "acked-after-removal",
          message: `${edge.to} ${topic}-0: the write acknowledged (acks=all) at offset ${written} right after the re-add's removal is gone (log ${log.logStartOffset}..${log.logEndOffset})`,
        },
      ]);
    }
  }
  // Removed in the end: the re-add's truncations, if any, happened by now (each checked as it happened).
  sim.prefix.cancel(edge.to, topic);
  for (const a of allowances) sim.prefix.withdraw(a);
}

/**
 * `--promote` of an ACTIVE edge topic racing one of `concurrent`'s calls (a remove, pause or resume of the
 * same topic or another of the mirror, a re-add, a write to a destination copy): commands on one mirror
 * queue behind each other, so the promote's catch-up wait must neither let a command in between its
 * catch-up and its failover nor block the other command for good. A promote that returns promises what the
 * source acknowledged before it was called (its catch-up target is the source's high watermark then).
 */
export async function promoteRace(
  sim: Simulation,
  choice: number,
  kindB: number,
  choiceB: number,
): Promise<void> {
  const et = pick(
    sim.edgeTopics((s) => s === "ACTIVE"),
    choice,
  );
  const b = prepareOp(sim, kindB, choiceB);
  if (!et || !b) {
    sim.step("promote race: nothing to do");
    return;
  }
  const admin = sim.node(et.edge.to).mirroring.admin;
  const a: PreparedOp = {
    label: `promote ${et.edge.mirror} ${et.topic}`,
    edge: et.edge,
    topic: et.topic,
    before: "ACTIVE",
    start: () => admin.promoteTopics(et.edge.mirror, exactTopicPattern([et.topic]), { timeoutMs: 20_000 }),
  };
  await race(sim, a, b, choice, choiceB, sourcePromises(sim, et.edge, et.topic));
}

/**
 * Runs two prepared calls without awaiting the first, then makes the model follow `mirror.name`.
 * `promised`: what `a` promises when it succeeds (a promote's catch-up), checked once its failover is STOPPED.
 */
async function race(
  sim: Simulation,
  a: PreparedOp,
  b: PreparedOp,
  kindA: number,
  choiceB: number,
  promised?: CatchUpBarrier,
): Promise<void> {
  const allowances = [a, b].filter((op) => op.label.startsWith("readd")).flatMap((op) => allowReadd(sim, op));
  const views = new Map<string, Map<number, string>>();
  for (const op of [a, b]) {
    views.set(
      op.label,
      new Map(
        sim
          .node(op.edge.to)
          .mirroring.coordinators.describe(op.edge.mirror)
          .filter((v) => v.key.topic === op.topic)
          .map((v) => [v.key.partition, v.state]),
      ),
    );
  }
  const started = [a.start(), b.start()];
  const outcomes = await sim.world.time.run(Promise.allSettled(started), 240_000);
  const results = outcomes.map((o) => (o.status === "fulfilled" ? "ok" : describeError(o.reason)));
  sim.step(`concurrent: ${a.label} -> ${results[0]} | ${b.label} -> ${results[1]}`);
  // A promote kept its promise if it returned, or if only its wait for STOPPED ran out (the catch-up was reached).
  const first = outcomes[0]!;
  const kept =
    first.status === "fulfilled" ||
    (first.reason instanceof PromoteTimeoutError && first.reason.phase === "STOP");
  let anyRejoined = false;
  for (const op of [a, b]) {
    const after = sim.syncEdgeState(op.edge, op.topic);
    if (after === "REMOVED" && (op.before === "ACTIVE" || op.before === "PAUSED")) {
      if (!sim.pendingFailovers.some((f) => f.edge === op.edge && f.topic === op.topic)) {
        sim.pendingFailovers.push({
          edge: op.edge,
          topic: op.topic,
          before: views.get(op.label) ?? new Map(),
          barrier: op === a && kept ? promised : undefined,
          done: new Set(),
          lostByElection: new Set(),
        });
      }
    }
    if (op.before === "REMOVED" && after === "ACTIVE") anyRejoined = true;
  }
  if (!anyRejoined) for (const al of allowances) sim.prefix.withdraw(al);
  // Each accepted call's topic must then reach what its mirror.name asks for now (whichever came last).
  const expected = new Set<string>();
  for (const [i, op] of [a, b].entries()) {
    if (outcomes[i]!.status !== "fulfilled" || op.label.startsWith("write")) continue;
    const id = `${op.edge.mirror}\0${op.topic}`;
    if (expected.has(id)) continue;
    expected.add(id);
    expectRequested(sim, op.edge, op.topic, `concurrent ${a.label} | ${b.label}`);
  }
  // Two re-adds of one topic on the two mirrors between the same clusters, both accepted: a loop raced
  // from both sides, resolved as `loopRace` resolves it (soak `failback` FC_SEED=12 x100).
  const loop =
    a.label.startsWith("readd") &&
    b.label.startsWith("readd") &&
    a.topic === b.topic &&
    a.edge.from === b.edge.to &&
    a.edge.to === b.edge.from;
  if (loop && sim.edgeState(a.edge, a.topic) === "ACTIVE" && sim.edgeState(b.edge, b.topic) === "ACTIVE") {
    const side = (op: PreparedOp) => ({ edge: op.edge, what: "re-add", truncateLocalWrites: false });
    await resolveRacedLoop(sim, [side(a), side(b)], a.topic, kindA, choiceB);
  }
}

function allowReadd(sim: Simulation, op: PreparedOp) {
  const dest = sim.node(op.edge.to).cluster;
  const partitions = dest.controller.image.topic(op.topic)?.partitions.length ?? 0;
  const out = [];
  for (let p = 0; p < partitions; p++) {
    const { failover: barrier, writes: local } = localWrites(sim, op.edge.to, op.topic, p);
    const floor = local.length > 0 ? local[local.length - 1]!.offset + 1n : (barrier?.mirroredEnd ?? 0n);
    const own = sim.prefix.allow({
      node: op.edge.to,
      topic: op.topic,
      partition: p,
      floor,
      reason: `concurrent ${op.label}`,
      expires: "mirroring" as const,
    });
    out.push(own, ...allowDownstream(sim, op.edge.to, op.topic, own, new Set([op.edge.to])));
  }
  return out;
}

/**
 * One corrupt replica: flips one byte inside the records of a committed batch stored by one replica of a
 * partition (`replicaChoice` 0: its leader), then restarts the whole node (every broker crashes and comes
 * back, the corrupt one first), so that broker's log recovery finds the bad CRC. The healthy copies (the
 * other replicas, the mirrors) must keep every committed batch.
 */
export async function corruptReplica(
  sim: Simulation,
  nodeChoice: number,
  target: number,
  replicaChoice: number,
): Promise<void> {
  const node = pick(sim.world.spec.clusters, nodeChoice)!;
  const cluster = sim.node(node).cluster;
  if (downBrokers(cluster, sim.brokers).length > 0) {
    sim.step(`corrupt on ${node}: a broker is down`);
    return;
  }
  const candidates: { topic: string; partition: number }[] = [];
  for (const topic of [...cluster.controller.image.topicIdsByName.keys()].sort()) {
    if (topic.startsWith("__") || sim.model.topics.get(topic)?.compacted) continue;
    for (const p of cluster.controller.image.topic(topic)?.partitions ?? []) {
      const log = leaderLog(cluster, topic, p.partition);
      if (log && [...log.batches()].some((b) => !b.isControl && b.lastOffset < log.highWatermark)) {
        candidates.push({ topic, partition: p.partition });
      }
    }
  }
  const t = pick(candidates, target);
  if (!t) {
    sim.step(`corrupt on ${node}: no committed data`);
    return;
  }
  const meta = cluster.controller.image.partition(t.topic, t.partition)!;
  const replicas = [meta.leader, ...meta.replicas.filter((r) => r !== meta.leader)];
  const brokerId = replicas[Math.abs(replicaChoice) % replicas.length]!;
  const log = cluster.broker(brokerId)?.replica(t.topic, t.partition)?.log;
  const batch = log
    ? [...log.batches()].find((b) => !b.isControl && b.lastOffset < log.highWatermark && b.recordCount > 0)
    : undefined;
  if (!batch) {
    sim.step(`corrupt ${node} ${t.topic}-${t.partition} broker ${brokerId}: nothing stored`);
    return;
  }
  // The batch's bytes are a view of the stored segment (memory storage): this flips the byte on "disk".
  const at = 61 + (Math.abs(target) % Math.max(1, batch.sizeInBytes - 61));
  batch.buffer[at] = (batch.buffer[at] ?? 0) ^ 0x5a;
  const order = [brokerId, ...cluster.runningBrokers().filter((b) => b !== brokerId)];
  for (const b of cluster.runningBrokers()) crashBroker(cluster, b);
  for (const b of order) cluster.startBroker(b);
  sim.step(
    `corrupt ${node} ${t.topic}-${t.partition} on broker ${brokerId} (batch ${batch.baseOffset}, byte ${at}), then restart every broker of ${node}`,
  );
  await sim.world.time.advance(500);
}

/**
 * Restarts every broker of a node (each crashes and comes back) in the same process: the coordinators' and
 * the mirror engine's memory survive (see `restartNode` for a kill of the whole process). Then the checks of
 * `checkStoppingResumes` hold.
 */
export async function restartBrokers(sim: Simulation, nodeChoice: number): Promise<void> {
  const node = pick(sim.world.spec.clusters, nodeChoice)!;
  const { cluster, mirroring } = sim.node(node);
  const stopping = mirroring.coordinators.describe().filter((v) => v.state === "STOPPING");
  for (const b of cluster.runningBrokers()) crashBroker(cluster, b);
  for (let b = 0; b < sim.brokers; b++) cluster.startBroker(b);
  sim.step(`restart every broker of ${node} (${stopping.length} partition(s) were STOPPING)`);
  await checkStoppingResumes(sim, node, stopping);
}

/**
 * Restarts a whole node: a kill -9 of its process (every broker, the controller, the transaction and group
 * coordinators and the mirror engine die at once) and a new process on the same disks, which recovers what
 * the node stored (see `Simulation.restartNode`). Then the checks of `checkStoppingResumes` hold.
 */
export async function restartNode(sim: Simulation, nodeChoice: number): Promise<void> {
  const node = pick(sim.world.spec.clusters, nodeChoice)!;
  const stopping = sim
    .node(node)
    .mirroring.coordinators.describe()
    .filter((v) => v.state === "STOPPING");
  const open = sim.openTxn?.node === node ? ` (its open transaction abandoned)` : "";
  sim.restartNode(node);
  sim.step(
    `kill -9 node ${node}, then restart every broker of ${node} in a new process${open} (${stopping.length} partition(s) were STOPPING)`,
  );
  await checkStoppingResumes(sim, node, stopping);
}

/**
 * After every broker of `node` restarted: every partition that was STOPPING (`stopping`) must finish its
 * failover promptly (within 5 s of virtual time on a cluster healthy throughout, plus four fsyncs of its
 * slowest disk and eight trips of its network between brokers: the failover's replicated writes, its LME
 * record, its markers and barrier and its STOPPED record, each wait for that broker's fsync and for a
 * follower to fetch and report), and a repeated `removeTopics` of such a topic is accepted (idempotent).
 */
async function checkStoppingResumes(
  sim: Simulation,
  node: string,
  stopping: readonly MirrorPartitionView[],
): Promise<void> {
  const { cluster } = sim.node(node);
  if (stopping.length === 0 || !cluster.controller.isAvailable) {
    await sim.world.time.advance(100);
    return;
  }
  // A fault armed before the restart (a crash at the next epoch bump, a crash soon) may land while the
  // failover resumes: the promise holds only for a cluster healthy throughout.
  const faults = sim.liveness.watchFaults(node);
  try {
    await checkStoppingResumesWhileHealthy(sim, node, stopping, faults.disturbed);
  } finally {
    faults.stop();
  }
}

async function checkStoppingResumesWhileHealthy(
  sim: Simulation,
  node: string,
  stopping: readonly MirrorPartitionView[],
  disturbed: () => string | undefined,
): Promise<void> {
  const { cluster, mirroring } = sim.node(node);
  const repeated = new Set(stopping.map((v) => `${v.key.mirror}\0${v.key.topic}`));
  for (const k of repeated) {
    const [mirror, topic] = k.split("\0") as [string, string];
    try {
      await sim.world.time.run(mirroring.admin.removeTopics(mirror, topic), 30_000);
    } catch (error) {
      sim.report([
        {
          invariant: "remove-idempotent",
          message: `${node} ${mirror} ${topic}: a repeated removeTopics while STOPPING after a restart was refused (${describeError(error)})`,
        },
      ]);
    }
  }
  const stillStopping = () =>
    mirroring.coordinators
      .describe()
      .filter((v) =>
        stopping.some(
          (s) =>
            s.key.mirror === v.key.mirror &&
            s.key.topicId === v.key.topicId &&
            s.key.partition === v.key.partition,
        ),
      )
      .filter((v) => v.state !== "STOPPED");
  // Each replicated write (the LME record, the markers, the barrier, the STOPPED record) waits for a
  // follower's fetch and the next one that reports it: two trips of a slow network between brokers.
  const deadlineMs = 5_000 + 4 * slowestDisk(cluster, sim.brokers) + 8 * cluster.replicationLatency();
  // A full disk, even one filled before the restart, is no healthy cluster: its broker, a follower, holds
  // acks=all writes (the failover's) until it leaves the ISR (replica.lag.time.max.ms), or it leads and
  // refuses them (min-insync failback FC_SEED=2 x20: a node restart started a broker whose disk stayed
  // full for 25 s).
  let fullDisk: string | undefined;
  const noteFullDisks = () => {
    for (let b = 0; b < sim.brokers; b++) if (cluster.isDiskFull(b)) fullDisk ??= `disk of broker ${b} full`;
  };
  noteFullDisks();
  try {
    await sim.world.time.until(
      () => {
        noteFullDisks();
        return stillStopping().length === 0;
      },
      "STOPPING resumes",
      deadlineMs,
      100,
    );
  } catch {
    const why = disturbed() ?? fullDisk;
    if (why !== undefined) {
      sim.step(`STOPPING resumes: not checked, a fault on ${node} while it resumed (${why})`);
      return;
    }
    sim.report([
      {
        invariant: "stopping-resumes",
        message: `${node}: ${stillStopping().length} partition(s) interrupted in STOPPING by a restart are not STOPPED ${deadlineMs} ms after it (${stillStopping()
          .slice(0, 3)
          .map((v) => `${v.key.topic}-${v.key.partition} ${v.state}`)
          .join(", ")})`,
      },
    ]);
  }
}

/**
 * Transaction fencing: while a transaction is open, a second producer with the same transactional id
 * starts (InitProducerId) and writes to another partition of the topic (when it has one); the first
 * producer then tries to write there too, then the second commits and the first tries to commit. The first
 * transaction must be aborted and its producer fenced: its late write and its commit are refused, and none
 * of its records ever reads as committed (it must not join the second producer's transaction).
 */
export async function txnFence(sim: Simulation): Promise<void> {
  const open = sim.openTxn;
  if (!open) {
    sim.step("txn fence: none open");
    return;
  }
  sim.openTxn = undefined;
  const cluster = sim.node(open.node).cluster;
  const partitions = cluster.controller.image.topic(open.topic)?.partitions.length ?? 1;
  const other = (open.partition + 1) % partitions;
  const second = sim.node(open.node).kafka.producer({
    transactionalId: open.transactionalId,
    retry: { retries: 3, initialRetryTime: 100 },
  });
  const run = <T>(work: Promise<T>) => sim.world.time.run(work, 120_000);
  const outcomes: string[] = [];
  let lateWrite: bigint | undefined;
  try {
    await second.connect();
    const txn = await run(second.transaction());
    await run(
      txn.send({ topic: open.topic, messages: [{ key: "fence", value: "second", partition: other }] }),
    );
    // The fenced producer's late write, sent as a raw transactional produce at its old epoch (a client
    // that skips AddPartitionsToTxn): KIP-890's verification must refuse it, not add it to the new one.
    const old = open.producer.producerId();
    const leader = cluster.controller.image.partition(open.topic, other)?.leader ?? -1;
    const broker = cluster.broker(leader);
    if (old && broker) {
      try {
        const batch = encodeRecordBatch({
          baseTimestamp: BigInt(cluster.clock.now()),
          isTransactional: true,
          producerId: old.producerId,
          producerEpoch: old.producerEpoch,
          baseSequence: 0,
          records: [
            {
              attributes: 0,
              offsetDelta: 0,
              timestampDelta: 0n,
              key: null,
              value: Buffer.from("fenced"),
              headers: [],
            },
          ],
        });
        const r = await run(
          broker.produce({
            topic: open.topic,
            partition: other,
            batch,
            acks: -1,
            transactionalId: open.transactionalId,
          }),
        );
        lateWrite = r.baseOffset;
        outcomes.push(`first's late write accepted at ${other}@${lateWrite}`);
      } catch (error) {
        outcomes.push(`first's late write refused (${describeError(error).split(":")[0]})`);
      }
    }
    await run(txn.commit());
    outcomes.push("second committed");
  } catch (error) {
    outcomes.push(`second: ${describeError(error)}`);
  }
  let firstCommitted = false;
  try {
    await run(open.txn.commit());
    firstCommitted = true;
  } catch {
    // Fenced, as it must be.
  }
  outcomes.push(`first commit ${firstCommitted ? "accepted" : "refused"}`);
  sim.step(`txn fence on ${open.node}/${open.topic}: ${outcomes.join("; ")}`);
  const committed = (partition: number, offset: bigint) => {
    const log = leaderLog(cluster, open.topic, partition);
    const b = log ? [...log.batches()].find((x) => x.baseOffset === offset) : undefined;
    return (
      b !== undefined &&
      transactionOutcome(cluster, open.topic, partition, b.producerId, offset) === "COMMITTED"
    );
  };
  const leaked: string[] = [];
  if (firstCommitted) leaked.push("its commit was accepted");
  if (committed(open.partition, open.offset))
    leaked.push(`its record at ${open.partition}@${open.offset} reads as committed`);
  if (lateWrite !== undefined && committed(other, lateWrite)) {
    leaked.push(`its late write at ${other}@${lateWrite} reads as committed (it joined the new transaction)`);
  }
  if (leaked.length > 0) {
    sim.report([
      {
        invariant: "txn-fencing",
        message: `${open.node} ${open.topic}: after a second producer initialised transactional id ${open.transactionalId}, the first producer was not fenced: ${leaked.join("; ")}`,
      },
    ]);
  }
}

/**
 * One step of a rolling restart on a node: the leader of a mirror partition crashes, comes back, rejoins
 * the ISR, and a preferred leader election (Kafka's auto leader rebalance) gives it its leadership back.
 * A restarted replica must keep what makes the partition read-only.
 */
export async function bounceLeader(sim: Simulation, nodeChoice: number, target: number): Promise<void> {
  const node = pick(sim.world.spec.clusters, nodeChoice)!;
  const { cluster, mirroring } = sim.node(node);
  const view = pick(mirroring.coordinators.describe(), target);
  const meta = view ? cluster.controller.image.partition(view.key.topic, view.key.partition) : undefined;
  if (!view || !meta || meta.leader < 0 || downBrokers(cluster, sim.brokers).length > 0) {
    sim.step(`bounce leader on ${node}: nothing to bounce`);
    return;
  }
  const leader = meta.leader;
  crashBroker(cluster, leader);
  await sim.world.time.advance(1_000);
  cluster.startBroker(leader);
  const inIsr = () =>
    cluster.controller.image.partition(view.key.topic, view.key.partition)?.isr.includes(leader) ?? false;
  await sim.world.time
    .until(inIsr, "the restarted leader back in the ISR", 30_000, 100)
    .catch(() => undefined);
  if (cluster.controller.isAvailable) cluster.controller.electPreferredLeaders();
  const now = cluster.controller.image.partition(view.key.topic, view.key.partition)?.leader;
  sim.step(
    `bounce ${node} broker ${leader} (leader of ${view.key.topic}-${view.key.partition}); leader now ${now}`,
  );
}
