import { createActor } from "xstate";
import {
  applyEvent,
  type MirrorPartitionEffect,
  type MirrorPartitionEvent,
  type MirrorPartitionInput,
  type MirrorPartitionSnapshot,
  mirrorPartitionMachine,
  recoverPartition,
} from "../src/index";

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** An event as a test writes it: `stateEpoch` is filled in by `withEpoch` unless given (e.g. a stale one). */
export type TestEvent = DistributiveOmit<MirrorPartitionEvent, "stateEpoch"> & {
  readonly stateEpoch?: number;
};

const COMMIT_RESULTS = new Set(["COMMITTED", "COMMIT_FAILED", "COMMIT_RETRY_TIMER_FIRED", "FENCED"]);
const NO_EPOCH = new Set(["START", "PAUSE", "RESUME", "STOP", "FAIL", "RECOVER", "EPOCH_OBSERVED"]);

/** Puts the epoch a correct runtime would put on `e`: the pending record's for commit results, else the committed one. */
export function withEpoch(s: MirrorPartitionSnapshot, e: TestEvent): MirrorPartitionEvent {
  if (NO_EPOCH.has(e.type) || e.stateEpoch !== undefined) return e as MirrorPartitionEvent;
  const epoch = COMMIT_RESULTS.has(e.type)
    ? (s.context.pending?.record.stateEpoch ?? s.context.record.stateEpoch + 1)
    : s.context.record.stateEpoch;
  return { ...e, stateEpoch: epoch } as MirrorPartitionEvent;
}

/** A fresh partition (no record: UNKNOWN). */
export function fresh(): MirrorPartitionSnapshot {
  return recoverPartition({}).snapshot;
}

/** Feeds events in order; fails loudly when one is ignored, so a scenario cannot silently stall. */
export function drive(
  snapshot: MirrorPartitionSnapshot,
  events: readonly TestEvent[],
): { snapshot: MirrorPartitionSnapshot; effects: MirrorPartitionEffect[][] } {
  let s = snapshot;
  const effects: MirrorPartitionEffect[][] = [];
  for (const e of events) {
    const step = applyEvent(s, withEpoch(s, e));
    if (!step.changed) throw new Error(`event ${e.type} ignored in ${JSON.stringify(s.value)}`);
    s = step.snapshot;
    effects.push([...step.effects]);
  }
  return { snapshot: s, effects };
}

/** Effect names only, for compact assertions. */
export function names(effects: readonly MirrorPartitionEffect[]): string[] {
  return effects.map((e) => e.type);
}

/** The last `appendStateRecord` among steps' effects: what a runtime would have made durable. */
export function lastAppended(effects: readonly (readonly MirrorPartitionEffect[])[]) {
  const all = effects.flat().filter((e) => e.type === "appendStateRecord");
  return all.at(-1)?.params;
}

export const COMMITTED: TestEvent = { type: "COMMITTED" };
export const START_TO_MIRRORING: readonly TestEvent[] = [
  { type: "START" },
  COMMITTED,
  { type: "MIRROR_LOOP_CHECKED" },
  { type: "LME_FOUND", lme: -1 },
  { type: "TRUNCATED" },
  { type: "ISR_TRUNCATED" },
  COMMITTED,
];
export const STOP_TO_STOPPED: readonly TestEvent[] = [
  { type: "STOP" },
  COMMITTED,
  { type: "FETCHER_REMOVED", latestMirroredEpoch: 7 },
  { type: "LME_RECORDED" },
  { type: "EPOCH_BUMPED", leaderEpoch: 30 },
  { type: "TXNS_ABORTED" },
  { type: "PID_RESET_APPENDED" },
  COMMITTED,
];

/** Every named effect of the partition machine (the actions the coordinator provides). */
const EFFECT_NAMES = Object.keys(mirrorPartitionMachine.implementations.actions).filter(
  (n) => !/^(prepare|apply|defer|note|capture)/.test(n),
);

/**
 * Starts a live partition actor from `input` with recording effect implementations (as the coordinator
 * provides them with `machine.provide()`), and returns its snapshot and the effects it ran while starting.
 */
export function startRecording(input: MirrorPartitionInput): {
  snapshot: MirrorPartitionSnapshot;
  effects: MirrorPartitionEffect[];
} {
  const effects: MirrorPartitionEffect[] = [];
  const actions: Record<string, (args: unknown, params: unknown) => void> = {};
  for (const name of EFFECT_NAMES) {
    actions[name] = (_args, params) => effects.push({ type: name, params } as MirrorPartitionEffect);
  }
  const actor = createActor(mirrorPartitionMachine.provide({ actions }), { input }).start();
  const snapshot = actor.getSnapshot();
  actor.stop();
  return { snapshot, effects };
}
