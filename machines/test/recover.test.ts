import { describe, expect, it } from "vitest";
import {
  InvalidMirrorStateError,
  lifecycleStateOf,
  type MirrorPartitionSnapshot,
  recoverPartition,
  sendCommand,
  toStateRecord,
} from "../src/index";
import { COMMITTED, drive, fresh, names, START_TO_MIRRORING, type TestEvent } from "./helpers";

const RETRY = { baseMs: 100, capMs: 1000, maxAttempts: 2 };
const fail = (retryable: boolean): TestEvent => ({
  type: "EFFECT_FAILED",
  message: "source unreachable",
  retryable,
  random: 0.5,
});

function mirroring(): MirrorPartitionSnapshot {
  return drive(recoverPartition({ retry: RETRY }).snapshot, START_TO_MIRRORING).snapshot;
}

/** A MIRRORING partition failed until its retries ran out: FAILED, RetryAttempt -1. */
function exhausted(): MirrorPartitionSnapshot {
  let s = mirroring();
  for (let i = 0; i < RETRY.maxAttempts; i++)
    s = drive(s, [fail(true), COMMITTED, { type: "RETRY_TIMER_FIRED" }, COMMITTED]).snapshot;
  s = drive(s, [fail(true), COMMITTED]).snapshot;
  expect(toStateRecord(s)).toMatchObject({ state: "FAILED", retryAttempt: -1 });
  return s;
}

describe("RECOVER: the operator's retry of a FAILED partition (RecoverMirrorTopics)", () => {
  it("a partition out of attempts resumes where its retry would, with a fresh attempt budget", () => {
    const step = sendCommand(exhausted(), { type: "RECOVER" });
    expect(names(step.effects)).toEqual(["appendStateRecord"]);
    const back = drive(step.snapshot, [COMMITTED]);
    expect(lifecycleStateOf(back.snapshot)).toBe("MIRRORING");
    expect(toStateRecord(back.snapshot)).toMatchObject({ retryAttempt: 0, errorMessage: null });
    // Aligned: no truncation, a fetcher from the local log end.
    expect(names(back.effects.flat())).toEqual(["addFetcher", "markReadOnly"]);
    // The budget is whole again: the next failure backs off from the first delay and retries.
    const failed = drive(back.snapshot, [fail(true), COMMITTED]);
    expect(toStateRecord(failed.snapshot).retryAttempt).toBe(0);
    expect(names(failed.effects[1] ?? [])).toContain("scheduleRetry");
  });

  it("a partition backing off cancels its retry timer first and does not wait for it", () => {
    const failed = drive(mirroring(), [fail(true), COMMITTED]).snapshot;
    expect(toStateRecord(failed).retryAttempt).toBe(0);
    const step = sendCommand(failed, { type: "RECOVER" });
    expect(names(step.effects)).toEqual(["cancelRetryTimer", "appendStateRecord"]);
    const back = drive(step.snapshot, [COMMITTED]).snapshot;
    expect(lifecycleStateOf(back)).toBe("MIRRORING");
  });

  it("follows the topic's pause as it is now, and one that never aligned starts over in PREPARING", () => {
    // Failed while paused, resumed since: the recover resumes MIRRORING; still paused: back to PAUSED.
    const pausedThenFailed = drive(mirroring(), [
      { type: "PAUSE" },
      COMMITTED,
      { type: "FETCHER_REMOVED", latestMirroredEpoch: 0 },
      COMMITTED,
      { type: "FAIL", message: "x", retryable: false, random: 0.1 },
      COMMITTED,
    ]).snapshot;
    const paused = drive(sendCommand(pausedThenFailed, { type: "RECOVER", pauseRequested: true }).snapshot, [
      COMMITTED,
    ]);
    expect(lifecycleStateOf(paused.snapshot)).toBe("PAUSED");
    expect(names(paused.effects.flat())).not.toContain("addFetcher");
    const resumed = drive(
      sendCommand(pausedThenFailed, { type: "RECOVER", pauseRequested: false }).snapshot,
      [COMMITTED],
    );
    expect(lifecycleStateOf(resumed.snapshot)).toBe("MIRRORING");
    expect(names(resumed.effects.flat())).toContain("addFetcher");

    const neverAligned = drive(fresh(), [{ type: "START" }, COMMITTED, fail(false), COMMITTED]).snapshot;
    expect(toStateRecord(neverAligned).retryAttempt).toBe(-1);
    const r = drive(sendCommand(neverAligned, { type: "RECOVER" }).snapshot, [
      COMMITTED,
      { type: "MIRROR_LOOP_CHECKED" },
    ]);
    expect(lifecycleStateOf(r.snapshot)).toBe("PREPARING");
    expect(names(r.effects.at(-1) ?? [])).toEqual(["lookupLastMirrorEpoch"]);
  });

  it("a failover that failed resumes STOPPING", () => {
    const s = drive(mirroring(), [{ type: "STOP" }, COMMITTED, fail(false), COMMITTED]).snapshot;
    expect(toStateRecord(s)).toMatchObject({ state: "FAILED", previousState: "STOPPING", retryAttempt: -1 });
    const back = drive(sendCommand(s, { type: "RECOVER" }).snapshot, [COMMITTED]).snapshot;
    expect(lifecycleStateOf(back)).toBe("STOPPING");
  });

  it("is refused outside FAILED, naming the state, and while a change waits for its append", () => {
    expect(() => sendCommand(mirroring(), { type: "RECOVER" })).toThrow(InvalidMirrorStateError);
    expect(() => sendCommand(mirroring(), { type: "RECOVER" })).toThrow(
      /Cannot RECOVER mirror partition in state MIRRORING: RECOVER is accepted only in FAILED/,
    );
    const waiting = sendCommand(exhausted(), { type: "RECOVER" }).snapshot;
    expect(() => sendCommand(waiting, { type: "RECOVER" })).toThrow(/waiting for its __mirror_state append/);
  });
});
