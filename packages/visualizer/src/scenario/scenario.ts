import { describePartitionLog } from "@cluster-mirror/cluster";
import {
  activePassive,
  advance,
  chain,
  crash,
  cutLink,
  FAILOVER_MODES,
  type FailoverMode,
  failback,
  failover,
  fanIn,
  fanOut,
  healLink,
  mixed,
  pause,
  produce,
  restart,
  resume,
  Simulation,
  settleAndCheck,
  type TopologySpec,
} from "@cluster-mirror/sim";

/** The deterministic topologies a scenario can run on (`packages/sim`'s builders). */
export const TOPOLOGIES = {
  "active-passive": activePassive,
  "fan-out": fanOut,
  "fan-in": fanIn,
  "chain-3": () => chain(3),
  "chain-5": () => chain(5),
  mixed,
} as const satisfies Record<string, () => TopologySpec>;

/** Name of one of {@link TOPOLOGIES}. */
export type TopologyName = keyof typeof TOPOLOGIES;

/**
 * One operation of a scenario, in the simulator's vocabulary: `target`/`choice`/`node`/`edge` pick from the
 * simulation's lists (writable targets, mirrored edge topics, clusters, edges) modulo their length, as the
 * property tests do, so any numbers make a valid run.
 */
export type ScenarioOp =
  | { readonly op: "produce"; readonly target: number; readonly partition: number; readonly count: number }
  | { readonly op: "failover"; readonly choice: number; readonly mode?: FailoverMode }
  | { readonly op: "failback"; readonly choice: number }
  | { readonly op: "pause"; readonly choice: number }
  | { readonly op: "resume"; readonly choice: number }
  | { readonly op: "advance"; readonly ms: number }
  | { readonly op: "crash"; readonly node: number; readonly broker: number }
  | { readonly op: "restart"; readonly node: number }
  | { readonly op: "cut-link"; readonly edge: number }
  | { readonly op: "heal-link"; readonly edge: number }
  | { readonly op: "settle" };

/** A whole run: topology, seed and operations. The URL of the scenario runner holds exactly this. */
export interface ScenarioSpec {
  readonly topology: TopologyName;
  readonly seed: number;
  /** Brokers per cluster (default 3). */
  readonly brokers?: number;
  readonly ops: readonly ScenarioOp[];
}

/** What a run ends with: every mirror partition's state, every partition's log end offset, the checks. */
export interface ScenarioResult {
  readonly partitions: readonly {
    cluster: string;
    mirror: string;
    topic: string;
    partition: number;
    state: string;
    stateEpoch: number;
  }[];
  readonly offsets: readonly { cluster: string; topic: string; partition: number; logEndOffset: string }[];
  /** Invariant violations found by the checks of `settle` operations (empty when every check passed). */
  readonly violations: readonly { invariant: string; message: string }[];
  /** The simulator's step log, each step with its virtual time. */
  readonly steps: readonly string[];
  /** Virtual milliseconds the run took. */
  readonly virtualMs: number;
}

/** Thrown for a scenario that names an unknown topology or operation (says what is allowed). */
export class InvalidScenarioError extends Error {
  override readonly name = "InvalidScenarioError";
}

/** Largest `count` of a `produce` operation: the page runs the simulator in its own thread. */
export const MAX_PRODUCE_COUNT = 1_000;
/** Largest `ms` of an `advance` operation (ten virtual minutes): every timer of every broker fires meanwhile. */
export const MAX_ADVANCE_MS = 600_000;
/** Largest `brokers` per cluster (the form's limit). */
export const MAX_BROKERS = 5;

/** Each operation's numeric fields: a choice is any integer (taken modulo its list), the rest are bounded. */
const OP_FIELDS: Readonly<Record<ScenarioOp["op"], Readonly<Record<string, readonly [number, number]>>>> = {
  produce: {
    target: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
    partition: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
    count: [1, MAX_PRODUCE_COUNT],
  },
  failover: { choice: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER] },
  failback: { choice: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER] },
  pause: { choice: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER] },
  resume: { choice: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER] },
  advance: { ms: [0, MAX_ADVANCE_MS] },
  crash: {
    node: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
    broker: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
  },
  restart: { node: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER] },
  "cut-link": { edge: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER] },
  "heal-link": { edge: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER] },
  settle: {},
};

function checkInteger(where: string, value: unknown, [min, max]: readonly [number, number]): void {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < min || value > max) {
    const range =
      min === Number.MIN_SAFE_INTEGER
        ? "an integer"
        : `an integer from ${min} to ${max.toLocaleString("en")}`;
    throw new InvalidScenarioError(`${where} must be ${range}, got ${JSON.stringify(value) ?? "nothing"}`);
  }
}

