import { describe, expect, it } from "vitest";
import { createActor } from "xstate";
import {
  applyEvent,
  InvalidMirrorStateError,
  lifecycleStateOf,
  type MirrorPartitionSnapshot,
  mirrorPartitionMachine,
  pendingEffectsOf,
  recoverPartition,
  sendCommand,
  toStateRecord,
} from "../src/index";
import {
  COMMITTED,
  drive,
  fresh,
  lastAppended,
  names,
  START_TO_MIRRORING,
  STOP_TO_STOPPED,
  type TestEvent,
  withEpoch,
} from "./helpers";

function mirroring(localLeaderEpoch = 20): MirrorPartitionSnapshot {
  const s = drive(fresh(), START_TO_MIRRORING).snapshot;
  return drive(s, [{ type: "EPOCH_OBSERVED", batchEpoch: 0, localLeaderEpoch }]).snapshot;
}

const fail = (retryable: boolean, random = 0.5): TestEvent => ({
  type: "EFFECT_FAILED",
  message: "broker down",
  retryable,
  random,
});

describe("start: UNKNOWN -> PREPARING -> MIRRORING", () => {
  it("commits each change before its effects and walks PREPARING's steps in order", () => {
    const { snapshot, effects } = drive(fresh(), START_TO_MIRRORING);
    expect(effects.map(names)).toEqual([
      ["appendStateRecord"], // START: nothing runs until the record is appended
      ["markReadOnly", "checkMirrorLoop"],
      ["lookupLastMirrorEpoch"],
      ["truncateFully"], // LME -1: a plain Kafka source
      ["clearLastMirrorEpoch", "awaitIsrTruncated"], // the log is a copy of the source from here on
      ["appendStateRecord"],
      ["addFetcher", "markReadOnly"],
    ]);
    expect(effects[0]?.[0]).toEqual({
      type: "appendStateRecord",
      params: {
        state: "PREPARING",
        leaderEpoch: -1,
        stateEpoch: 1,
        errorMessage: null,
        retryAttempt: 0,
        previousState: "UNKNOWN",
      },
    });
    expect(effects[1]?.[1]).toEqual({ type: "checkMirrorLoop", params: { stateEpoch: 1 } });
    expect(lifecycleStateOf(snapshot)).toBe("MIRRORING");
    expect(toStateRecord(snapshot)).toMatchObject({
      state: "MIRRORING",
      stateEpoch: 2,
      previousState: "PREPARING",
    });
  });

  it("truncates to the source's LME when it knows one (failback), from context", () => {
    const { snapshot, effects } = drive(fresh(), [
      { type: "START" },
      COMMITTED,
      { type: "MIRROR_LOOP_CHECKED" },
      { type: "LME_FOUND", lme: 5 },
    ]);
    expect(effects.at(-1)).toEqual([{ type: "truncateToEpoch", params: { stateEpoch: 1, lme: 5 } }]);
    expect(pendingEffectsOf(snapshot).at(-1)).toEqual({
      type: "truncateToEpoch",
      params: { stateEpoch: 1, lme: 5 },
    });
  });

  it("a re-add after a failover on this mirror truncates to its own LME when the source knows none", () => {
    // Failed over from MIRRORING: LME 7 captured. The source never failed the topic over (it answers -1),
    // but the log up to the end of epoch 7 is a copy of the source's: keep it, drop the markers and the
    // local writes after it, and let fetch divergence trim the rest (no full re-copy).
    const stopped = drive(mirroring(), STOP_TO_STOPPED).snapshot;
    expect(stopped.context.lastMirrorEpoch).toBe(7);
    const { effects } = drive(stopped, [
      { type: "START" },
      COMMITTED,
      { type: "MIRROR_LOOP_CHECKED" },
      { type: "LME_FOUND", lme: -1 },
    ]);
    expect(effects.at(-1)).toEqual([{ type: "truncateToEpoch", params: { stateEpoch: 5, lme: 7 } }]);
    // Both known: the later failover's wins, and every failover bumps the epoch above the LME it records.
    // The source failed over after mirroring this log (a failback): its LME is the higher one.
    const failback = (sourceLme: number) =>
      drive(stopped, [
        { type: "START" },
        COMMITTED,
        { type: "MIRROR_LOOP_CHECKED" },
        { type: "LME_FOUND", lme: sourceLme },
      ]).effects.at(-1);
    expect(failback(9)).toEqual([{ type: "truncateToEpoch", params: { stateEpoch: 5, lme: 9 } }]);
    // Soak failback FC_SEED=16 x100: this partition mirrored the source after the source's failover (LME 3),
    // then failed over itself (LME 7). Cutting at the end of epoch 3 removed what it had mirrored since.
    expect(failback(3)).toEqual([{ type: "truncateToEpoch", params: { stateEpoch: 5, lme: 7 } }]);
  });

  it("a mirror loop fails the partition, non-retryable", () => {
    const { snapshot } = drive(fresh(), [
      { type: "START" },
      COMMITTED,
      { type: "MIRROR_LOOP_FOUND", message: "mirror loop: src mirrors dst" },
      COMMITTED,
    ]);
    expect(toStateRecord(snapshot)).toMatchObject({
      state: "FAILED",
      retryAttempt: -1,
      previousState: "PREPARING",
    });
  });
});

describe("Critical: stale results are dropped", () => {
  it("an EPOCH_BUMPED from an older stateEpoch or below the requested minimum is ignored", () => {
    const s = mirroring(20);
    const fenced = drive(s, [{ type: "EPOCH_OBSERVED", batchEpoch: 25, localLeaderEpoch: 20 }, COMMITTED]);
    expect(fenced.effects[1]).toContainEqual({
      type: "bumpLeaderEpoch",
      params: { stateEpoch: 3, minLeaderEpoch: 35 },
    });
    const f = fenced.snapshot;
    expect(applyEvent(f, { type: "EPOCH_BUMPED", stateEpoch: 2, leaderEpoch: 40 }).changed).toBe(false);
    expect(applyEvent(f, { type: "EPOCH_BUMPED", stateEpoch: 3, leaderEpoch: 30 }).changed).toBe(false);
    const back = drive(f, [{ type: "EPOCH_BUMPED", leaderEpoch: 35 }, COMMITTED]);
    expect(names(back.effects[1] ?? [])).toEqual(["releaseAppends", "markReadOnly"]); // no second addFetcher
    expect(lifecycleStateOf(back.snapshot)).toBe("MIRRORING");
    expect(back.snapshot.context.localLeaderEpoch).toBe(35);
    expect(toStateRecord(back.snapshot).leaderEpoch).toBe(25); // the highest mirrored batch epoch
  });

  it("a COMMITTED for another record is ignored", () => {
    const pending = drive(mirroring(), [{ type: "PAUSE" }]).snapshot;
    expect(applyEvent(pending, { type: "COMMITTED", stateEpoch: 99 }).changed).toBe(false);
  });
});

describe("Critical: leaving a state cancels what it started", () => {
  it("STOP during truncation cancels it", () => {
    const s = drive(fresh(), [
      { type: "START" },
      COMMITTED,
      { type: "MIRROR_LOOP_CHECKED" },
      { type: "LME_FOUND", lme: -1 },
    ]);
    const stop = applyEvent(s.snapshot, { type: "STOP" });
    expect(names(stop.effects)).toEqual(["cancelTruncation", "appendStateRecord"]);
    expect(stop.effects[0]).toEqual({ type: "cancelTruncation", params: { stateEpoch: 1 } });
  });

  it("EPOCH_FENCING holds appends on entry and releases them when it leaves", () => {
    const f = drive(mirroring(20), [
      { type: "EPOCH_OBSERVED", batchEpoch: 30, localLeaderEpoch: 20 },
      COMMITTED,
    ]);
    expect(names(f.effects[1] ?? [])).toEqual(["markReadOnly", "holdAppends", "bumpLeaderEpoch"]);
    const stopped = drive(f.snapshot, [{ type: "STOP" }, COMMITTED]);
    expect(names(stopped.effects[1] ?? [])).toEqual(["releaseAppends", "markReadOnly", "removeFetcher"]);
  });
});

