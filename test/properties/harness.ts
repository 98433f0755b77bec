import { ControlRecordType } from "@cluster-mirror/protocol";
import fc from "fast-check";
import { expect } from "vitest";
import { KNOWN_ENGINE_BUGS, runTaintedBy } from "./known-bugs";
import {
  activateDestinationGroup,
  addPartition,
  addTopic,
  advance,
  alterSourceConfig,
  bounceLeader,
  CUT_FAULT_MODES,
  checkNow,
  concurrent,
  controllerFailover,
  corruptReplica,
  crash,
  crashAfterAck,
  crashOnCommit,
  crashOnReAdd,
  crashSoon,
  cutFault,
  cutLink,
  deleteRecords,
  diskFull,
  electPreferred,
  FAILOVER_MODES,
  failback,
  failover,
  failoverAlignment,
  failoverWithoutMirroredData,
  failStopped,
  fastDisk,
  formatViolations,
  groupCommit,
  healLink,
  leaderLog,
  livenessCounts,
  loopAdd,
  loopRace,
  moveStateLeader,
  pause,
  powerLoss,
  produce,
  produceKeyed,
  promoteRace,
  readd,
  readdCutFault,
  readdRecreate,
  readdRemoveRace,
  recover,
  recreateTopic,
  refuseConfigs,
  restart,
  restartBrokers,
  restartNode,
  resume,
  Simulation,
  type SimulationOptions,
  settleAndCheck,
  slowDisk,
  slowReplication,
  type TopologySpec,
  txnBegin,
  txnCommitCrash,
  txnCommitKill,
  txnEnd,
  txnFence,
  uncleanElection,
  underMinIsrWrites,
  writePromoted,
} from "./sim";

/** One step of a model-based run: a named action on the simulation, then the always-true invariants. */
class SimCommand implements fc.AsyncCommand<object, Simulation> {
  constructor(
    readonly label: string,
    readonly action: (sim: Simulation) => Promise<void> | void,
  ) {}
  check(): boolean {
    return true;
  }
  async run(_model: object, sim: Simulation): Promise<void> {
    await this.action(sim);
    await checkNow(sim);
  }
  toString(): string {
    return this.label;
  }
}

const n = fc.nat(1000);
type Action = (sim: Simulation, args: readonly number[]) => Promise<void> | void;