/** Checks a parsed scenario (from a URL or a file); throws {@link InvalidScenarioError} saying what is wrong. */
export function parseScenario(value: unknown): ScenarioSpec {
  const v = value as Partial<ScenarioSpec> | null;
  if (v === null || typeof v !== "object" || Array.isArray(v))
    throw new InvalidScenarioError("a scenario is a JSON object {topology, seed, ops}");
  if (typeof v.topology !== "string" || !Object.hasOwn(TOPOLOGIES, v.topology)) {
    throw new InvalidScenarioError(
      `unknown topology '${String(v.topology)}'; use one of ${Object.keys(TOPOLOGIES).join(", ")}`,
    );
  }
  if (!Number.isSafeInteger(v.seed))
    throw new InvalidScenarioError(`seed must be an integer, got ${String(v.seed)}`);
  if (v.brokers !== undefined) checkInteger("brokers", v.brokers, [1, MAX_BROKERS]);
  if (!Array.isArray(v.ops)) throw new InvalidScenarioError("ops must be an array of operations");
  const known = Object.keys(OP_FIELDS);
  for (const [i, op] of (v.ops as unknown[]).entries()) {
    const name = (op as { op?: unknown } | null)?.op;
    if (typeof name !== "string" || !Object.hasOwn(OP_FIELDS, name)) {
      throw new InvalidScenarioError(
        `ops[${i}]: unknown operation '${String(name)}'; use one of ${known.join(", ")}`,
      );
    }
    const fields = OP_FIELDS[name as ScenarioOp["op"]];
    for (const [field, range] of Object.entries(fields)) {
      checkInteger(`ops[${i}] (${name}).${field}`, (op as Record<string, unknown>)[field], range);
    }
    const mode = (op as { mode?: unknown }).mode;
    if (name === "failover" && mode !== undefined && !FAILOVER_MODES.includes(mode as FailoverMode)) {
      throw new InvalidScenarioError(`ops[${i}]: failover mode must be one of ${FAILOVER_MODES.join(", ")}`);
    }
  }
  return {
    topology: v.topology as TopologyName,
    seed: v.seed as number,
    ...(v.brokers !== undefined ? { brokers: v.brokers } : {}),
    ops: v.ops,
  };
}

/** The scenario runner's URL fragment for `spec` (`#` + URI-encoded JSON): paste it to reproduce the run. */
export function scenarioHash(spec: ScenarioSpec): string {
  return `#${encodeURIComponent(JSON.stringify(spec))}`;
}

/** The scenario in a URL fragment made by {@link scenarioHash}. */
export function scenarioFromHash(hash: string): ScenarioSpec {
  let json: unknown;
  try {
    json = JSON.parse(decodeURIComponent(hash.replace(/^#/, "")));
  } catch (error) {
    throw new InvalidScenarioError(
      `the URL fragment is not URI-encoded JSON (${error instanceof Error ? error.message : String(error)}); open a recorded scenario or press Run to make one`,
    );
  }
  return parseScenario(json);
}

/** Progress of a run, for a live view: after setup and after each operation. */
export interface ScenarioProgress {
  readonly sim: Simulation;
  /** Index of the operation just done; -1 after setup. */
  readonly index: number;
}

/**
 * Runs a scenario on the deterministic simulator: builds the topology from the seed (every mirror
 * MIRRORING), applies the operations in order on virtual time, and reads the final state. The same spec
 * gives the same result in Node and in a browser.
 */
export async function runScenario(
  spec: ScenarioSpec,
  onProgress?: (p: ScenarioProgress) => void | Promise<void>,
): Promise<ScenarioResult> {
  const s = parseScenario(spec);
  const sim = await Simulation.create(
    TOPOLOGIES[s.topology](),
    s.seed,
    s.brokers ? { brokers: s.brokers } : {},
  );
  const start = 1_700_000_000_000;
  await onProgress?.({ sim, index: -1 });
  const violations: { invariant: string; message: string }[] = [];
  for (const [index, op] of s.ops.entries()) {
    await apply(sim, op, violations);
    await onProgress?.({ sim, index });
  }
  return { ...finalState(sim), violations, steps: [...sim.steps], virtualMs: sim.world.clock.now() - start };
}

async function apply(
  sim: Simulation,
  op: ScenarioOp,
  violations: { invariant: string; message: string }[],
): Promise<void> {
  switch (op.op) {
    case "produce":
      return produce(sim, op.target, op.partition, op.count);
    case "failover":
      return failover(sim, op.choice, op.mode ?? "planned");
    case "failback":
      return failback(sim, op.choice);
    case "pause":
      return pause(sim, op.choice);
    case "resume":
      return resume(sim, op.choice);
    case "advance":
      return advance(sim, op.ms);
    case "crash":
      return crash(sim, op.node, op.broker);
    case "restart":
      return restart(sim, op.node);
    case "cut-link":
      return cutLink(sim, op.edge);
    case "heal-link":
      return healLink(sim, op.edge);
    case "settle":
      for (const v of await settleAndCheck(sim))
        violations.push({ invariant: v.invariant, message: v.message });
  }
}

/** Every mirror partition's committed state and every user partition's log end offset, in a stable order. */
export function finalState(sim: Simulation): Pick<ScenarioResult, "partitions" | "offsets"> {
  const partitions: {
    cluster: string;
    mirror: string;
    topic: string;
    partition: number;
    state: string;
    stateEpoch: number;
  }[] = [];
  const offsets: { cluster: string; topic: string; partition: number; logEndOffset: string }[] = [];
  for (const name of sim.world.spec.clusters) {
    const node = sim.node(name);
    for (const v of node.mirroring.coordinators.describe()) {
      partitions.push({
        cluster: name,
        mirror: v.key.mirror,
        topic: v.key.topic,
        partition: v.key.partition,
        state: v.state,
        stateEpoch: v.stateEpoch,
      });
    }
    const topics = [...node.cluster.controller.image.topicsById.values()].filter(
      (t) => !t.name.startsWith("__"),
    );
    for (const t of topics) {
      for (let p = 0; p < t.partitions.length; p++) {
        let end = "unavailable";
        try {
          end = String(describePartitionLog(node.cluster, t.name, p, { maxBatches: 0 }).logEndOffset);
        } catch {
          // no running leader
        }
        offsets.push({ cluster: name, topic: t.name, partition: p, logEndOffset: end });
      }
    }
  }
  const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  partitions.sort(
    (a, b) =>
      cmp(a.cluster, b.cluster) ||
      cmp(a.mirror, b.mirror) ||
      cmp(a.topic, b.topic) ||
      a.partition - b.partition,
  );
  offsets.sort((a, b) => cmp(a.cluster, b.cluster) || cmp(a.topic, b.topic) || a.partition - b.partition);
  return { partitions, offsets };
}