describe("Critical: FAILED retries go to the right place", () => {
  it("a failure in STOPPED retries through STOPPING (never PREPARING), writes no marker, ends STOPPED", () => {
    const stopped = drive(mirroring(), STOP_TO_STOPPED).snapshot;
    const failed = drive(stopped, [{ type: "FAIL", message: "x", retryable: true, random: 0.5 }, COMMITTED]);
    const retry = drive(failed.snapshot, [{ type: "RETRY_TIMER_FIRED" }, COMMITTED]);
    expect(lifecycleStateOf(retry.snapshot)).toBe("STOPPING");
    // STOPPED already closed the mirrored producer state; local producers wrote since: no ABORT, no PID reset.
    const again = drive(retry.snapshot, [
      { type: "FETCHER_REMOVED", latestMirroredEpoch: 30 },
      { type: "LME_RECORDED" },
      { type: "EPOCH_BUMPED", leaderEpoch: 40 }, // the LME (7, reused) and the local epoch (30), plus 10
      { type: "TXNS_ABORTED" },
      COMMITTED,
    ]);
    const types = again.effects.flat().map((e) => e.type);
    expect(types).not.toContain("abortOpenTransactions");
    // Only transactions no transaction coordinator here will end get an ABORT marker.
    expect(types).toContain("abortHangingTransactions");
    expect(types).not.toContain("appendPidReset");
    expect(again.snapshot.context.lastMirrorEpoch).toBe(7);
    expect(lifecycleStateOf(again.snapshot)).toBe("STOPPED");
  });

  it("a failure during failover retries STOPPING", () => {
    const s = drive(mirroring(), [
      { type: "STOP" },
      COMMITTED,
      fail(true, 0),
      COMMITTED,
      { type: "RETRY_TIMER_FIRED" },
      COMMITTED,
    ]);
    expect(lifecycleStateOf(s.snapshot)).toBe("STOPPING");
  });

  it("a retry of a PAUSED (or PAUSING) partition goes straight back to PAUSED: no truncation, no fetcher", () => {
    const paused = drive(mirroring(), [
      { type: "PAUSE" },
      COMMITTED,
      { type: "FETCHER_REMOVED", latestMirroredEpoch: 0 },
      COMMITTED,
    ]);
    const failed = drive(paused.snapshot, [
      { type: "FAIL", message: "x", retryable: true, random: 0.1 },
      COMMITTED,
    ]);
    const back = drive(failed.snapshot, [{ type: "RETRY_TIMER_FIRED" }, COMMITTED]);
    expect(lifecycleStateOf(back.snapshot)).toBe("PAUSED");
    expect(toStateRecord(back.snapshot)).toMatchObject({ previousState: "FAILED", retryAttempt: 1 });
    expect(back.effects.flat().map((e) => e.type)).toEqual(["appendStateRecord", "markReadOnly"]);
    expect(() => sendCommand(back.snapshot, { type: "START" })).toThrow(InvalidMirrorStateError);
    expect(names(drive(back.snapshot, [{ type: "RESUME" }, COMMITTED]).effects[1] ?? [])).toContain(
      "addFetcher",
    );

    const pausing = drive(mirroring(), [{ type: "PAUSE" }, COMMITTED, fail(true), COMMITTED]);
    expect(toStateRecord(pausing.snapshot).previousState).toBe("PAUSING");
    const end = drive(pausing.snapshot, [{ type: "RETRY_TIMER_FIRED" }, COMMITTED]);
    expect(lifecycleStateOf(end.snapshot)).toBe("PAUSED");
    expect(end.effects.flat().map((e) => e.type)).not.toContain("addFetcher");
  });

  // Soak faults FC_SEED=506 (disk-full): b's full disk failed the PAUSING append, then the fetcher's append
  // failed the partition while that append waited for its retry. FAILED committed in its place (previousState
  // MIRRORING, the committed state), the PAUSE command was answered by that commit, and the retry resumed
  // MIRRORING with a fetcher: the topic paused only at the metadata manager's refresh, 21 s later.
  it("a failure that replaces a PAUSING change still waiting for its append keeps the pause: the retry ends PAUSED", () => {
    const commitFailed: TestEvent = { type: "COMMIT_FAILED", message: "KAFKA_STORAGE_ERROR", random: 0.5 };
    // The failure while the append waits for its retry (committed at once), and while it is in flight
    // (deferred, committed when the append fails).
    for (const events of [
      [{ type: "PAUSE" }, commitFailed, fail(true)],
      [{ type: "PAUSE" }, fail(true), commitFailed],
    ] satisfies TestEvent[][]) {
      const failed = drive(mirroring(), [...events, COMMITTED]);
      expect(lifecycleStateOf(failed.snapshot)).toBe("FAILED");
      expect(toStateRecord(failed.snapshot).previousState).toBe("MIRRORING");
      const retry = drive(failed.snapshot, [{ type: "RETRY_TIMER_FIRED" }, COMMITTED]);
      // MIRRORING commits (the record the retry appended) and PAUSING is asked for at once, with no fetcher.
      expect(retry.snapshot.context.pending?.to).toBe("PAUSING");
      const end = drive(retry.snapshot, [
        COMMITTED,
        { type: "FETCHER_REMOVED", latestMirroredEpoch: 0 },
        COMMITTED,
      ]);
      expect(lifecycleStateOf(end.snapshot)).toBe("PAUSED");
      expect([...retry.effects, ...end.effects].flat().map((e) => e.type)).not.toContain("addFetcher");
    }
  });

  // The same gap for a resume: the failure replaced the MIRRORING change of a RESUME still waiting for its
  // append, the FAILED record's previousState was the committed PAUSED, and the retry went back to PAUSED:
  // only the metadata manager's next refresh (up to 30 s) resumed the topic.
  it("a failure that replaces a RESUME still waiting for its append keeps the resume: the retry ends MIRRORING", () => {
    const commitFailed: TestEvent = { type: "COMMIT_FAILED", message: "KAFKA_STORAGE_ERROR", random: 0.5 };
    const paused = drive(mirroring(), [
      { type: "PAUSE" },
      COMMITTED,
      { type: "FETCHER_REMOVED", latestMirroredEpoch: 0 },
      COMMITTED,
    ]).snapshot;
    for (const events of [
      [{ type: "RESUME" }, commitFailed, fail(true)],
      [{ type: "RESUME" }, fail(true), commitFailed],
    ] satisfies TestEvent[][]) {
      const failed = drive(paused, [...events, COMMITTED]);
      expect(lifecycleStateOf(failed.snapshot)).toBe("FAILED");
      expect(toStateRecord(failed.snapshot).previousState).toBe("PAUSED");
      const retry = drive(failed.snapshot, [{ type: "RETRY_TIMER_FIRED" }, COMMITTED]);
      expect(lifecycleStateOf(retry.snapshot)).toBe("MIRRORING");
      expect(retry.effects.flat().map((e) => e.type)).toContain("addFetcher");
    }
    // A failure of a PAUSED partition with no resume waiting still retries to PAUSED.
    const failed = drive(paused, [fail(true), COMMITTED]);
    const retry = drive(failed.snapshot, [{ type: "RETRY_TIMER_FIRED" }, COMMITTED]);
    expect(lifecycleStateOf(retry.snapshot)).toBe("PAUSED");
  });

  it("a retry ends PAUSED or MIRRORING as the topic asks when its timer fires, not as it was when it failed", () => {
    const timer = (pauseRequested: boolean): TestEvent => ({ type: "RETRY_TIMER_FIRED", pauseRequested });
    // Paused while FAILED (from MIRRORING): MIRRORING commits and asks PAUSING at once, with no fetcher.
    const failedMirroring = drive(mirroring(), [fail(true), COMMITTED]).snapshot;
    const paused = drive(failedMirroring, [
      timer(true),
      COMMITTED,
      COMMITTED,
      { type: "FETCHER_REMOVED", latestMirroredEpoch: 0 },
      COMMITTED,
    ]);
    expect(lifecycleStateOf(paused.snapshot)).toBe("PAUSED");
    expect(paused.effects.flat().map((e) => e.type)).not.toContain("addFetcher");
    // Resumed while FAILED (from PAUSED): MIRRORING with a fetcher.
    const failedPaused = drive(paused.snapshot, [fail(true), COMMITTED]).snapshot;
    expect(toStateRecord(failedPaused).previousState).toBe("PAUSED");
    const resumed = drive(failedPaused, [timer(false), COMMITTED]);
    expect(lifecycleStateOf(resumed.snapshot)).toBe("MIRRORING");
    expect(resumed.effects.flat().map((e) => e.type)).toContain("addFetcher");
    // Not aligned (failed in PREPARING): PREPARING, then PAUSED or MIRRORING as the timer said.
    const failedPreparing = drive(fresh(), [{ type: "START" }, COMMITTED, fail(true), COMMITTED]).snapshot;
    for (const pause of [true, false]) {
      // The retry's PREPARING walks the steps of a start (its first event, START, replaced by the timer).
      const end = drive(failedPreparing, [timer(pause), ...START_TO_MIRRORING.slice(1)]);
      expect(lifecycleStateOf(end.snapshot)).toBe("MIRRORING");
      expect(end.snapshot.context.pending?.to ?? null).toBe(pause ? "PAUSING" : null);
      expect(
        end.effects
          .flat()
          .map((e) => e.type)
          .includes("addFetcher"),
      ).toBe(!pause);
    }
  });

  // A failure that replaces a MIRRORING change still waiting for its append keeps that change's pause: the
  // change of a paused partition's PREPARING (or of a retry whose timer read a pause) asks PAUSING at once.
  // FAILED's previousState is the committed PREPARING, so a retry (or START) that is not told otherwise
  // (RETRY_TIMER_FIRED without pauseRequested) ran PREPARING again without the pause and added a fetcher.
  it("a failure that replaces a paused partition's MIRRORING change still waiting for its append keeps the pause", () => {
    const commitFailed: TestEvent = { type: "COMMIT_FAILED", message: "KAFKA_STORAGE_ERROR", random: 0.5 };
    const failedPreparing = drive(fresh(), [{ type: "START" }, COMMITTED, fail(true), COMMITTED]).snapshot;
    const waiting = drive(failedPreparing, [
      { type: "RETRY_TIMER_FIRED", pauseRequested: true },
      COMMITTED,
      { type: "MIRROR_LOOP_CHECKED" },
      { type: "LME_FOUND", lme: -1 },
      { type: "TRUNCATED" },
      { type: "ISR_TRUNCATED" },
    ]).snapshot;
    expect(waiting.context.pending).toMatchObject({ to: "MIRRORING", pauseRequested: true });
    for (const events of [
      [commitFailed, fail(true)],
      [fail(true), commitFailed],
    ] satisfies TestEvent[][]) {
      const failed = drive(waiting, [...events, COMMITTED]).snapshot;
      expect(toStateRecord(failed)).toMatchObject({ state: "FAILED", previousState: "PREPARING" });
      expect(failed.context.pauseRequested).toBe(true);
      const retry = drive(failed, [
        { type: "RETRY_TIMER_FIRED" },
        COMMITTED,
        { type: "MIRROR_LOOP_CHECKED" },
        { type: "ISR_TRUNCATED" },
        COMMITTED,
      ]);
      expect(retry.snapshot.context.pending?.to).toBe("PAUSING");
      expect(retry.effects.flat().map((e) => e.type)).not.toContain("addFetcher");
    }
  });

  // The same for a retry whose timer read the topic's mirror.name: the change it started is newer than what
  // FAILED kept, so a failure that replaces it keeps what the timer read, for a later timer without an answer.
  it("a failure that replaces a retry still waiting for its append keeps what the retry's timer read", () => {
    const commitFailed: TestEvent = { type: "COMMIT_FAILED", message: "KAFKA_STORAGE_ERROR", random: 0.5 };
    const timer = (pauseRequested: boolean): TestEvent => ({ type: "RETRY_TIMER_FIRED", pauseRequested });
    // Failed while MIRRORING, paused while FAILED: the retry's MIRRORING (pause asked) is overtaken.
    const failedMirroring = drive(mirroring(), [fail(true), COMMITTED]).snapshot;
    const paused = drive(failedMirroring, [timer(true), commitFailed, fail(true), COMMITTED]).snapshot;
    expect(toStateRecord(paused)).toMatchObject({ state: "FAILED", previousState: "MIRRORING" });
    const pausedRetry = drive(paused, [{ type: "RETRY_TIMER_FIRED" }, COMMITTED]);
    expect(pausedRetry.snapshot.context.pending?.to).toBe("PAUSING");
    expect(pausedRetry.effects.flat().map((e) => e.type)).not.toContain("addFetcher");
    // Failed while PAUSED, resumed while FAILED: the retry's MIRRORING (no pause) is overtaken.
    const pausedPartition = drive(pausedRetry.snapshot, [
      COMMITTED,
      { type: "FETCHER_REMOVED", latestMirroredEpoch: 0 },
      COMMITTED,
    ]).snapshot;
    expect(lifecycleStateOf(pausedPartition)).toBe("PAUSED");
    const failedPaused = drive(pausedPartition, [fail(true), COMMITTED]).snapshot;
    const resumed = drive(failedPaused, [timer(false), commitFailed, fail(true), COMMITTED]).snapshot;
    expect(toStateRecord(resumed)).toMatchObject({ state: "FAILED", previousState: "PAUSED" });
    const resumedRetry = drive(resumed, [{ type: "RETRY_TIMER_FIRED" }, COMMITTED]);
    expect(lifecycleStateOf(resumedRetry.snapshot)).toBe("MIRRORING");
    expect(resumedRetry.effects.flat().map((e) => e.type)).toContain("addFetcher");
    // Then paused again while FAILED: the retry's PAUSED (from the timer's answer) is overtaken.
    const pausedAgain = drive(resumed, [timer(true), commitFailed, fail(true), COMMITTED]).snapshot;
    expect(toStateRecord(pausedAgain)).toMatchObject({ state: "FAILED", previousState: "PAUSED" });
    const pausedAgainRetry = drive(pausedAgain, [{ type: "RETRY_TIMER_FIRED" }, COMMITTED]);
    expect(lifecycleStateOf(pausedAgainRetry.snapshot)).toBe("PAUSED");
    expect(pausedAgainRetry.effects.flat().map((e) => e.type)).not.toContain("addFetcher");
  });

  it("a retry of a MIRRORING (or EPOCH_FENCING) partition resumes MIRRORING from the local log end", () => {
    const failed = drive(mirroring(), [fail(true), COMMITTED]);
    const back = drive(failed.snapshot, [{ type: "RETRY_TIMER_FIRED" }, COMMITTED]);
    expect(lifecycleStateOf(back.snapshot)).toBe("MIRRORING");
    const types = back.effects.flat().map((e) => e.type);
    expect(types).toEqual(["appendStateRecord", "addFetcher", "markReadOnly"]);
    for (const t of ["lookupLastMirrorEpoch", "truncateFully", "truncateToEpoch"])
      expect(types).not.toContain(t);

    const fencing = drive(mirroring(5), [
      { type: "EPOCH_OBSERVED", batchEpoch: 9, localLeaderEpoch: 5 },
      COMMITTED,
      fail(true),
      COMMITTED,
    ]);
    expect(toStateRecord(fencing.snapshot).previousState).toBe("EPOCH_FENCING");
    const resumed = drive(fencing.snapshot, [{ type: "RETRY_TIMER_FIRED" }, COMMITTED]);
    expect(lifecycleStateOf(resumed.snapshot)).toBe("MIRRORING");
    expect(resumed.effects.flat().map((e) => e.type)).toContain("addFetcher");
  });

  it("a retry of a partition that never aligned (failed in PREPARING) starts over in PREPARING", () => {
    const failed = drive(fresh(), [{ type: "START" }, COMMITTED, fail(true), COMMITTED]);
    const retry = drive(failed.snapshot, [
      { type: "RETRY_TIMER_FIRED" },
      COMMITTED,
      { type: "MIRROR_LOOP_CHECKED" },
    ]);
    expect(lifecycleStateOf(retry.snapshot)).toBe("PREPARING");
    expect(retry.effects.at(-1)).toEqual([{ type: "lookupLastMirrorEpoch", params: { stateEpoch: 3 } }]);
    // Never aligned: LME -1 still truncates fully, as the spec says.
    const r = drive(retry.snapshot, [{ type: "LME_FOUND", lme: -1 }]);
    expect(names(r.effects[0] ?? [])).toEqual(["truncateFully"]);
  });

  it("START of an aligned FAILED partition does not truncate: PREPARING skips to the ISR check", () => {
    const failed = drive(mirroring(), [fail(true), COMMITTED]);
    const r = drive(failed.snapshot, [{ type: "START" }, COMMITTED, { type: "MIRROR_LOOP_CHECKED" }]);
    const types = r.effects.flat().map((e) => e.type);
    for (const t of ["lookupLastMirrorEpoch", "truncateFully", "truncateToEpoch"])
      expect(types).not.toContain(t);
    expect(names(r.effects.at(-1) ?? [])).toEqual(["clearLastMirrorEpoch", "awaitIsrTruncated"]);
    const back = drive(r.snapshot, [{ type: "ISR_TRUNCATED" }, COMMITTED]);
    expect(lifecycleStateOf(back.snapshot)).toBe("MIRRORING");
  });

  it("START from a non-retryable FAILED is refused; STOP then START is the way back", () => {
    const failed = drive(mirroring(), [
      { type: "FAIL", message: "source cluster id changed", retryable: false, random: 0.3 },
      COMMITTED,
    ]);
    expect(names(failed.effects[1] ?? [])).toEqual(["removeFetcher"]); // no retry timer
    expect(() => sendCommand(failed.snapshot, { type: "START" })).toThrow(/not retryable.*Remove the topic/);
    const stopped = drive(failed.snapshot, STOP_TO_STOPPED).snapshot;
    const back = drive(stopped, START_TO_MIRRORING).snapshot;
    expect(toStateRecord(back)).toMatchObject({ state: "MIRRORING", retryAttempt: 0, errorMessage: null });
  });

  it("retryable failures back off exponentially with full jitter, then give up at the attempt limit", () => {
    const retry = { baseMs: 100, capMs: 1000, maxAttempts: 3 };
    let s = drive(recoverPartition({ retry }).snapshot, START_TO_MIRRORING).snapshot;
    const delays: number[] = [];
    for (let i = 0; i < 3; i++) {
      const failed = drive(s, [fail(true), COMMITTED]);
      const scheduled = failed.effects[1]?.find((e) => e.type === "scheduleRetry");
      if (scheduled?.type === "scheduleRetry") delays.push(scheduled.params.delayMs);
      s = drive(failed.snapshot, [{ type: "RETRY_TIMER_FIRED" }, COMMITTED]).snapshot;
      expect(lifecycleStateOf(s)).toBe("MIRRORING"); // aligned: resumes where it was
      expect(s.context.record.retryAttempt).toBe(i + 1);
    }
    expect(delays).toEqual([50, 100, 200]);
    const exhausted = drive(s, [fail(true), COMMITTED]);
    expect(names(exhausted.effects[1] ?? [])).toEqual(["removeFetcher"]);
    expect(toStateRecord(exhausted.snapshot)).toMatchObject({
      retryAttempt: -1,
      errorMessage: "broker down (gave up after 3 retries)",
    });
  });

  it("maxAttempts 0 retries without limit", () => {
    let s = drive(
      recoverPartition({ retry: { baseMs: 1, capMs: 1, maxAttempts: 0 } }).snapshot,
      START_TO_MIRRORING,
    ).snapshot;
    for (let i = 0; i < 15; i++)
      s = drive(s, [fail(true), COMMITTED, { type: "RETRY_TIMER_FIRED" }, COMMITTED]).snapshot;
    expect(s.context.record.retryAttempt).toBe(15);
  });
});