/** What each command does with its numeric arguments (a label `name(a,b)` replays through this table). */
const ACTIONS = {
  produce: (s, [t, p, c]) => produce(s, t!, p!, c!),
  produceKeyed: (s, [t, c]) => produceKeyed(s, t!, c!),
  writePromoted: (s, [t, p, c]) => writePromoted(s, t!, p!, c!),
  txnBegin: (s, [t, p]) => txnBegin(s, t!, p!),
  txnCommit: (s) => txnEnd(s, true),
  txnAbort: (s) => txnEnd(s, false),
  txnCommitCrash: (s, [t, p, w, d, ms]) => txnCommitCrash(s, t!, p!, w!, d!, ms!),
  txnCommitKill: (s, [t, p, w, d]) => txnCommitKill(s, t!, p!, w!, d!),
  groupCommit: (s, [t, g, o]) => groupCommit(s, t!, g!, o!),
  activeGroup: (s, [t]) => activateDestinationGroup(s, t!),
  addTopic: (s, [r, p]) => addTopic(s, r!, p!),
  pause: (s, [i]) => pause(s, i!),
  resume: (s, [i]) => resume(s, i!),
  recover: (s, [i]) => recover(s, i!),
  failover: (s, [i, m]) =>
    failover(s, i!, m === undefined ? "unplanned" : FAILOVER_MODES[m % FAILOVER_MODES.length]),
  failback: (s, [i]) => failback(s, i!),
  failStopped: (s, [i, m]) => failStopped(s, i!, m!),
  cycle: (s, [i]) => failback(s, i!, true),
  crash: (s, [c, b]) => crash(s, c!, b!),
  restart: (s, [c]) => restart(s, c!),
  moveStateLeader: (s, [c, p]) => moveStateLeader(s, c!, p!),
  electPreferred: (s, [c]) => electPreferred(s, c!),
  cutLink: (s, [e]) => cutLink(s, e!),
  refuseConfigs: (s, [e, ms]) => refuseConfigs(s, e!, ms!),
  healLink: (s, [e]) => healLink(s, e!),
  advance: (s, [ms]) => advance(s, ms!),
  config: (s, [t, v]) => alterSourceConfig(s, t!, v!),
  deleteRecords: (s, [t, p, q, c]) => deleteRecords(s, t!, p!, q!, c ?? 0),
  addPartition: (s, [t]) => addPartition(s, t!),
  unclean: (s, [t]) => uncleanElection(s, t!),
  slowDisk: (s, [c, b, ms]) => slowDisk(s, c!, b!, ms!),
  laggingDisk: (s, [c, b, ms]) => slowDisk(s, c!, b!, ms!),
  fastDisk: (s, [c]) => fastDisk(s, c!),
  slowReplication: (s, [c, ms]) => slowReplication(s, c!, ms!),
  controllerFailover: (s, [c, ms, k]) => controllerFailover(s, c!, ms!, k!),
  crashSoon: (s, [c, b, d, ms]) => crashSoon(s, c!, b!, d!, ms!),
  cutFault: (s, [m, f, d, ms]) => cutFault(s, m!, f!, d!, ms!),
  readdCutFault: (s, [i, p, c, m, f, d, ms]) => readdCutFault(s, i!, p!, c!, m!, f!, d!, ms!),
  diskFull: (s, [c, b, d, ms]) => diskFull(s, c!, b!, d!, ms!),
  longDiskFull: (s, [c, b, d, ms]) => diskFull(s, c!, b!, d!, ms!),
  underMinIsr: (s, [c, b, k, ms]) => {
    crash(s, c!, b!);
    diskFull(s, c!, k!, 0, ms!);
  },
  powerLoss: (s, [c, p, d, ms]) => powerLoss(s, c!, p!, d!, ms!),
  underMinIsrWrites: (s, [c, b, k, ms, t, m]) => underMinIsrWrites(s, c!, b!, k!, ms!, t!, m!),
  crashOnCommit: (s, [t, d, ms]) => crashOnCommit(s, t!, d!, ms!),
  crashOnReAdd: (s, [d, ms]) => crashOnReAdd(s, d!, ms!),
  crashAfterAck: (s, [t, p, l, ms, how]) => crashAfterAck(s, t!, p!, l!, ms!, how),
  bounceLeader: (s, [c, t]) => bounceLeader(s, c!, t!),
  readd: (s, [i, t]) => readd(s, i!, (t ?? 0) % 2 === 1),
  readdRemoveRace: (s, [i, d]) => readdRemoveRace(s, i!, d!),
  loopAdd: (s, [i]) => loopAdd(s, i!),
  loopRace: (s, [i, o, m, t]) => loopRace(s, i!, o!, m!, t!),
  concurrent: (s, [ka, a, kb, b]) => concurrent(s, ka!, a!, kb!, b!),
  promoteRace: (s, [a, kb, b]) => promoteRace(s, a!, kb!, b!),
  corrupt: (s, [c, t, r]) => corruptReplica(s, c!, t!, r!),
  restartBrokers: (s, [c]) => restartBrokers(s, c!),
  restartNode: (s, [c]) => restartNode(s, c!),
  txnFence: (s) => txnFence(s),
  recreateTopic: (s, [t, g, c]) => recreateTopic(s, t!, g!, c!),
  readdRecreate: (s, [i, t, g]) => readdRecreate(s, i!, (t ?? 0) % 2 === 1, g!),
} satisfies Record<string, Action>;

/** A command name of `COMMANDS`. */
export type CommandName = keyof typeof ACTIONS;

