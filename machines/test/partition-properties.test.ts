import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  applyEvent,
  COMMAND_TARGETS,
  canTransition,
  InvalidMirrorStateError,
  type LifecycleState,
  lifecycleStateOf,
  type MirrorPartitionCommand,
  type MirrorPartitionEffect,
  type MirrorPartitionEvent,
  type MirrorPartitionSnapshot,
  pendingEffectsOf,
  recoverPartition,
  rehydratePartition,
  sendCommand,
  toStateRecord,
  validFrom,
} from "../src/index";
import { fresh } from "./helpers";

// Fixed, printed seed: replay a failure with FC_SEED=<seed>. fast-check prints the shrunk counterexample.
const SEED = Number(process.env.FC_SEED ?? 20261129);
console.log(`partition properties: fast-check seed ${SEED}`);

const RETRY = { baseMs: 100, capMs: 5000, maxAttempts: 3 };
const COMMANDS = new Set(Object.keys(COMMAND_TARGETS));

const random01 = fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true });
const failure = fc.record({
  message: fc.constantFrom("boom", "source topic deleted"),
  retryable: fc.boolean(),
  random: random01,
});

/** Commands, effect results and commit results; COMMITTED is frequent so walks get somewhere. */
const eventArb: fc.Arbitrary<MirrorPartitionEvent> = fc.oneof(
  { weight: 6, arbitrary: fc.constant({ type: "COMMITTED" } as const) },
  { weight: 1, arbitrary: fc.constant({ type: "COMMIT_FAILED", message: "timeout" } as const) },
  { weight: 1, arbitrary: fc.constant({ type: "FENCED", message: "stale epoch" } as const) },
  {
    weight: 4,
    arbitrary: fc.constantFrom<MirrorPartitionEvent>(
      { type: "START" },
      { type: "PAUSE" },
      { type: "RESUME" },
      { type: "STOP" },
    ),
  },
  { weight: 1, arbitrary: failure.map((f) => ({ type: "FAIL", ...f }) as const) },
  { weight: 1, arbitrary: failure.map((f) => ({ type: "EFFECT_FAILED", ...f }) as const) },
  {
    weight: 8,
    arbitrary: fc.constantFrom<MirrorPartitionEvent>(
      { type: "MIRROR_LOOP_CHECKED" },
      { type: "TRUNCATED" },
      { type: "ISR_TRUNCATED" },
      { type: "FETCHER_REMOVED" },
      { type: "TXNS_ABORTED" },
      { type: "PID_RESET_APPENDED" },
      { type: "RETRY_TIMER_FIRED" },
    ),
  },
  {
    weight: 1,
    arbitrary: fc.integer({ min: -1, max: 20 }).map((lme) => ({ type: "LME_FOUND", lme }) as const),
  },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 0, max: 20 }).map((lme) => ({ type: "LME_RECORDED", lme }) as const),
  },
  {
    weight: 1,
    arbitrary: fc
      .integer({ min: 0, max: 60 })
      .map((e) => ({ type: "EPOCH_OBSERVED", batchEpoch: e }) as const),
  },
  {
    weight: 1,
    arbitrary: fc
      .integer({ min: 0, max: 60 })
      .map((e) => ({ type: "EPOCH_BUMPED", leaderEpoch: e }) as const),
  },
);

// Spec §4 "Triggers": the states each command is accepted in (RESUME only from PAUSED: PREPARING and
// EPOCH_FENCING reach MIRRORING through their own steps, not through a command).
const ACCEPTED_IN: Record<MirrorPartitionCommand["type"], readonly LifecycleState[]> = {
  START: ["UNKNOWN", "STOPPED", "FAILED"],
  PAUSE: ["MIRRORING"],
  RESUME: ["PAUSED"],
  STOP: ["PREPARING", "MIRRORING", "EPOCH_FENCING", "PAUSING", "PAUSED", "FAILED"],
  FAIL: [
    "UNKNOWN",
    "PREPARING",
    "MIRRORING",
    "EPOCH_FENCING",
    "PAUSING",
    "PAUSED",
    "STOPPING",
    "STOPPED",
    "FAILED",
  ],
};

