import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { transition } from "xstate";
import { type MirrorPartitionSnapshot, mirrorPartitionMachine } from "../src/index";
import { transitionPartition } from "../src/inert-scope";
import { fresh, type TestEvent, withEpoch } from "./helpers";

const EVENTS: readonly TestEvent[] = [
  { type: "START" },
  { type: "PAUSE" },
  { type: "RESUME" },
  { type: "STOP" },
  { type: "FAIL", message: "x", retryable: true, random: 0.5 },
  { type: "FAIL", message: "y", retryable: false, random: 0.2 },
  { type: "MIRROR_LOOP_CHECKED" },
  { type: "MIRROR_LOOP_FOUND", message: "loop" },
  { type: "LME_FOUND", lme: -1 },
  { type: "LME_FOUND", lme: 2 },
  { type: "TRUNCATED" },
  { type: "ISR_TRUNCATED" },
  { type: "EPOCH_BUMPED", leaderEpoch: 9 },
  { type: "FETCHER_REMOVED", latestMirroredEpoch: 3 },
  { type: "LME_RECORDED" },
  { type: "TXNS_ABORTED" },
  { type: "PID_RESET_APPENDED" },
  { type: "RETRY_TIMER_FIRED" },
  { type: "EFFECT_FAILED", message: "e", retryable: true, random: 0.1 },
  { type: "EPOCH_OBSERVED", localLeaderEpoch: 3, batchEpoch: 4 },
  { type: "EPOCH_OBSERVED", localLeaderEpoch: 5, batchEpoch: 1 },
  { type: "COMMITTED" },
  { type: "COMMITTED" },
  { type: "COMMITTED" },
  { type: "COMMIT_FAILED", message: "c", random: 0.3 },
  { type: "COMMIT_RETRY_TIMER_FIRED" },
  { type: "FENCED", message: "f" },
  { type: "COMMITTED", stateEpoch: 0 },
] as TestEvent[];

function plain(s: MirrorPartitionSnapshot) {
  return { status: s.status, value: s.value, context: s.context, tags: [...s.tags] };
}

describe("replayed partition transitions", () => {
  it("give exactly xstate's snapshot and actions on random event sequences", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: EVENTS.length - 1 }), { maxLength: 60 }), (picks) => {
        let s = fresh();
        for (const i of picks) {
          const e = withEpoch(s, EVENTS[i] as TestEvent);
          const [fast, fastActions] = transitionPartition(s, e);
          const [slow, slowActions] = transition(mirrorPartitionMachine, s, e);
          expect(plain(fast)).toEqual(plain(slow));
          expect(fast === s).toBe(slow === s);
          expect(fastActions.map((a) => [a.type, a.params])).toEqual(
            slowActions.map((a) => [a.type, a.params]),
          );
          s = fast;
        }
      }),
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 300) },
    );
  });
});