/** The arguments each command draws (shrinking towards small choices). */
const ARGS: Record<CommandName, fc.Arbitrary<number[]>> = {
  produce: fc.tuple(n, n, fc.integer({ min: 1, max: 4 })),
  produceKeyed: fc.tuple(n, fc.integer({ min: 1, max: 3 })),
  writePromoted: fc.tuple(n, n, fc.integer({ min: 1, max: 4 })),
  txnBegin: fc.tuple(n, n),
  txnCommit: fc.constant([]),
  txnAbort: fc.constant([]),
  txnCommitKill: fc.tuple(n, n, fc.nat(1), fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 50 }))),
  txnCommitCrash: fc.tuple(
    n,
    n,
    fc.nat(1),
    fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 20 })),
    fc.integer({ min: 50, max: 5_000 }),
  ),
  groupCommit: fc.tuple(n, n, n),
  activeGroup: fc.tuple(n),
  addTopic: fc.tuple(n, n),
  pause: fc.tuple(n),
  recover: fc.tuple(n),
  resume: fc.tuple(n),
  failover: fc.tuple(n, fc.nat(FAILOVER_MODES.length - 1)),
  failback: fc.tuple(n),
  // bit 0: an idempotent producer writes first; bit 1: a transaction begins first.
  failStopped: fc.tuple(n, fc.nat(3)),
  cycle: fc.tuple(n),
  crash: fc.tuple(n, n),
  restart: fc.tuple(n),
  moveStateLeader: fc.tuple(n, n),
  electPreferred: fc.tuple(n),
  cutLink: fc.tuple(n),
  refuseConfigs: fc.tuple(n, fc.integer({ min: 5_000, max: 90_000 })),
  healLink: fc.tuple(n),
  advance: fc.tuple(fc.integer({ min: 100, max: 40_000 })),
  config: fc.tuple(n, n),
  deleteRecords: fc.tuple(n, n, fc.nat(3), fc.nat(1)),
  addPartition: fc.tuple(n),
  unclean: fc.tuple(n),
  slowDisk: fc.tuple(n, n, fc.integer({ min: 10, max: 2_000 })),
  // A disk slower than the simulation's replica.lag.time.max.ms (10 s): its broker's followers leave ISRs.
  laggingDisk: fc.tuple(n, n, fc.integer({ min: 11_000, max: 30_000 })),
  fastDisk: fc.tuple(n),
  slowReplication: fc.tuple(n, fc.oneof(fc.constant(0), fc.integer({ min: 5, max: 500 }))),
  controllerFailover: fc.tuple(n, fc.integer({ min: 100, max: 15_000 }), n),
  crashSoon: fc.tuple(n, n, fc.integer({ min: 0, max: 400 }), fc.integer({ min: 50, max: 5_000 })),
  diskFull: fc.tuple(n, n, fc.integer({ min: 0, max: 400 }), fc.integer({ min: 50, max: 5_000 })),
  // Full longer than replica.lag.time.max.ms (10 s): its broker's followers leave ISRs meanwhile. At most
  // 30 s: one landing inside the settling (its delay) ends before the settling's 35 s pass.
  longDiskFull: fc.tuple(n, n, fc.integer({ min: 0, max: 400 }), fc.integer({ min: 11_000, max: 30_000 })),
  // A crash (unless a broker is down already) and, at once, a full disk (as `diskFull`'s choice: the leader
  // of a `__mirror_state` partition or of a mirror partition, or a broker) on the same cluster: partitions
  // whose third replica leads keep one in-sync replica, under min.insync.replicas=2.
  underMinIsr: fc.tuple(n, n, n, fc.integer({ min: 11_000, max: 30_000 })),
  // Full for longer than its 11 s of load, so that the faults of the next commands land while it lasts. The
  // disk fills at once, so the settling (which empties every disk first) always finds it full already.
  underMinIsrWrites: fc.tuple(
    n,
    n,
    n,
    fc.integer({ min: 20_000, max: 40_000 }),
    n,
    fc.integer({ min: 1, max: 3 }),
  ),
  // Now or inside the next commands; back after a short outage (a restart) or a long one.
  powerLoss: fc.tuple(
    n,
    n,
    fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 15_000 })),
    fc.integer({ min: 50, max: 20_000 }),
  ),
  cutFault: fc.tuple(
    fc.nat(CUT_FAULT_MODES.length - 1),
    fc.nat(1),
    fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 15_000 })),
    fc.integer({ min: 50, max: 5_000 }),
  ),
  readdCutFault: fc.tuple(
    n,
    n,
    fc.integer({ min: 1, max: 3 }),
    fc.nat(CUT_FAULT_MODES.length - 1),
    fc.nat(1),
    fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 15_000 })),
    fc.integer({ min: 50, max: 5_000 }),
  ),
  crashOnCommit: fc.tuple(
    fc.oneof(fc.constant(0), fc.nat(3)),
    fc.integer({ min: 0, max: 200 }),
    fc.integer({ min: 50, max: 5_000 }),
  ),
  crashOnReAdd: fc.tuple(fc.integer({ min: 0, max: 50 }), fc.integer({ min: 50, max: 5_000 })),
  crashAfterAck: fc.tuple(
    n,
    n,
    fc.integer({ min: 20, max: 2_000 }),
    fc.integer({ min: 50, max: 5_000 }),
    fc.nat(11),
  ),
  bounceLeader: fc.tuple(n, n),
  readd: fc.tuple(n, fc.nat(1)),
  readdRemoveRace: fc.tuple(n, fc.nat(15)),
  loopAdd: fc.tuple(n),
  loopRace: fc.tuple(n, fc.nat(1), fc.nat(1), fc.nat(3)),
  concurrent: fc.tuple(n, n, n, n),
  promoteRace: fc.tuple(n, n, n),
  corrupt: fc.tuple(n, n, n),
  restartBrokers: fc.tuple(n),
  restartNode: fc.tuple(n),
  txnFence: fc.constant([]),
  recreateTopic: fc.tuple(n, fc.nat(1), fc.nat(4)),
  readdRecreate: fc.tuple(n, fc.nat(1), fc.nat(1)),
};