describe("Critical: the LME is captured once per failover", () => {
  it("re-entering STOPPING after a failed step reuses the stored LME", () => {
    const s = drive(mirroring(20), [
      { type: "STOP" },
      COMMITTED,
      { type: "FETCHER_REMOVED", latestMirroredEpoch: 7 },
      { type: "LME_RECORDED" },
      { type: "EPOCH_BUMPED", leaderEpoch: 30 },
      fail(true),
      COMMITTED,
      { type: "RETRY_TIMER_FIRED" },
      COMMITTED,
      { type: "FETCHER_REMOVED", latestMirroredEpoch: 30 }, // the log now holds local appends
    ]);
    expect(s.snapshot.context.lastMirrorEpoch).toBe(7);
    expect(s.effects.at(-1)).toContainEqual({
      type: "recordLastMirrorEpoch",
      params: { stateEpoch: 5, lme: 7 },
    });
    expect(s.effects[2]).toContainEqual({
      type: "bumpLeaderEpoch",
      params: { stateEpoch: 3, minLeaderEpoch: 30 },
    });
  });

  it("a STOPPING resumed after capturing LME -1 does not capture the epoch of its own writes (FC_SEED=214)", () => {
    // Nothing was mirrored (LME -1, recorded after the STOPPING record); the coordinator was lost after the
    // barrier, so the log's latest epoch is now the barrier's.
    const rec = {
      state: "STOPPING",
      leaderEpoch: -1,
      stateEpoch: 3,
      errorMessage: null,
      retryAttempt: 0,
      previousState: "MIRRORING",
      lastMirrorEpoch: -1,
      lastMirrorEpochCaptured: true,
    } as const;
    const r = recoverPartition({ record: rec, localLeaderEpoch: 2 });
    expect(r.snapshot.context).toMatchObject({ lmeCaptured: true, aligned: false, lastMirrorEpoch: -1 });
    const after = drive(r.snapshot, [
      { type: "FETCHER_REMOVED", latestMirroredEpoch: 1 },
      { type: "LME_RECORDED" },
      { type: "EPOCH_BUMPED", leaderEpoch: 12 },
      { type: "TXNS_ABORTED" },
    ]);
    const types = after.effects.flat();
    expect(types).toContainEqual({ type: "recordLastMirrorEpoch", params: { stateEpoch: 3, lme: -1 } });
    expect(types).toContainEqual({ type: "appendPidReset", params: { stateEpoch: 3, lme: -1 } });
    // Without the flag (-1 read as "not captured yet") the resumed failover captures the log's epoch.
    const { lastMirrorEpochCaptured: _, ...unflagged } = rec;
    const again = drive(recoverPartition({ record: unflagged, localLeaderEpoch: 2 }).snapshot, [
      { type: "FETCHER_REMOVED", latestMirroredEpoch: 1 },
    ]);
    expect(again.effects.flat()).toContainEqual({
      type: "recordLastMirrorEpoch",
      params: { stateEpoch: 3, lme: 1 },
    });
  });

  it("a recovered STOPPING partition reuses the recorded LME; a new start clears it once truncated", () => {
    const rec = {
      state: "STOPPING",
      leaderEpoch: 4,
      stateEpoch: 9,
      errorMessage: null,
      retryAttempt: 0,
      previousState: "MIRRORING",
      lastMirrorEpoch: 7,
    } as const;
    const r = recoverPartition({ record: rec, localLeaderEpoch: 12 });
    expect(names(r.effects)).toEqual(["markReadOnly", "removeFetcher"]);
    const after = drive(r.snapshot, [{ type: "FETCHER_REMOVED", latestMirroredEpoch: 30 }]);
    expect(after.effects[0]).toContainEqual({
      type: "recordLastMirrorEpoch",
      params: { stateEpoch: 9, lme: 7 },
    });
    const stopped = drive(after.snapshot, [
      { type: "LME_RECORDED" },
      { type: "EPOCH_BUMPED", leaderEpoch: 22 },
      { type: "TXNS_ABORTED" },
      { type: "PID_RESET_APPENDED" },
      COMMITTED,
    ]);
    const restarted = drive(stopped.snapshot, [{ type: "START" }, COMMITTED]);
    expect(restarted.snapshot.context).toMatchObject({
      lastMirrorEpoch: 7,
      lmeCaptured: false,
      aligned: false,
    });
    const truncated = drive(restarted.snapshot, [
      { type: "MIRROR_LOOP_CHECKED" },
      { type: "LME_FOUND", lme: 3 },
      { type: "TRUNCATED" },
    ]);
    expect(truncated.snapshot.context).toMatchObject({
      lastMirrorEpoch: -1,
      lmeCaptured: false,
      aligned: true,
    });
    expect(truncated.effects.at(-1)).toEqual([
      { type: "clearLastMirrorEpoch", params: { stateEpoch: 11 } },
      { type: "awaitIsrTruncated", params: { stateEpoch: 11 } },
    ]);
  });
});

