import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { initialTransition, transition } from "xstate";
import {
  LIFECYCLE_STATES,
  type LifecycleState,
  type MirrorPartitionInput,
  type MirrorPartitionSnapshot,
  mirrorPartitionMachine,
  type RecoveredPartition,
} from "../src/index";
import { epochArb, partitionEventArb, random01 } from "./arbitraries";
import { withEpoch } from "./helpers";

// Fixed, printed seed: replay a failure with FC_SEED=<seed>. fast-check prints the shrunk counterexample.
const SEED = Number(process.env.FC_SEED ?? 20261201);
console.log(`pending-commit invariant: fast-check seed ${SEED}`);

const RETRY = { baseMs: 100, capMs: 5000, maxAttempts: 3 };
/** Any recovered record a coordinator may load (every lifecycle state, retry counts, previous states). */
const inputArb: fc.Arbitrary<MirrorPartitionInput> = fc
  .record({
    state: fc.constantFrom<LifecycleState>(...LIFECYCLE_STATES),
    stateEpoch: fc.integer({ min: 1, max: 5 }),
    leaderEpoch: fc.integer({ min: -1, max: 20 }),
    retryAttempt: fc.integer({ min: -1, max: 4 }),
    previousState: fc.constantFrom<LifecycleState | null>(null, ...LIFECYCLE_STATES),
    lastMirrorEpoch: epochArb,
    localLeaderEpoch: epochArb,
    pauseRequested: fc.boolean(),
    retryJitter: random01,
  })
  .map(({ localLeaderEpoch, pauseRequested, retryJitter, ...r }) => {
    const record: RecoveredPartition =
      r.state === "UNKNOWN"
        ? { ...r, stateEpoch: 0, previousState: null, retryAttempt: 0, errorMessage: null }
        : { ...r, errorMessage: r.state === "FAILED" ? "boom" : null };
    return { record, localLeaderEpoch, pauseRequested, retryJitter, retry: RETRY };
  });

/** Events with the epoch a runtime would put on them; a third carry an older one (stale, to be dropped). */
const eventsArb = fc.array(fc.tuple(partitionEventArb, fc.integer({ min: 0, max: 2 })), {
  minLength: 1,
  maxLength: 80,
  size: "max",
});

function inCommitStep(s: MirrorPartitionSnapshot): boolean {
  return s.matches("committing");
}

describe("mirror partition: a change waits for its append only in the shared commit step", () => {
  it("`pending` is set exactly while the actor is in `committing` (so no lifecycle state needs to ask)", () => {
    // Through xstate's public initialTransition/transition: numRuns 300, 1 to 80 events from any record.
    fc.assert(
      fc.property(inputArb, eventsArb, (input, events) => {
        let [s] = initialTransition(mirrorPartitionMachine, input);
        const check = (after: string) => {
          if (s.status === "done") return; // fenced: the actor ended, no handler runs again
          expect(s.context.pending !== null, `${after}: in ${JSON.stringify(s.value)}`).toBe(inCommitStep(s));
        };
        check("recovery");
        for (const [te, n] of events) {
          if (s.status === "done") break;
          const e = withEpoch(s, te);
          const event = n === 0 && "stateEpoch" in e ? { ...e, stateEpoch: e.stateEpoch - 1 } : e;
          [s] = transition(mirrorPartitionMachine, s, event);
          check(event.type);
        }
      }),
      { seed: SEED, numRuns: 300 },
    );
  });
});