function isCommand(e: MirrorPartitionEvent): e is MirrorPartitionCommand {
  return COMMANDS.has(e.type);
}

function freeze(s: MirrorPartitionSnapshot): string {
  return JSON.stringify({ value: s.value, context: s.context });
}

/** Feeds one event the way a runtime would: commands through sendCommand, the rest through applyEvent. */
function step(
  s: MirrorPartitionSnapshot,
  e: MirrorPartitionEvent,
): { snapshot: MirrorPartitionSnapshot; effects: readonly MirrorPartitionEffect[]; refused: boolean } {
  if (!isCommand(e)) return { ...applyEvent(s, e), refused: false };
  const before = freeze(s);
  try {
    return { ...sendCommand(s, e), refused: false };
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidMirrorStateError);
    expect(err).toMatchObject({ state: lifecycleStateOf(s), command: e.type });
    expect(freeze(s)).toBe(before);
    return { snapshot: s, effects: [], refused: true };
  }
}

function recoverFrom(s: MirrorPartitionSnapshot) {
  return recoverPartition({
    record: { ...toStateRecord(s), lastMirrorEpoch: s.context.lastMirrorEpoch },
    retryJitter: s.context.retryJitter,
    retry: RETRY,
  });
}

describe("mirror partition properties", () => {
  it("only valid-from transitions happen, only on COMMITTED, and refused commands change nothing", () => {
    // numRuns 1000, sequences of up to 80 events.
    fc.assert(
      fc.property(fc.array(eventArb, { maxLength: 80 }), (events) => {
        let s = recoverPartition({ retry: RETRY }).snapshot;
        for (const e of events) {
          const from = lifecycleStateOf(s);
          const epoch = s.context.record.stateEpoch;
          const r = step(s, e);
          if (isCommand(e)) {
            // Refused exactly when the command is not accepted in this state or another change is pending.
            const acceptable = ACCEPTED_IN[e.type].includes(from) && s.context.pending === null;
            expect(r.refused, `${e.type} in ${from}`).toBe(!acceptable);
            if (!r.refused) expect(canTransition(from, COMMAND_TARGETS[e.type])).toBe(true);
          }
          if (r.refused) {
            expect(r.snapshot).toBe(s);
            continue;
          }
          const to = lifecycleStateOf(r.snapshot);
          const committed = r.snapshot.context.record.stateEpoch !== epoch;
          if (committed) {
            expect(e.type).toBe("COMMITTED");
            expect(r.snapshot.context.record.stateEpoch).toBe(epoch + 1);
            expect(canTransition(from, to), `${from} -> ${to}`).toBe(true);
          } else {
            expect(to).toBe(from);
          }
          // Effects never start before the commit: a step that asks for an append asks for nothing else
          // (leaving FAILED's backoff cancels its own timer, which is not an effect of the new state).
          if (r.effects.some((x) => x.type === "appendStateRecord")) {
            expect(
              r.effects.filter((x) => x.type !== "appendStateRecord" && x.type !== "cancelRetryTimer"),
            ).toEqual([]);
          }
          s = r.snapshot;
        }
      }),
      { seed: SEED, numRuns: 1000 },
    );
  });

  it("every pair validFrom allows is reachable (exhaustive search over the chart)", () => {
    const reached = new Set<string>();
    const seen = new Set<string>();
    const key = (s: MirrorPartitionSnapshot) =>
      `${JSON.stringify(s.value)}|${s.context.pending?.to}|${(s.context.pending?.record.retryAttempt ?? 0) < 0}|${s.context.record.retryAttempt < 0}|${s.context.record.previousState === "STOPPING"}`;
    const alphabet: MirrorPartitionEvent[] = [
      { type: "START" },
      { type: "PAUSE" },
      { type: "RESUME" },
      { type: "STOP" },
      { type: "FAIL", message: "x", retryable: true, random: 0.5 },
      { type: "FAIL", message: "x", retryable: false, random: 0.5 },
      { type: "EFFECT_FAILED", message: "x", retryable: true, random: 0.5 },
      { type: "COMMITTED" },
      { type: "COMMIT_FAILED", message: "x" },
      { type: "MIRROR_LOOP_CHECKED" },
      { type: "LME_FOUND", lme: -1 },
      { type: "LME_FOUND", lme: 3 },
      { type: "TRUNCATED" },
      { type: "ISR_TRUNCATED" },
      { type: "EPOCH_OBSERVED", batchEpoch: 50 },
      { type: "EPOCH_BUMPED", leaderEpoch: 60 },
      { type: "FETCHER_REMOVED" },
      { type: "LME_RECORDED", lme: 3 },
      { type: "TXNS_ABORTED" },
      { type: "PID_RESET_APPENDED" },
      { type: "RETRY_TIMER_FIRED" },
    ];
    const start = fresh();
    const queue = [start];
    seen.add(key(start));
    while (queue.length > 0) {
      const s = queue.shift() as MirrorPartitionSnapshot;
      for (const e of alphabet) {
        const next = applyEvent(s, e).snapshot;
        if (next === s) continue;
        if (e.type === "COMMITTED") reached.add(`${lifecycleStateOf(s)}->${lifecycleStateOf(next)}`);
        const k = key(next);
        if (!seen.has(k)) {
          seen.add(k);
          queue.push(next);
        }
      }
    }
    const allowed: string[] = [];
    for (const [to, froms] of Object.entries(validFrom) as [LifecycleState, (LifecycleState | null)[]][]) {
      for (const from of froms) allowed.push(`${from ?? lifecycleStateOf(start)}->${to}`);
    }
    for (const pair of allowed) expect(reached, pair).toContain(pair);
    expect([...reached].filter((p) => !allowed.includes(p))).toEqual([]);
  });

  it("persist then recover gives the same lifecycle state, record and pending effects", () => {
    // numRuns 600, sequences of up to 60 events; checked after every event with no commit pending.
    fc.assert(
      fc.property(fc.array(eventArb, { maxLength: 60 }), (events) => {
        let s = recoverPartition({ retry: RETRY }).snapshot;
        for (const e of events) {
          const epoch = s.context.record.stateEpoch;
          const r = step(s, e);
          s = r.snapshot;
          if (s.context.pending !== null) continue;
          const recovered = recoverFrom(s);
          expect(lifecycleStateOf(recovered.snapshot)).toBe(lifecycleStateOf(s));
          expect(toStateRecord(recovered.snapshot)).toEqual(toStateRecord(s));
          // The bulk fast path gives the same snapshot and effects as a pass through `recovering`.
          const fast = rehydratePartition({
            record: { ...toStateRecord(s), lastMirrorEpoch: s.context.lastMirrorEpoch },
            retryJitter: s.context.retryJitter,
            retry: RETRY,
          });
          expect(fast.snapshot.value).toEqual(recovered.snapshot.value);
          expect(fast.snapshot.context).toEqual(recovered.snapshot.context);
          expect(fast.effects).toEqual(recovered.effects);
          // What recovery runs is exactly what the recovered state owns...
          expect(recovered.effects).toEqual(pendingEffectsOf(recovered.snapshot));
          // ...and, right after a commit, exactly what the live partition owns.
          if (s.context.record.stateEpoch !== epoch) {
            expect(recovered.effects).toEqual(pendingEffectsOf(s));
          }
        }
      }),
      { seed: SEED, numRuns: 600 },
    );
  });

  it("the same inputs give the same outputs (no hidden clock or randomness)", () => {
    // numRuns 200, sequences of up to 60 events, each run twice from scratch.
    fc.assert(
      fc.property(fc.array(eventArb, { maxLength: 60 }), (events) => {
        const run = () => {
          let s = recoverPartition({ retry: RETRY }).snapshot;
          const out: unknown[] = [];
          for (const e of events) {
            const r = step(s, e);
            s = r.snapshot;
            out.push(r.effects, toStateRecord(s), s.value);
          }
          return JSON.stringify(out);
        };
        expect(run()).toBe(run());
      }),
      { seed: SEED, numRuns: 200 },
    );
  });
});