/** A STOPPED partition (LME 7 recorded, local writes since) added back to a mirror: PREPARING, stateEpoch 5. */
function failingBack(): MirrorPartitionSnapshot {
  const stopped = drive(mirroring(20), STOP_TO_STOPPED).snapshot;
  return drive(stopped, [{ type: "START" }, COMMITTED]).snapshot;
}

/** The rest of a failover from a snapshot in STOPPING's `removingFetcher`. */
const FINISH_FAILOVER: readonly TestEvent[] = [
  { type: "LME_RECORDED" },
  { type: "EPOCH_BUMPED", leaderEpoch: 60 },
  { type: "TXNS_ABORTED" },
  { type: "PID_RESET_APPENDED" },
  COMMITTED,
];

/**
 * The rest of a failover of a log without mirrored data: steps 1-2, then ABORT markers over hanging
 * transactions only (`abortHangingTransactions`), no `abortOpenTransactions`, no PID reset.
 */
const FINISH_UNMIRRORED_FAILOVER: readonly TestEvent[] = [
  { type: "LME_RECORDED" },
  { type: "EPOCH_BUMPED", leaderEpoch: 60 },
  { type: "TXNS_ABORTED" },
  COMMITTED,
];

describe("Critical: the LME is over mirrored batches only (failover before PREPARING aligned the log)", () => {
  it("entering PREPARING keeps the recorded LME; only the truncation clears it", () => {
    const s = drive(mirroring(20), STOP_TO_STOPPED).snapshot;
    const { snapshot, effects } = drive(s, [{ type: "START" }, COMMITTED]);
    expect(effects.flat().map((e) => e.type)).not.toContain("clearLastMirrorEpoch");
    expect(snapshot.context).toMatchObject({ lastMirrorEpoch: 7, aligned: false });
  });

  it.each([
    ["checking the mirror loop", []],
    ["looking up the LME", [{ type: "MIRROR_LOOP_CHECKED" }]],
    ["truncating", [{ type: "MIRROR_LOOP_CHECKED" }, { type: "LME_FOUND", lme: 7 }]],
  ] as const)("STOP while %s keeps the earlier LME, not the log's latest (local) epoch", (_, steps) => {
    const s = drive(failingBack(), [...steps, { type: "STOP" }, COMMITTED]).snapshot;
    const r = drive(s, [{ type: "FETCHER_REMOVED", latestMirroredEpoch: 42 }]);
    expect(r.snapshot.context).toMatchObject({ lastMirrorEpoch: 7, lmeCaptured: true, aligned: false });
    expect(r.effects[0]).toEqual([
      { type: "recordLastMirrorEpoch", params: { stateEpoch: 6, lme: 7 } },
      { type: "bumpLeaderEpoch", params: { stateEpoch: 6, minLeaderEpoch: 40 } },
    ]);
    expect(r.effects.flat().map((e) => e.type)).not.toContain("clearLastMirrorEpoch");
    // The log is still the topic's own (local writes since the earlier failover): no markers but over
    // hanging transactions.
    const stopped = drive(r.snapshot, FINISH_UNMIRRORED_FAILOVER);
    expect(stopped.effects.flat().map((e) => e.type)).toEqual([
      "abortHangingTransactions",
      "appendStateRecord",
      "clearReadOnly",
    ]);
    expect(lifecycleStateOf(stopped.snapshot)).toBe("STOPPED");
    expect(stopped.snapshot.context.lastMirrorEpoch).toBe(7);
  });

  it("a first start (no earlier failover) stopped before truncation records -1", () => {
    const s = drive(fresh(), [{ type: "START" }, COMMITTED, { type: "STOP" }, COMMITTED]).snapshot;
    const r = drive(s, [{ type: "FETCHER_REMOVED", latestMirroredEpoch: 4 }]);
    expect(r.effects[0]).toContainEqual({
      type: "recordLastMirrorEpoch",
      params: { stateEpoch: 2, lme: -1 },
    });
  });

  it("STOP after the truncation (awaiting the ISR, or MIRRORING) captures the log's latest epoch", () => {
    const truncated = drive(failingBack(), [
      { type: "MIRROR_LOOP_CHECKED" },
      { type: "LME_FOUND", lme: 7 },
      { type: "TRUNCATED" },
    ]).snapshot;
    const awaiting = drive(truncated, [{ type: "STOP" }, COMMITTED]).snapshot;
    expect(drive(awaiting, [{ type: "FETCHER_REMOVED", latestMirroredEpoch: 9 }]).effects[0]).toContainEqual({
      type: "recordLastMirrorEpoch",
      params: { stateEpoch: 6, lme: 9 },
    });
    const mirroringAgain = drive(truncated, [{ type: "ISR_TRUNCATED" }, COMMITTED]).snapshot;
    const r = drive(mirroringAgain, [
      { type: "STOP" },
      COMMITTED,
      { type: "FETCHER_REMOVED", latestMirroredEpoch: 9 },
    ]);
    expect(r.effects.at(-1)).toContainEqual({
      type: "recordLastMirrorEpoch",
      params: { stateEpoch: 7, lme: 9 },
    });
    expect(r.snapshot.context).toMatchObject({ lastMirrorEpoch: 9, lmeCaptured: true, aligned: false });
  });

  it("a FAILED retry of an aligned partition stays aligned; one of an unaligned PREPARING does not", () => {
    const retried = drive(mirroring(20), [fail(true), COMMITTED, { type: "RETRY_TIMER_FIRED" }, COMMITTED]);
    expect(lifecycleStateOf(retried.snapshot)).toBe("MIRRORING");
    expect(retried.snapshot.context.aligned).toBe(true);
    const stopped = drive(retried.snapshot, [
      { type: "STOP" },
      COMMITTED,
      { type: "FETCHER_REMOVED", latestMirroredEpoch: 6 },
    ]);
    expect(stopped.snapshot.context.lastMirrorEpoch).toBe(6);

    const unaligned = drive(failingBack(), [fail(true), COMMITTED, { type: "RETRY_TIMER_FIRED" }, COMMITTED]);
    expect(unaligned.snapshot.context).toMatchObject({ aligned: false, lastMirrorEpoch: 7 });
  });
});

