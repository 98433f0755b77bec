import fc from "fast-check";
import type { TestEvent } from "./helpers";

/** A uniform draw in [0, 1), as the machines take for retry jitter. */
export const random01 = fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true });

/** A FAIL / EFFECT_FAILED payload. */
export const failure = fc.record(
  {
    message: fc.constantFrom("boom", "source topic deleted"),
    retryable: fc.boolean(),
    random: random01,
    afterProgress: fc.boolean(),
  },
  { requiredKeys: ["message", "retryable", "random"] },
);

/** A leader epoch or LME, -1 (none) included. */
export const epochArb = fc.integer({ min: -1, max: 60 });

/**
 * Every event the mirror partition machine accepts (commands, effect results, observations, commit
 * results), without its stateEpoch: tests put the current one on with `withEpoch`.
 */
export const partitionEventArb: fc.Arbitrary<TestEvent> = fc.oneof(
  { weight: 6, arbitrary: fc.constant<TestEvent>({ type: "COMMITTED" }) },
  {
    weight: 1,
    arbitrary: fc.tuple(random01, fc.boolean()).map(
      ([random, maybeAppended]): TestEvent => ({
        type: "COMMIT_FAILED",
        message: "timeout",
        random,
        maybeAppended,
      }),
    ),
  },
  { weight: 1, arbitrary: fc.constant<TestEvent>({ type: "COMMIT_RETRY_TIMER_FIRED" }) },
  { weight: 1, arbitrary: fc.constant<TestEvent>({ type: "FENCED", message: "stale epoch" }) },
  {
    weight: 4,
    arbitrary: fc.constantFrom<TestEvent>(
      { type: "START" },
      { type: "PAUSE" },
      { type: "RESUME" },
      { type: "STOP" },
    ),
  },
  {
    weight: 1,
    arbitrary: fc
      .option(fc.boolean(), { nil: undefined })
      .map((pauseRequested): TestEvent => ({ type: "RECOVER", pauseRequested })),
  },
  { weight: 1, arbitrary: failure.map((f): TestEvent => ({ type: "FAIL", ...f })) },
  { weight: 1, arbitrary: failure.map((f): TestEvent => ({ type: "EFFECT_FAILED", ...f })) },
  {
    weight: 8,
    arbitrary: fc.constantFrom<TestEvent>(
      { type: "MIRROR_LOOP_CHECKED" },
      { type: "TRUNCATED" },
      { type: "ISR_TRUNCATED" },
      { type: "LME_RECORDED" },
      { type: "TXNS_ABORTED" },
      { type: "PID_RESET_APPENDED" },
      { type: "RETRY_TIMER_FIRED" },
    ),
  },
  { weight: 1, arbitrary: fc.constant<TestEvent>({ type: "MIRROR_LOOP_FOUND", message: "loop" }) },
  { weight: 1, arbitrary: epochArb.map((lme): TestEvent => ({ type: "LME_FOUND", lme })) },
  {
    weight: 2,
    arbitrary: epochArb.map((e): TestEvent => ({ type: "FETCHER_REMOVED", latestMirroredEpoch: e })),
  },
  {
    weight: 2,
    arbitrary: fc.tuple(epochArb, epochArb).map(
      ([batchEpoch, localLeaderEpoch]): TestEvent => ({
        type: "EPOCH_OBSERVED",
        batchEpoch,
        localLeaderEpoch,
      }),
    ),
  },
  {
    weight: 2,
    arbitrary: fc
      .integer({ min: 0, max: 90 })
      .map((e): TestEvent => ({ type: "EPOCH_BUMPED", leaderEpoch: e })),
  },
);