/** The command `name` with `args`, labelled `name(a,b)` (or `name` without arguments). */
function command(name: CommandName, args: readonly number[]): SimCommand {
  const action: Action = ACTIONS[name];
  return new SimCommand(args.length === 0 ? name : `${name}(${args.join(",")})`, (s) => action(s, args));
}

/** Command generators by name; a property picks the ones its topology and faults use. */
export const COMMANDS = Object.fromEntries(
  (Object.keys(ARGS) as CommandName[]).map((name) => [name, ARGS[name].map((args) => command(name, args))]),
) as Record<CommandName, fc.Arbitrary<SimCommand>>;

/** Parses a step label (`produce(0,1,2)`, `txnCommit`) back into its command; throws on an unknown one. */
export function parseCommand(label: string): SimCommand {
  const m = /^(\w+)(?:\(([-\d,]*)\))?$/.exec(label.trim());
  const name = m?.[1] as CommandName | undefined;
  if (!m || !name || !(name in ACTIONS)) throw new Error(`unknown command label '${label}'`);
  const args = m[2] ? m[2].split(",").map(Number) : [];
  return command(name, args);
}

/** How a topology property runs. */
export interface TopologyProperty {
  /** Property name; also names the replay command's file. */
  name: string;
  file: string;
  topology: () => TopologySpec;
  commands: readonly CommandName[];
  /** Runs in CI (multiplied by PROPERTY_RUNS for soak). */
  numRuns: number;
  maxCommands: number;
  options?: SimulationOptions;
  /**
   * Known engine bugs, excluded so CI stays green: returns a reason when a violation is a known one.
   * Each filter names the bug and is removed once the engine is fixed.
   */
  knownBugs?: ((violation: { invariant: string; message: string }) => string | undefined)[];
  /** Called with each run's simulation after it settled (e.g. to aggregate `sim.stats` across runs). */
  onRunEnd?: (sim: Simulation) => void;
}

/**
 * A counterexample of a bug the suite found and the engine fixed, replayed on every run: either the sim
 * seed and the command labels themselves (robust to changes of the property's command list), or a
 * fast-check seed, path and replay path (the older form, tied to the command list it was found with).
 */
export type Regression =
  | {
      /** What the bug was. */
      bug: string;
      /** The simulation's seed (`sim seed` in a failure report). */
      simSeed: number;
      /** Command labels as a failure report prints them (`failover(0)`, `txnCommit`). */
      steps: readonly string[];
      /**
       * Says why the run no longer reaches the situation the bug needs (undefined: it does). A regression
       * that stops reaching its bug proves nothing, so it then fails.
       */
      reaches?: (sim: Simulation) => string | undefined;
    }
  | { bug: string; seed: number; path: string; replayPath: string };

/**
 * Replays fixed counterexamples of a topology property: the bugs they once found stay fixed.
 */
export async function runRegressions(p: TopologyProperty, regressions: readonly Regression[]): Promise<void> {
  for (const r of regressions) {
    if ("steps" in r) {
      const sim = await runSteps(p, r.simSeed, r.steps.map(parseCommand));
      const why = reportOf(p, sim, `regression (${r.bug}) `);
      if (why) throw new Error(`${why}\nreplay: the regression '${r.bug}' in ${p.file}`);
      const missed = r.reaches?.(sim);
      if (missed !== undefined) {
        throw new Error(
          `regression (${r.bug}) ${p.name} no longer reaches its bug: ${missed}\nsteps:\n  ${sim.steps.join("\n  ")}`,
        );
      }
      continue;
    }
    await runTopologyProperty(p, { seed: r.seed, path: r.path, replayPath: r.replayPath, label: r.bug });
  }
}