describe("Critical: a partition removed while FAILED, or while PREPARING before its truncation, writes markers only into a log that holds mirrored data", () => {
  const markers = (effects: readonly (readonly { type: string }[])[]) =>
    effects.flat().filter((e) => e.type === "abortOpenTransactions" || e.type === "appendPidReset");

  it("a loop refused in PREPARING, then removed: no ABORT marker, no PID reset, ends STOPPED", () => {
    const failed = drive(fresh(), [
      { type: "START" },
      COMMITTED,
      { type: "MIRROR_LOOP_FOUND", message: "loop" },
      COMMITTED,
    ]);
    expect(failed.snapshot.context.holdsMirroredData).toBe(false);
    const r = drive(failed.snapshot, [
      { type: "STOP" },
      COMMITTED,
      { type: "FETCHER_REMOVED", latestMirroredEpoch: 4 },
      ...FINISH_UNMIRRORED_FAILOVER,
    ]);
    expect(markers(r.effects)).toEqual([]);
    expect(lifecycleStateOf(r.snapshot)).toBe("STOPPED");
  });

  it("a re-add after a failover, refused in PREPARING and removed: a restarted coordinator decides as the first (soak FC_SEED=45)", () => {
    // The first episode mirrored batches of epoch 0; the failover closed them (markers and PID reset).
    const readded = drive(failingBack(), [{ type: "MIRROR_LOOP_FOUND", message: "loop" }, COMMITTED]);
    expect(readded.snapshot.context.holdsMirroredData).toBe(false);
    // The record of the new episode no longer carries the first episode's batch epoch.
    expect(readded.snapshot.context.record.leaderEpoch).toBe(-1);
    const stopping = drive(readded.snapshot, [{ type: "STOP" }, COMMITTED]).snapshot;
    // The log's latest epoch: the failover's markers (bumped to 30, above its LME 7).
    const live = drive(stopping, [
      { type: "FETCHER_REMOVED", latestMirroredEpoch: 30 },
      ...FINISH_UNMIRRORED_FAILOVER,
    ]);
    expect(markers(live.effects)).toEqual([]);
    // The coordinator's broker restarts in STOPPING: the recovered partition reads the same records.
    const recovered = recoverPartition({
      record: { ...toStateRecord(stopping), lastMirrorEpoch: stopping.context.lastMirrorEpoch },
    });
    expect(recovered.snapshot.context.holdsMirroredData).toBe(false);
    const after = drive(recovered.snapshot, [
      { type: "FETCHER_REMOVED", latestMirroredEpoch: 30 },
      ...FINISH_UNMIRRORED_FAILOVER,
    ]);
    expect(markers(after.effects)).toEqual([]);
    expect(lifecycleStateOf(after.snapshot)).toBe("STOPPED");
  });

  it("a new episode's truncation marks the record (leaderEpoch >= 0) even before a batch is mirrored", () => {
    // A first start on an empty source: the truncation aligned the log, no batch was mirrored yet.
    const aligned = drive(fresh(), [
      { type: "START" },
      COMMITTED,
      { type: "MIRROR_LOOP_CHECKED" },
      { type: "LME_FOUND", lme: -1 },
      { type: "TRUNCATED" },
      { type: "FAIL", message: "disk", retryable: false, random: 0 },
      COMMITTED,
    ]).snapshot;
    expect(aligned.context.record).toMatchObject({ state: "FAILED", previousState: "PREPARING" });
    expect(aligned.context.record.leaderEpoch).toBeGreaterThanOrEqual(0);
    const recovered = recoverPartition({ record: { ...toStateRecord(aligned), lastMirrorEpoch: -1 } });
    expect(recovered.snapshot.context.holdsMirroredData).toBe(aligned.context.holdsMirroredData);
    expect(recovered.snapshot.context.holdsMirroredData).toBe(true);
  });

  it("decides from the records: a recovered FAILED loop (never mirrored) gets no marker either", () => {
    const record = {
      state: "FAILED",
      leaderEpoch: -1,
      stateEpoch: 2,
      errorMessage: "mirror loop",
      retryAttempt: -1,
      previousState: "PREPARING",
      lastMirrorEpoch: -1,
    } as const;
    const r = drive(recoverPartition({ record }).snapshot, [
      { type: "STOP" },
      COMMITTED,
      { type: "FETCHER_REMOVED", latestMirroredEpoch: 4 },
      ...FINISH_UNMIRRORED_FAILOVER,
    ]);
    expect(markers(r.effects)).toEqual([]);
    expect(lifecycleStateOf(r.snapshot)).toBe("STOPPED");
  });

  it.each([
    ["FAILED", "MIRRORING", -1, -1, true],
    ["FAILED", "PAUSED", -1, -1, true],
    ["FAILED", "STOPPING", 4, 3, true], // a failover of mirrored data that failed half way
    ["STOPPING", "FAILED", 4, 3, true],
    ["STOPPING", "FAILED", -1, -1, false], // nothing was ever mirrored
    ["FAILED", "PREPARING", -1, -1, false], // a first start that failed before mirroring
    ["FAILED", "PREPARING", 4, 7, false], // a re-add that failed before truncating: the log is local
    ["FAILED", "STOPPED", 4, 7, false], // STOPPED closed it already; local writes since
  ] as const)(
    "recovered %s (previous %s, leaderEpoch %i, LME %i): markers %s",
    (state, previousState, leaderEpoch, lme, expected) => {
      const record = {
        state,
        leaderEpoch,
        stateEpoch: 9,
        errorMessage: state === "FAILED" ? "x" : null,
        retryAttempt: state === "FAILED" ? -1 : 0,
        previousState,
        lastMirrorEpoch: lme,
      } as const;
      const r = recoverPartition({ record });
      expect(r.snapshot.context.holdsMirroredData).toBe(expected);
      const stopping =
        state === "FAILED" ? drive(r.snapshot, [{ type: "STOP" }, COMMITTED]).snapshot : r.snapshot;
      // The log's latest epoch is above a recorded LME (the failover that recorded it bumped the epoch first).
      const next = drive(stopping, [
        { type: "FETCHER_REMOVED", latestMirroredEpoch: Math.max(4, lme + 1) },
        { type: "LME_RECORDED" },
        { type: "EPOCH_BUMPED", leaderEpoch: 90 },
      ]);
      expect(markers(next.effects).length > 0).toBe(expected);
    },
  );

  it("a re-add that cut its log, recovered with no leader to read: the failover reads the cut and writes markers", () => {
    // As above, but the data partition had no leader when the coordinator loaded (logLatestEpoch unknown).
    const preparing = failingBack();
    const record = { ...toStateRecord(preparing), lastMirrorEpoch: preparing.context.lastMirrorEpoch };
    const recovered = recoverPartition({ record });
    expect(recovered.snapshot.context.holdsMirroredData).toBe(false);
    const stopping = drive(recovered.snapshot, [{ type: "STOP" }, COMMITTED]).snapshot;
    // Its leader is back when the failover runs: the log's latest epoch is the LME's (the cut).
    const r = drive(stopping, [{ type: "FETCHER_REMOVED", latestMirroredEpoch: 7 }, ...FINISH_FAILOVER]);
    expect(markers(r.effects).map((e) => e.type)).toEqual(["abortOpenTransactions", "appendPidReset"]);
    expect(r.snapshot.context.lastMirrorEpoch).toBe(7);
    expect(lifecycleStateOf(r.snapshot)).toBe("STOPPED");
  });

  it("a failback stopped after its truncation closes the producer state it inherited from the source", () => {
    const truncated = drive(failingBack(), [
      { type: "MIRROR_LOOP_CHECKED" },
      { type: "LME_FOUND", lme: 7 },
      { type: "TRUNCATED" },
      { type: "STOP" },
      COMMITTED,
      { type: "FETCHER_REMOVED", latestMirroredEpoch: 9 },
      ...FINISH_FAILOVER,
    ]);
    expect(markers(truncated.effects).map((e) => e.type)).toEqual([
      "abortOpenTransactions",
      "appendPidReset",
    ]);
    expect(lifecycleStateOf(truncated.snapshot)).toBe("STOPPED");
  });

  it.each([
    // [the log's latest epoch when the coordinator loaded, markers]
    [7, true], // cut to the LME's epoch: the failover's markers and the local writes (above 7) are gone
    [2, true], // cut further (the source's copy of the LME's epoch ended earlier)
    [-1, true], // cut fully
    [17, false], // not cut: the earlier failover's markers or local writes (epoch > 7) are there
    [undefined, false], // no leader when the coordinator loaded: the records decide, as before
  ] as const)(
    "a re-add that cut its log, recovered in PREPARING before the cut was recorded (log's latest epoch %s): markers %s",
    (logLatestEpoch, expected) => {
      // The re-add's truncation cut the log, and the coordinator was lost before the LastMirrorEpochs
      // tombstone was durable: the records still say PREPARING with the earlier failover's LME.
      const preparing = failingBack();
      const record = { ...toStateRecord(preparing), lastMirrorEpoch: preparing.context.lastMirrorEpoch };
      expect(record).toMatchObject({ state: "PREPARING", previousState: "STOPPED", lastMirrorEpoch: 7 });
      const recovered = recoverPartition({
        record,
        ...(logLatestEpoch === undefined ? {} : { logLatestEpoch }),
      });
      expect(recovered.snapshot.context.holdsMirroredData).toBe(expected);
      // Removed before the truncation runs again (the source is down): the markers close the source's
      // transactions the cut reopened; the LME stays the earlier one (the log's latest epoch is at most it).
      const stopping = drive(recovered.snapshot, [{ type: "STOP" }, COMMITTED]).snapshot;
      // The STOPPING record carries the cut on (leaderEpoch >= 0): a coordinator lost again decides alike.
      expect(stopping.context.record.leaderEpoch >= 0).toBe(expected);
      const again = recoverPartition({ record: { ...toStateRecord(stopping), lastMirrorEpoch: 7 } });
      expect(again.snapshot.context.holdsMirroredData).toBe(expected);
      const r = drive(stopping, [
        { type: "FETCHER_REMOVED", latestMirroredEpoch: logLatestEpoch ?? 17 },
        ...(expected ? FINISH_FAILOVER : FINISH_UNMIRRORED_FAILOVER),
      ]);
      expect(markers(r.effects).length > 0).toBe(expected);
      expect(r.snapshot.context.lastMirrorEpoch).toBe(7);
      expect(lifecycleStateOf(r.snapshot)).toBe("STOPPED");
    },
  );

  it("a recovered FAILED from PREPARING whose log shows the cut (source down at the retry) writes markers too", () => {
    const record = {
      state: "FAILED",
      leaderEpoch: -1,
      stateEpoch: 9,
      errorMessage: "source unreachable",
      retryAttempt: 2,
      previousState: "PREPARING",
      lastMirrorEpoch: 7,
    } as const;
    const cut = recoverPartition({ record, retryJitter: 0.5, logLatestEpoch: 7 });
    expect(cut.snapshot.context.holdsMirroredData).toBe(true);
    const local = recoverPartition({ record, retryJitter: 0.5, logLatestEpoch: 17 });
    expect(local.snapshot.context.holdsMirroredData).toBe(false);
  });
});

