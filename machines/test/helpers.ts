import {
  applyEvent,
  type MirrorPartitionEffect,
  type MirrorPartitionEvent,
  type MirrorPartitionSnapshot,
  recoverPartition,
} from "../src/index";

/** A fresh partition (no record: UNKNOWN). */
export function fresh(): MirrorPartitionSnapshot {
  return recoverPartition({}).snapshot;
}

/** Feeds events in order; fails loudly when one is ignored, so a scenario cannot silently stall. */
export function drive(
  snapshot: MirrorPartitionSnapshot,
  events: readonly MirrorPartitionEvent[],
): { snapshot: MirrorPartitionSnapshot; effects: MirrorPartitionEffect[][] } {
  let s = snapshot;
  const effects: MirrorPartitionEffect[][] = [];
  for (const e of events) {
    const step = applyEvent(s, e);
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

/** The event sequences that take a partition through the happy paths. */
export const COMMITTED = { type: "COMMITTED" } as const;
export const START_TO_MIRRORING: readonly MirrorPartitionEvent[] = [
  { type: "START" },
  COMMITTED,
  { type: "MIRROR_LOOP_CHECKED" },
  { type: "LME_FOUND", lme: -1 },
  { type: "TRUNCATED" },
  { type: "ISR_TRUNCATED" },
  COMMITTED,
];
export const STOP_TO_STOPPED: readonly MirrorPartitionEvent[] = [
  { type: "STOP" },
  COMMITTED,
  { type: "FETCHER_REMOVED" },
  { type: "LME_RECORDED", lme: 7 },
  { type: "EPOCH_BUMPED", leaderEpoch: 17 },
  { type: "TXNS_ABORTED" },
  { type: "PID_RESET_APPENDED" },
  COMMITTED,
];
