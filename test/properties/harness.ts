import fc from "fast-check";
import { KNOWN_ENGINE_BUGS } from "./known-bugs";
import {
  activateDestinationGroup,
  addPartition,
  addTopic,
  advance,
  alterSourceConfig,
  checkNow,
  controllerFailover,
  crash,
  cutLink,
  electPreferred,
  failback,
  failover,
  fastDisk,
  formatViolations,
  groupCommit,
  healLink,
  moveStateLeader,
  pause,
  produce,
  restart,
  resume,
  Simulation,
  type SimulationOptions,
  settleAndCheck,
  slowDisk,
  type TopologySpec,
  txnBegin,
  txnEnd,
  uncleanElection,
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
const cmd = (label: string, action: (sim: Simulation) => Promise<void> | void) =>
  new SimCommand(label, action);

/** Command generators by name; a property picks the ones its topology and faults use. */
export const COMMANDS = {
  produce: fc
    .tuple(n, n, fc.integer({ min: 1, max: 4 }))
    .map(([t, p, c]) => cmd(`produce(${t},${p},${c})`, (s) => produce(s, t, p, c))),
  txnBegin: fc.tuple(n, n).map(([t, p]) => cmd(`txnBegin(${t},${p})`, (s) => txnBegin(s, t, p))),
  txnCommit: fc.constant(cmd("txnCommit", (s) => txnEnd(s, true))),
  txnAbort: fc.constant(cmd("txnAbort", (s) => txnEnd(s, false))),
  groupCommit: fc
    .tuple(n, n, n)
    .map(([t, g, o]) => cmd(`groupCommit(${t},${g},${o})`, (s) => groupCommit(s, t, g, o))),
  activeGroup: n.map((t) => cmd(`activeGroup(${t})`, (s) => activateDestinationGroup(s, t))),
  addTopic: fc.tuple(n, n).map(([r, p]) => cmd(`addTopic(${r},${p})`, (s) => addTopic(s, r, p))),
  pause: n.map((i) => cmd(`pause(${i})`, (s) => pause(s, i))),
  resume: n.map((i) => cmd(`resume(${i})`, (s) => resume(s, i))),
  failover: n.map((i) => cmd(`failover(${i})`, (s) => failover(s, i))),
  failback: n.map((i) => cmd(`failback(${i})`, (s) => failback(s, i))),
  crash: fc.tuple(n, n).map(([c, b]) => cmd(`crash(${c},${b})`, (s) => crash(s, c, b))),
  restart: n.map((c) => cmd(`restart(${c})`, (s) => restart(s, c))),
  moveStateLeader: fc
    .tuple(n, n)
    .map(([c, p]) => cmd(`moveStateLeader(${c},${p})`, (s) => moveStateLeader(s, c, p))),
  electPreferred: n.map((c) => cmd(`electPreferred(${c})`, (s) => electPreferred(s, c))),
  cutLink: n.map((e) => cmd(`cutLink(${e})`, (s) => cutLink(s, e))),
  healLink: n.map((e) => cmd(`healLink(${e})`, (s) => healLink(s, e))),
  advance: fc.integer({ min: 100, max: 40_000 }).map((ms) => cmd(`advance(${ms})`, (s) => advance(s, ms))),
  config: fc.tuple(n, n).map(([t, v]) => cmd(`config(${t},${v})`, (s) => alterSourceConfig(s, t, v))),
  addPartition: n.map((t) => cmd(`addPartition(${t})`, (s) => addPartition(s, t))),
  unclean: n.map((t) => cmd(`unclean(${t})`, (s) => uncleanElection(s, t))),
  slowDisk: fc
    .tuple(n, n, fc.integer({ min: 10, max: 2_000 }))
    .map(([c, b, ms]) => cmd(`slowDisk(${c},${b},${ms})`, (s) => slowDisk(s, c, b, ms))),
  fastDisk: n.map((c) => cmd(`fastDisk(${c})`, (s) => fastDisk(s, c))),
  controllerFailover: fc
    .tuple(n, fc.integer({ min: 100, max: 15_000 }), n)
    .map(([c, ms, k]) => cmd(`controllerFailover(${c},${ms},${k})`, (s) => controllerFailover(s, c, ms, k))),
} as const;

/** A command name of `COMMANDS`. */
export type CommandName = keyof typeof COMMANDS;

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

/** A shrunk counterexample of a bug the suite found and the engine fixed, replayed on every run. */
export interface Regression {
  /** What the bug was. */
  bug: string;
  seed: number;
  path: string;
  replayPath: string;
}

/**
 * Replays fixed counterexamples of a topology property (fast-check seed, path and command replay path):
 * the bugs they once found stay fixed.
 */
export async function runRegressions(p: TopologyProperty, regressions: readonly Regression[]): Promise<void> {
  for (const r of regressions) {
    await runTopologyProperty(p, { seed: r.seed, path: r.path, replayPath: r.replayPath, label: r.bug });
  }
}

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
      const filters = [...KNOWN_ENGINE_BUGS, ...(p.knownBugs ?? [])];
      const found = sim.violations.filter((v) => !filters.some((f) => f(v) !== undefined));
      if (found.length > 0) {
        throw new Error(
          `${fixed ? `regression (${fixed.label}) ` : ""}${p.name}: ${found.length} invariant violation(s), sim seed ${simSeed}, trace ${sim.world.scheduler.digest}\n${formatViolations(found)}\nsteps:\n  ${sim.steps.join("\n  ")}`,
        );
      }
    },
  );
  const result = await fc.check(property, {
    // A replayed counterexample needs as many runs as the path's first index; the path then picks it.
    numRuns: fixed
      ? Math.max(p.numRuns * multiplier, Number(fixed.path.split(":")[0]) + 1)
      : p.numRuns * multiplier,
    seed,
    ...(path === undefined ? {} : { path, endOnFailure: true }),
  });
  if (result.failed) {
    const report = fc.defaultReportMessage(result) ?? "";
    const replayPath = /replayPath="([^"]*)"/.exec(report)?.[1];
    const replay = `FC_SEED=${result.seed} FC_PATH=${result.counterexamplePath ?? ""}${replayPath ? ` FC_REPLAY_PATH='${replayPath}'` : ""} pnpm exec vitest run ${p.file} -t '${p.name}'`;
    const cause =
      result.errorInstance instanceof Error ? result.errorInstance.message : String(result.errorInstance);
    throw new Error(`${report}\n\n${cause}\n\nreplay: ${replay}`);
  }
}