describe("recovery keeps the LME rule", () => {
  const record = (state: string, previousState: string | null, lastMirrorEpoch: number) =>
    ({
      state,
      leaderEpoch: 4,
      stateEpoch: 9,
      errorMessage: null,
      retryAttempt: 0,
      previousState,
      lastMirrorEpoch,
    }) as never;

  it.each([
    // [state, previousState, persisted LME, aligned, lmeCaptured]
    ["MIRRORING", "PREPARING", -1, true, false],
    ["EPOCH_FENCING", "MIRRORING", -1, true, false],
    ["PAUSING", "MIRRORING", -1, true, false],
    ["PAUSED", "PAUSING", -1, true, false],
    ["PREPARING", "STOPPED", 7, false, false],
    ["PREPARING", "UNKNOWN", -1, false, false],
    ["STOPPING", "MIRRORING", -1, true, false],
    ["STOPPING", "PAUSED", -1, true, false],
    ["STOPPING", "MIRRORING", 9, false, true],
    ["STOPPING", "PREPARING", 7, false, true],
    ["STOPPING", "PREPARING", -1, false, false],
    ["STOPPING", "FAILED", -1, false, false],
    ["STOPPED", "STOPPING", 7, false, true],
    ["FAILED", "MIRRORING", -1, true, false],
    ["FAILED", "PREPARING", 7, false, true],
    ["FAILED", "PREPARING", -1, false, false],
    ["FAILED", "STOPPING", -1, false, false],
  ] as const)("%s (previous %s, LME %i): aligned %s, captured %s", (state, prev, lme, aligned, captured) => {
    const r = recoverPartition({ record: record(state, prev, lme), localLeaderEpoch: 30, retryJitter: 0.5 });
    expect(r.snapshot.context).toMatchObject({ aligned, lmeCaptured: captured, lastMirrorEpoch: lme });
  });

  it.each([
    ["PREPARING", "STOPPED", 7, 7],
    ["PREPARING", "UNKNOWN", -1, -1],
    ["MIRRORING", "PREPARING", -1, 42],
    ["PAUSED", "PAUSING", -1, 42],
    ["STOPPING", "MIRRORING", -1, 42],
    ["STOPPING", "PREPARING", -1, -1],
    ["STOPPING", "PREPARING", 7, 7],
    ["STOPPING", "MIRRORING", 9, 9],
    ["FAILED", "MIRRORING", -1, 42],
    ["FAILED", "PREPARING", 7, 7],
  ] as const)(
    "a failover of a recovered %s (previous %s, LME %i) records LME %i",
    (state, prev, lme, want) => {
      let s = recoverPartition({
        record: record(state, prev, lme),
        localLeaderEpoch: 30,
        retryJitter: 0.5,
      }).snapshot;
      if (state !== "STOPPING") s = drive(s, [{ type: "STOP" }, COMMITTED]).snapshot;
      const r = drive(s, [{ type: "FETCHER_REMOVED", latestMirroredEpoch: 42 }]);
      const recorded = r.effects[0]?.find((e) => e.type === "recordLastMirrorEpoch");
      expect(recorded?.params).toMatchObject({ lme: want });
    },
  );

  it("a recovered PREPARING whose truncation completed (alignedInSession) does not truncate again (FC_SEED=2)", () => {
    // A failback cut at the end of the partition's own LME 7 (the source knew none) and cleared it; the
    // coordinator was lost before MIRRORING was recorded.
    const aligned = Object.assign({}, record("PREPARING", "STOPPED", -1), { alignedInSession: true });
    const r = recoverPartition({ record: aligned as never });
    expect(r.snapshot.context).toMatchObject({ aligned: true, holdsMirroredData: true });
    const t = drive(r.snapshot, [{ type: "MIRROR_LOOP_CHECKED" }]);
    const types = t.effects.flat().map((e) => e.type);
    for (const never of ["lookupLastMirrorEpoch", "truncateFully", "truncateToEpoch"])
      expect(types).not.toContain(never);
    expect(types).toContain("awaitIsrTruncated");
    // Without it (the history does not show the truncation), the same record truncates fully: LME -1.
    const unknown = drive(recoverPartition({ record: record("PREPARING", "STOPPED", -1) }).snapshot, [
      { type: "MIRROR_LOOP_CHECKED" },
      { type: "LME_FOUND", lme: -1 },
    ]);
    expect(unknown.effects.flat().map((e) => e.type)).toContain("truncateFully");
  });

  it("a recovered PREPARING partition clears the recorded LME only once truncated", () => {
    const r = recoverPartition({ record: record("PREPARING", "STOPPED", 7) });
    expect(names(r.effects)).toEqual(["markReadOnly", "checkMirrorLoop"]);
    const t = drive(r.snapshot, [
      { type: "MIRROR_LOOP_CHECKED" },
      { type: "LME_FOUND", lme: 7 },
      { type: "TRUNCATED" },
    ]);
    expect(names(t.effects.at(-1) ?? [])).toEqual(["clearLastMirrorEpoch", "awaitIsrTruncated"]);
    expect(t.snapshot.context).toMatchObject({ aligned: true, lastMirrorEpoch: -1 });
  });
});

