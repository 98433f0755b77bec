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
import { COMMITTED, drive, fresh, names, START_TO_MIRRORING, STOP_TO_STOPPED } from "./helpers";

function mirroring(): MirrorPartitionSnapshot {
  return drive(fresh(), START_TO_MIRRORING).snapshot;
}

describe("start: UNKNOWN -> PREPARING -> MIRRORING", () => {
  it("commits each change before its effects and walks PREPARING's steps in order", () => {
    const s0 = fresh();
    expect(lifecycleStateOf(s0)).toBe("UNKNOWN");
    const { snapshot, effects } = drive(s0, START_TO_MIRRORING);
    expect(effects.map(names)).toEqual([
      ["appendStateRecord"], // START: nothing runs until the record is appended
      ["markReadOnly", "checkMirrorLoop"],
      ["lookupLastMirrorEpoch"],
      ["truncateFully"], // LME -1: a plain Kafka source
      ["awaitIsrTruncated"],
      ["appendStateRecord"],
      ["addFetcher"],
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
    expect(lifecycleStateOf(snapshot)).toBe("MIRRORING");
    expect(toStateRecord(snapshot)).toMatchObject({
      state: "MIRRORING",
      stateEpoch: 2,
      previousState: "PREPARING",
    });
  });

  it("truncates to the source's LME when it knows one (failback)", () => {
    const { effects } = drive(fresh(), [
      { type: "START" },
      COMMITTED,
      { type: "MIRROR_LOOP_CHECKED" },
      { type: "LME_FOUND", lme: 5 },
    ]);
    expect(effects.at(-1)).toEqual([{ type: "truncateToEpoch", params: { lme: 5 } }]);
  });
});

describe("failover: MIRRORING -> STOPPING -> STOPPED", () => {
  it("removes the fetcher, then records the LME and bumps the epoch in parallel, then aborts, then PID reset", () => {
    const { snapshot, effects } = drive(mirroring(), STOP_TO_STOPPED);
    expect(effects.map(names)).toEqual([
      ["appendStateRecord"],
      ["removeFetcher"],
      ["recordLastMirrorEpoch", "bumpLeaderEpoch"],
      [],
      ["abortOpenTransactions"],
      ["appendPidReset"],
      ["appendStateRecord"],
      ["clearReadOnly"],
    ]);
    expect(lifecycleStateOf(snapshot)).toBe("STOPPED");
    expect(snapshot.context.lastMirrorEpoch).toBe(7);
    expect(toStateRecord(snapshot)).toMatchObject({ state: "STOPPED", leaderEpoch: 17, stateEpoch: 4 });
  });

  it("waits for both parallel steps, in either order", () => {
    const s = drive(mirroring(), [
      { type: "STOP" },
      COMMITTED,
      { type: "FETCHER_REMOVED" },
      { type: "EPOCH_BUMPED", leaderEpoch: 9 },
    ]).snapshot;
    expect(applyEvent(s, { type: "TXNS_ABORTED" }).changed).toBe(false);
    const after = drive(s, [{ type: "LME_RECORDED", lme: 3 }]);
    expect(after.effects).toEqual([[{ type: "abortOpenTransactions" }]]);
  });

  it("re-entering STOPPING after a takeover restarts its idempotent steps", () => {
    const half = drive(mirroring(), STOP_TO_STOPPED.slice(0, 6)).snapshot; // aborting transactions
    const record = { ...toStateRecord(half), lastMirrorEpoch: half.context.lastMirrorEpoch };
    const recovered = recoverPartition({ record });
    expect(lifecycleStateOf(recovered.snapshot)).toBe("STOPPING");
    expect(recovered.effects).toEqual([{ type: "removeFetcher" }]);
  });
});

describe("restart a stopped mirror", () => {
  it("STOPPED -> PREPARING -> MIRRORING, read-only again", () => {
    const stopped = drive(mirroring(), STOP_TO_STOPPED).snapshot;
    const { snapshot, effects } = drive(stopped, [{ type: "START" }, COMMITTED]);
    expect(effects[1]).toEqual([{ type: "markReadOnly" }, { type: "checkMirrorLoop" }]);
    expect(lifecycleStateOf(snapshot)).toBe("PREPARING");
    expect(lifecycleStateOf(drive(snapshot, START_TO_MIRRORING.slice(2)).snapshot)).toBe("MIRRORING");
  });
});

describe("pause and resume", () => {
  it("MIRRORING -> PAUSING -> PAUSED -> MIRRORING with no truncation", () => {
    const { snapshot, effects } = drive(mirroring(), [
      { type: "PAUSE" },
      COMMITTED,
      { type: "FETCHER_REMOVED" },
      COMMITTED,
      { type: "RESUME" },
      COMMITTED,
    ]);
    expect(effects.map(names)).toEqual([
      ["appendStateRecord"],
      ["removeFetcher"],
      ["appendStateRecord"],
      [],
      ["appendStateRecord"],
      ["addFetcher"],
    ]);
    expect(lifecycleStateOf(snapshot)).toBe("MIRRORING");
  });

  it("STOP while PAUSING wins the race", () => {
    const s = drive(mirroring(), [{ type: "PAUSE" }, COMMITTED, { type: "STOP" }, COMMITTED]).snapshot;
    expect(lifecycleStateOf(s)).toBe("STOPPING");
  });
});

describe("FAILED, then remove, then add back", () => {
  it("a non-retryable failure waits for the operator; STOP fails over; START mirrors again", () => {
    const failed = drive(mirroring(), [
      { type: "FAIL", message: "source cluster id changed", retryable: false, random: 0.3 },
      COMMITTED,
    ]);
    expect(failed.effects[1]).toEqual([{ type: "removeFetcher" }]); // no retry timer
    expect(toStateRecord(failed.snapshot)).toEqual({
      state: "FAILED",
      leaderEpoch: -1,
      stateEpoch: 3,
      errorMessage: "source cluster id changed",
      retryAttempt: -1,
      previousState: "MIRRORING",
    });
    expect(applyEvent(failed.snapshot, { type: "RETRY_TIMER_FIRED" }).changed).toBe(false);
    const stopped = drive(failed.snapshot, STOP_TO_STOPPED).snapshot;
    expect(lifecycleStateOf(stopped)).toBe("STOPPED");
    const back = drive(stopped, START_TO_MIRRORING).snapshot;
    expect(toStateRecord(back)).toMatchObject({ state: "MIRRORING", retryAttempt: 0, errorMessage: null });
  });

  it("retryable failures back off exponentially with full jitter, then give up at the attempt limit", () => {
    const retry = { baseMs: 100, capMs: 1000, maxAttempts: 3 };
    let s = drive(recoverPartition({ retry }).snapshot, START_TO_MIRRORING).snapshot;
    const delays: number[] = [];
    const failAndRetry = [
      { type: "EFFECT_FAILED", message: "broker down", retryable: true, random: 0.5 },
      COMMITTED,
    ] as const;
    for (let i = 0; i < 3; i++) {
      const failed = drive(s, failAndRetry);
      const scheduled = failed.effects[1]?.find((e) => e.type === "scheduleRetry");
      expect(scheduled).toBeDefined();
      if (scheduled?.type === "scheduleRetry") delays.push(scheduled.params.delayMs);
      // The retry goes back to PREPARING and fails there again.
      s = drive(failed.snapshot, [{ type: "RETRY_TIMER_FIRED" }, COMMITTED]).snapshot;
      expect(lifecycleStateOf(s)).toBe("PREPARING");
      expect(s.context.record.retryAttempt).toBe(i + 1);
    }
    expect(delays).toEqual([50, 100, 200]);
    const exhausted = drive(s, failAndRetry);
    expect(names(exhausted.effects[1] ?? [])).toEqual(["removeFetcher"]);
    expect(toStateRecord(exhausted.snapshot)).toMatchObject({
      retryAttempt: -1,
      errorMessage: "broker down (gave up after 3 retries)",
    });
  });

  it("a failure during failover retries STOPPING, not PREPARING", () => {
    const s = drive(mirroring(), [
      { type: "STOP" },
      COMMITTED,
      { type: "EFFECT_FAILED", message: "controller unavailable", retryable: true, random: 0 },
      COMMITTED,
      { type: "RETRY_TIMER_FIRED" },
      COMMITTED,
    ]);
    expect(lifecycleStateOf(s.snapshot)).toBe("STOPPING");
    expect(s.effects[4]).toEqual([
      { type: "cancelRetryTimer" },
      expect.objectContaining({ type: "appendStateRecord" }),
    ]);
  });
});

describe("the commit protocol", () => {
  it("a failed or fenced append leaves the old state and starts no effects", () => {
    for (const failure of [
      { type: "COMMIT_FAILED", message: "timeout" },
      { type: "FENCED", message: "stale coordinator epoch" },
    ] as const) {
      const before = mirroring();
      const { snapshot, effects } = drive(before, [{ type: "PAUSE" }, failure]);
      expect(effects[1]).toEqual([]);
      expect(lifecycleStateOf(snapshot)).toBe("MIRRORING");
      expect(toStateRecord(snapshot)).toEqual(toStateRecord(before));
      expect(snapshot.context.pending).toBeNull();
    }
  });

  it("while a change is pending the lifecycle state is still the old one and other commands are refused", () => {
    const pending = drive(mirroring(), [{ type: "PAUSE" }]).snapshot;
    expect(lifecycleStateOf(pending)).toBe("MIRRORING");
    expect(pending.context.pending?.to).toBe("PAUSING");
    expect(() => sendCommand(pending, { type: "STOP" })).toThrow(/waiting for its __mirror_state append/);
  });
});

describe("EPOCH_FENCING", () => {
  it("a batch above the local epoch fences appends until the bump, then mirrors again", () => {
    const s = drive(mirroring(), [{ type: "EPOCH_BUMPED", leaderEpoch: 20 }]).snapshot;
    const near = applyEvent(s, { type: "EPOCH_OBSERVED", batchEpoch: 18 });
    expect(near.effects).toEqual([{ type: "bumpLeaderEpoch", params: { minLeaderEpoch: 30 } }]); // proactive
    expect(applyEvent(s, { type: "EPOCH_OBSERVED", batchEpoch: 5 }).changed).toBe(false);
    const fenced = drive(s, [{ type: "EPOCH_OBSERVED", batchEpoch: 25 }, COMMITTED]);
    expect(fenced.effects[1]).toEqual([{ type: "bumpLeaderEpoch", params: { minLeaderEpoch: 35 } }]);
    expect(lifecycleStateOf(fenced.snapshot)).toBe("EPOCH_FENCING");
    const back = drive(fenced.snapshot, [{ type: "EPOCH_BUMPED", leaderEpoch: 35 }, COMMITTED]);
    expect(lifecycleStateOf(back.snapshot)).toBe("MIRRORING");
    expect(toStateRecord(back.snapshot).leaderEpoch).toBe(35);
  });
});

describe("refused commands", () => {
  it("throw InvalidMirrorStateError naming the state and the command, and change nothing", () => {
    const s = mirroring();
    const before = JSON.stringify({ value: s.value, context: s.context });
    let error: unknown;
    try {
      sendCommand(s, { type: "RESUME" });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InvalidMirrorStateError);
    const e = error as InvalidMirrorStateError;
    expect(e).toMatchObject({
      name: "InvalidMirrorStateError",
      code: -1,
      retriable: false,
      state: "MIRRORING",
      command: "RESUME",
    });
    expect(e.message).toMatch(
      /Cannot RESUME mirror partition in state MIRRORING: RESUME moves it to MIRRORING, which is valid only from .*PAUSED/,
    );
    expect(JSON.stringify({ value: s.value, context: s.context })).toBe(before);
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
    const actor = createActor(machine, {
      input: {
        record: {
          state: "MIRRORING",
          leaderEpoch: 4,
          stateEpoch: 9,
          errorMessage: null,
          retryAttempt: 0,
          previousState: "PREPARING",
          lastMirrorEpoch: -1,
        },
      },
    });
    actor.start();
    expect(ran).toEqual(["addFetcher"]);
    actor.send({ type: "PAUSE" });
    expect(ran).toEqual(["addFetcher", "append"]);
    actor.send(COMMITTED);
    expect(ran).toEqual(["addFetcher", "append", "removeFetcher"]);
    expect(lifecycleStateOf(actor.getSnapshot())).toBe("PAUSING");
    expect(pendingEffectsOf(actor.getSnapshot())).toEqual([{ type: "removeFetcher" }]);
    actor.stop();
  });
});