/**
 * `reaches` of a regression that needs steps matching `patterns` (a substring or a regex of a step line),
 * each after the one before; `missing` says what did not happen.
 */
export function reachesSteps(missing: string, ...patterns: (string | RegExp)[]) {
  return (sim: Simulation): string | undefined => {
    let from = 0;
    for (const p of patterns) {
      const i = sim.steps.findIndex(
        (s, k) => k >= from && (typeof p === "string" ? s.includes(p) : p.test(s)),
      );
      if (i < 0) return missing;
      from = i + 1;
    }
    return undefined;
  };
}

/**
 * The latest failover of `mirror`'s `topic`-`partition` on `node`, from the `__mirror_state` history (a
 * failover over the topic's own log records no failover point in the model); undefined when none.
 */
export function latestFailover(
  sim: Simulation,
  node: string,
  mirror: string,
  topic: string,
  partition: number,
) {
  const cluster = sim.node(node).cluster;
  const topicId = cluster.controller.image.topic(topic)?.topicId ?? "";
  return failoverAlignment(cluster, { mirror, topicId, partition });
}

/**
 * `reaches` of a regression that needs a failover from FAILED over a log that held no mirrored data in its
 * session (`failoverWithoutMirroredData`, read from `node`'s `__mirror_state` history).
 */
export function reachesUnmirroredFailover(node: string, mirror: string, topic: string, partition: number) {
  return (sim: Simulation): string | undefined => {
    const alignment = latestFailover(sim, node, mirror, topic, partition);
    return failoverWithoutMirroredData(alignment) && alignment?.resumedFrom === "FAILED"
      ? undefined
      : `no failover of ${mirror} ${topic}-${partition} from FAILED over a log without mirrored data`;
  };
}

/**
 * `reaches` of a regression that needs an ABORT marker on `node`'s `topic`-`partition` after its failover's
 * barrier (a transaction of `node`'s own aborted once the topic was writable), the failover checked at
 * STOPPED before that marker landed (its point recorded in `sim.model.failovers`).
 */
export function reachesAbortAfterBarrier(node: string, topic: string, partition: number) {
  return (sim: Simulation): string | undefined => {
    const f = sim.model.failovers.find(
      (x) => x.node === node && x.topic === topic && x.partition === partition,
    );
    if (!f) return `no failover of ${node} ${topic}-${partition} checked at STOPPED`;
    const log = leaderLog(sim.node(node).cluster, topic, partition);
    const after = [...(log?.batches() ?? [])].some(
      (b) => b.isControl && b.controlType === ControlRecordType.ABORT && b.baseOffset > f.barrierOffset,
    );
    return after
      ? undefined
      : `no ABORT marker after the barrier at ${f.barrierOffset} of ${node} ${topic}-${partition}`;
  };
}

/** Builds the simulation, runs `commands` (each followed by the always-invariants), settles and checks. */
async function runSteps(
  p: TopologyProperty,
  simSeed: number,
  commands: Iterable<SimCommand>,
): Promise<Simulation> {
  const sim = await Simulation.create(p.topology(), simSeed, p.options);
  for (const c of commands) await c.run({}, sim);
  await settleAndCheck(sim);
  p.onRunEnd?.(sim);
  return sim;
}

/** Runs per property whose violations were excused by each known bug (printed after the property). */
const excused = new Map<string, Map<string, number>>();

/** The failure message for a run's violations not excluded as known bugs (undefined: none). */
function reportOf(p: TopologyProperty, sim: Simulation, prefix: string): string | undefined {
  const filters = [...KNOWN_ENGINE_BUGS, ...(p.knownBugs ?? [])];
  const items = new Set<string>();
  const tainted = runTaintedBy(sim.violations);
  if (tainted !== undefined) items.add(tainted);
  for (const v of sim.violations) for (const f of filters) if (f(v) !== undefined) items.add(f(v)!);
  const counts = excused.get(p.name) ?? new Map<string, number>();
  for (const i of items) counts.set(i, (counts.get(i) ?? 0) + 1);
  excused.set(p.name, counts);
  if (tainted !== undefined) return undefined;
  const found = sim.violations.filter((v) => !filters.some((f) => f(v) !== undefined));
  if (found.length === 0) return undefined;
  return `${prefix}${p.name}: ${found.length} invariant violation(s), sim seed ${sim.seed}, trace ${sim.world.scheduler.digest}\n${formatViolations(found)}\nsteps:\n  ${sim.steps.join("\n  ")}`;
}