describe("Critical: FENCED stops everything", () => {
  it("goes to the final fenced state and runs no effect", () => {
    const pending = drive(fresh(), [
      { type: "START" },
      COMMITTED,
      { type: "MIRROR_LOOP_CHECKED" },
      { type: "LME_FOUND", lme: 2 },
      { type: "STOP" },
    ]).snapshot;
    const step = applyEvent(
      pending,
      withEpoch(pending, { type: "FENCED", message: "stale coordinator epoch" }),
    );
    expect(step.effects).toEqual([]);
    expect(step.snapshot.value).toBe("fenced");
    expect(step.snapshot.status).toBe("done");
    expect(() => sendCommand(step.snapshot, { type: "STOP" })).toThrow(/lost leadership/);
  });
});

describe("Critical: the record changes only through an append", () => {
  it("bumps, observations and results never touch context.record", () => {
    const s = mirroring(20);
    const before = s.context.record;
    const steps = drive(s, [
      { type: "EPOCH_OBSERVED", batchEpoch: 18, localLeaderEpoch: 20 },
      { type: "EPOCH_BUMPED", leaderEpoch: 30 },
      { type: "EPOCH_OBSERVED", batchEpoch: 29, localLeaderEpoch: 30 },
    ]);
    expect(steps.snapshot.context.record).toBe(before);
    expect(steps.effects[0]).toEqual([
      { type: "bumpLeaderEpoch", params: { stateEpoch: 2, minLeaderEpoch: 30 } },
    ]);
    // The proactive bump is asked once, not once per batch.
    const again = drive(s, [
      { type: "EPOCH_OBSERVED", batchEpoch: 18, localLeaderEpoch: 20 },
      { type: "EPOCH_OBSERVED", batchEpoch: 19, localLeaderEpoch: 20 },
    ]);
    expect(again.effects[1]).toEqual([]);
  });
});

