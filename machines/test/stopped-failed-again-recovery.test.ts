import { describe, expect, it } from "vitest";
import { lifecycleStateOf, recoverPartition } from "../src/index";
import { COMMITTED, drive } from "./helpers";

/**
 * A STOPPED partition failed again once local producers wrote (a late fetch error): FAILED's retry runs
 * STOPPING with previous state FAILED, and the record keeps the episode's leaderEpoch (0), as the retry of a
 * failover that failed after MIRRORING does. Recovered by a new coordinator, the records alone cannot tell
 * the two apart; the log can: data above the recorded LME is the local producers'.
 */
const retriedStopping = {
  state: "STOPPING",
  leaderEpoch: 0,
  stateEpoch: 6,
  errorMessage: null,
  retryAttempt: 1,
  previousState: "FAILED",
  lastMirrorEpoch: -1,
} as const;

const resume = [
  { type: "FETCHER_REMOVED", latestMirroredEpoch: 10 },
  { type: "LME_RECORDED" },
  { type: "EPOCH_BUMPED", leaderEpoch: 21 },
] as const;

const types = (effects: readonly (readonly { type: string }[])[]) => effects.flat().map((e) => e.type);

describe("a recovered failover retried after STOPPED", () => {
  it("with local producers' data above the recorded LME: no ABORT of live transactions, no PID reset", () => {
    const recovered = recoverPartition({
      record: retriedStopping,
      logLatestEpoch: 10,
      localWritesAboveLme: true,
    });
    expect(recovered.snapshot.context.holdsMirroredData).toBe(false);
    const r = drive(recovered.snapshot, [...resume]);
    expect(types(r.effects)).not.toContain("abortOpenTransactions");
    expect(r.effects.at(-1)?.map((e) => e.type)).toEqual(["abortHangingTransactions"]);
    const stopped = drive(r.snapshot, [{ type: "TXNS_ABORTED" }, COMMITTED]);
    expect(types(stopped.effects)).not.toContain("appendPidReset");
    expect(lifecycleStateOf(stopped.snapshot)).toBe("STOPPED");
  });

  it("without them (none written, or no leader to read at the load): the markers and the PID reset, as before", () => {
    for (const localWritesAboveLme of [false, undefined]) {
      const recovered = recoverPartition({
        record: retriedStopping,
        logLatestEpoch: 10,
        ...(localWritesAboveLme === undefined ? {} : { localWritesAboveLme }),
      });
      expect(recovered.snapshot.context.holdsMirroredData).toBe(true);
      const r = drive(recovered.snapshot, [...resume, { type: "TXNS_ABORTED" }]);
      expect(types(r.effects)).toContain("abortOpenTransactions");
      expect(r.effects.at(-1)?.map((e) => e.type)).toEqual(["appendPidReset"]);
    }
  });

  it("a partition recovered MIRRORING or PAUSED holds mirrored data whatever the log says (a stale LME record)", () => {
    for (const state of ["MIRRORING", "PAUSED"] as const) {
      const recovered = recoverPartition({
        record: { ...retriedStopping, state, previousState: "PREPARING", lastMirrorEpoch: 3 },
        logLatestEpoch: 10,
        localWritesAboveLme: true,
      });
      expect(recovered.snapshot.context.holdsMirroredData).toBe(true);
    }
  });
});