/** Vitest timeout for a topology property: generous, since shrinking a failure replays many runs. */
export const PROPERTY_TIMEOUT_MS = 900_000;

/** FNV-1a of the property name: a fixed seed per property. */
function fixedSeed(name: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193);
  return h | 0;
}

function envInt(name: string): number | undefined {
  const v = process.env[name];
  return v === undefined || v === "" ? undefined : Number(v);
}

/**
 * Runs a topology property: for a seed (the SeededScheduler's) and a command sequence, builds the
 * simulation, runs the commands (checking the always-invariants after each), settles and checks
 * everything. Fails with the violations, the steps taken, and a one-line replay command.
 */
export async function runTopologyProperty(
  p: TopologyProperty,
  fixed?: { seed: number; path: string; replayPath: string; label: string },
): Promise<void> {
  const multiplier = envInt("PROPERTY_RUNS") ?? 1;
  // Fixed per property (design.md "Tests"), so CI runs the same cases every time; FC_SEED overrides it.
  const seed = fixed?.seed ?? envInt("FC_SEED") ?? fixedSeed(p.name);
  const path = fixed?.path ?? process.env.FC_PATH;
  const replayPath = fixed?.replayPath ?? process.env.FC_REPLAY_PATH;
  const arbs = p.commands.map((c) => COMMANDS[c]);
  const property = fc.asyncProperty(
    fc.nat(1_000_000),
    fc.commands(arbs, { maxCommands: p.maxCommands, replayPath }),
    async (simSeed, cmds) => {
      const sim = await Simulation.create(p.topology(), simSeed, p.options);
      await fc.asyncModelRun(() => ({ model: {}, real: sim }), cmds);
      await settleAndCheck(sim);
      p.onRunEnd?.(sim);
      const why = reportOf(p, sim, fixed ? `regression (${fixed.label}) ` : "");
      if (why) throw new Error(why);
    },
  );
  const result = await fc.check(property, {
    // A replayed counterexample needs as many runs as the path's first index; the path then picks it.
    numRuns: fixed
      ? Math.max(p.numRuns * multiplier, Number(fixed.path.split(":")[0]) + 1)
      : p.numRuns * multiplier,
    seed,
    // FC_NO_SHRINK=1 reports the first failure as found (quick triage); the replay command still works.
    ...(process.env.FC_NO_SHRINK === "1" ? { endOnFailure: true } : {}),
    ...(path === undefined ? {} : { path, endOnFailure: true }),
  });
  const counts = excused.get(p.name);
  if (counts && counts.size > 0 && !fixed) {
    // Known bugs stay visible: how many runs each one would have failed.
    console.log(
      `${p.name}: runs excused by known bugs: ${[...counts].map(([item, n]) => `${n} x ${item.split(":")[0]}`).join("; ")}`,
    );
  }
  excused.delete(p.name);
  if (process.env.LIVENESS_STATS === "1") {
    console.log(
      `${p.name}: liveness ${[...livenessCounts].map(([k, c]) => `${k} ${c.held}/${c.checked} held, ${c.dropped} dropped (${[...c.why].map(([w, n]) => `${n} ${w}`).join(", ")})`).join("; ")}`,
    );
    livenessCounts.clear();
  }
  if (result.failed) {
    const report = fc.defaultReportMessage(result) ?? "";
    const replayPath = /replayPath="([^"]*)"/.exec(report)?.[1];
    // `-t` matches the vitest test's name (a pattern), not the property's.
    const test = expect.getState().currentTestName?.split(" > ").pop() ?? p.name;
    const pattern = test.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    const replay = `FC_SEED=${result.seed} FC_PATH=${result.counterexamplePath ?? ""}${replayPath ? ` FC_REPLAY_PATH='${replayPath}'` : ""} pnpm exec vitest run ${p.file} -t '${pattern}'`;
    const cause =
      result.errorInstance instanceof Error ? result.errorInstance.message : String(result.errorInstance);
    throw new Error(`${report}\n\n${cause}\n\nreplay: ${replay}`);
  }
}