describe("the commit protocol", () => {
  it("COMMIT_FAILED re-appends the same record after a backoff, without re-running the steps", () => {
    const s = drive(fresh(), [
      { type: "START" },
      COMMITTED,
      { type: "MIRROR_LOOP_CHECKED" },
      { type: "LME_FOUND", lme: -1 },
      { type: "TRUNCATED" },
      { type: "ISR_TRUNCATED" },
    ]);
    const appended = lastAppended(s.effects);
    const r = drive(s.snapshot, [
      { type: "COMMIT_FAILED", message: "timeout", random: 0.5 },
      { type: "COMMIT_RETRY_TIMER_FIRED" },
    ]);
    expect(r.effects[0]).toEqual([
      { type: "scheduleCommitRetry", params: { stateEpoch: 2, attempt: 0, delayMs: 50 } },
    ]);
    expect(r.effects[1]).toEqual([{ type: "appendStateRecord", params: appended }]);
    expect(lifecycleStateOf(drive(r.snapshot, [COMMITTED]).snapshot)).toBe("MIRRORING");
  });

  it("a record refused again and again is re-appended at least once a second (Kafka's retry.backoff.max.ms)", () => {
    let s = drive(fresh(), [{ type: "START" }]).snapshot;
    const delays: number[] = [];
    for (let i = 0; i < 12; i++) {
      const r = drive(s, [
        { type: "COMMIT_FAILED", message: "NOT_ENOUGH_REPLICAS", random: 0.999 },
        { type: "COMMIT_RETRY_TIMER_FIRED" },
      ]);
      const scheduled = r.effects[0]?.find((e) => e.type === "scheduleCommitRetry");
      if (scheduled === undefined) throw new Error(`no commit retry scheduled at attempt ${i}`);
      delays.push((scheduled.params as { delayMs: number }).delayMs);
      s = r.snapshot;
    }
    // 100 ms doubling, capped at 1 s: not the FAILED retry's backoff, which grows to 300 s.
    expect(delays).toEqual([99, 199, 399, 799, 999, 999, 999, 999, 999, 999, 999, 999]);
    expect(lifecycleStateOf(drive(s, [COMMITTED]).snapshot)).toBe("PREPARING");
  });

  it("a failure that arrives while a commit is in flight is applied once it settles", () => {
    const pending = drive(mirroring(), [{ type: "PAUSE" }, fail(false)]);
    expect(pending.effects[1]).toEqual([]);
    const after = drive(pending.snapshot, [COMMITTED]);
    expect(names(after.effects[0] ?? [])).toEqual(["markReadOnly", "appendStateRecord"]);
    expect(after.snapshot.context.pending?.record).toMatchObject({
      state: "FAILED",
      previousState: "PAUSING",
      retryAttempt: -1,
    });
  });

  it("while a change is pending the lifecycle state is still the old one and other commands are refused", () => {
    const pending = drive(mirroring(), [{ type: "PAUSE" }]).snapshot;
    expect(lifecycleStateOf(pending)).toBe("MIRRORING");
    expect(() => sendCommand(pending, { type: "STOP" })).toThrow(/waiting for its __mirror_state append/);
  });
});

describe("refused commands", () => {
  it("throw InvalidMirrorStateError naming the state, the command and the states that accept it", () => {
    const s = mirroring();
    const before = JSON.stringify({ value: s.value, context: s.context });
    let error: unknown;
    try {
      sendCommand(s, { type: "RESUME" });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InvalidMirrorStateError);
    expect(error).toMatchObject({ code: -1, retriable: false, state: "MIRRORING", command: "RESUME" });
    expect((error as Error).message).toMatch(
      /Cannot RESUME mirror partition in state MIRRORING: RESUME is accepted only in PAUSED\./,
    );
    expect(JSON.stringify({ value: s.value, context: s.context })).toBe(before);
  });
});

describe("recovery", () => {
  it("a recovered FAILED partition needs a fresh random from the runtime", () => {
    const record = {
      state: "FAILED",
      leaderEpoch: 1,
      stateEpoch: 4,
      errorMessage: "x",
      retryAttempt: 2,
      previousState: "MIRRORING",
      lastMirrorEpoch: -1,
    } as const;
    expect(() => recoverPartition({ record })).toThrow(RangeError);
    const r = recoverPartition({
      record,
      retryJitter: 0.5,
      retry: { baseMs: 100, capMs: 10_000, maxAttempts: 5 },
    });
    expect(r.effects).toContainEqual({
      type: "scheduleRetry",
      params: { stateEpoch: 4, attempt: 2, delayMs: 200 },
    });
  });
});

describe("recovery starts the fetcher of a fetching partition", () => {
  // The data leader may have changed (its fetchers gone with a crash) while no coordinator had the partition
  // loaded: the new leader's leadership listener could not tell it fetches, so the recovered actor adds it.
  it.each([
    ["MIRRORING", "PREPARING", ["addFetcher", "releaseAppends", "markReadOnly"]],
    ["MIRRORING", "EPOCH_FENCING", ["addFetcher", "releaseAppends", "markReadOnly"]],
    ["MIRRORING", "PAUSED", ["addFetcher", "releaseAppends", "markReadOnly"]],
    ["EPOCH_FENCING", "MIRRORING", ["addFetcher", "markReadOnly", "holdAppends", "bumpLeaderEpoch"]],
  ] as const)("a recovered %s (previous %s) runs %j", (state, previousState, effects) => {
    const record = {
      state,
      leaderEpoch: 4,
      stateEpoch: 9,
      errorMessage: null,
      retryAttempt: 0,
      previousState,
      lastMirrorEpoch: -1,
    } as const;
    const r = recoverPartition({ record, localLeaderEpoch: 10 });
    expect(lifecycleStateOf(r.snapshot)).toBe(state);
    expect(names(r.effects)).toEqual(effects);
    expect(r.effects.every((e) => e.params.stateEpoch === 9)).toBe(true);
  });

  it("a recovered MIRRORING partition with a pause requested asks for PAUSING, with no fetcher", () => {
    const record = {
      state: "MIRRORING",
      leaderEpoch: 4,
      stateEpoch: 9,
      errorMessage: null,
      retryAttempt: 0,
      previousState: "EPOCH_FENCING",
      lastMirrorEpoch: -1,
    } as const;
    const r = recoverPartition({ record, localLeaderEpoch: 10, pauseRequested: true });
    expect(names(r.effects)).not.toContain("addFetcher");
    expect(r.snapshot.context.pending?.to).toBe("PAUSING");
  });
});

describe("live actors with effects provided by the runtime", () => {
  it("run the named effects through machine.provide and recover through `recovering`", () => {
    const ran: string[] = [];
    const log = (name: string) => () => {
      ran.push(name);
    };
    const machine = mirrorPartitionMachine.provide({
      actions: {
        removeFetcher: log("removeFetcher"),
        addFetcher: log("addFetcher"),
        appendStateRecord: log("append"),
      },
    });
    const record = {
      state: "MIRRORING",
      leaderEpoch: 4,
      stateEpoch: 9,
      errorMessage: null,
      retryAttempt: 0,
      previousState: "PREPARING",
      lastMirrorEpoch: -1,
    } as const;
    const actor = createActor(machine, { input: { record, localLeaderEpoch: 10 } });
    actor.start();
    expect(ran).toEqual(["addFetcher"]);
    actor.send({ type: "PAUSE" });
    actor.send({ type: "COMMITTED", stateEpoch: 10 });
    expect(ran).toEqual(["addFetcher", "append", "removeFetcher"]);
    expect(lifecycleStateOf(actor.getSnapshot())).toBe("PAUSING");
    expect(names(pendingEffectsOf(actor.getSnapshot()))).toEqual(["markReadOnly", "removeFetcher"]);
    actor.stop();
  });
});
