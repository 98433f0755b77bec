import { describe, expect, it } from "vitest";
import { lifecycleStateOf, recoverPartition } from "../src/index";
import { COMMITTED, drive, type TestEvent } from "./helpers";

/**
 * A first failback (no LME on this side) whose PREPARING truncation cut the log, recovered from its record
 * before the cut was recorded: neither the record nor the log's epochs tell the cut, so the log counts as
 * the topic's own. Its removal writes no PID reset and aborts only hanging transactions (KIP-664): a source
 * transaction the cut reopened, which no transaction coordinator here will end.
 */
const firstFailbackPreparing = {
  state: "PREPARING",
  leaderEpoch: -1,
  stateEpoch: 1,
  errorMessage: null,
  retryAttempt: 0,
  previousState: "UNKNOWN",
  lastMirrorEpoch: -1,
} as const;

const types = (effects: readonly (readonly { type: string }[])[]) => effects.flat().map((e) => e.type);

describe("a removal before a recorded truncation aborts the hanging transactions only", () => {
  it("a recovered first failback's removal: abortHangingTransactions, no abortOpenTransactions, no PID reset", () => {
    // The log's latest epoch (5) says nothing: with LME -1 no epoch tells a cut.
    const recovered = recoverPartition({ record: firstFailbackPreparing, logLatestEpoch: 5 });
    expect(recovered.snapshot.context.holdsMirroredData).toBe(false);
    const r = drive(recovered.snapshot, [
      { type: "STOP" },
      COMMITTED,
      { type: "FETCHER_REMOVED", latestMirroredEpoch: 5 },
      { type: "LME_RECORDED" },
      { type: "EPOCH_BUMPED", leaderEpoch: 60 },
    ]);
    expect(types(r.effects)).not.toContain("abortOpenTransactions");
    // Once the LME is recorded and the epoch bumped; STOPPED commits only once they are closed.
    expect(r.effects.at(-1)?.map((e) => e.type)).toEqual(["abortHangingTransactions"]);
    const stopped = drive(r.snapshot, [{ type: "TXNS_ABORTED" }, COMMITTED]);
    expect(types(stopped.effects)).toEqual(["appendStateRecord", "clearReadOnly"]);
    expect(lifecycleStateOf(stopped.snapshot)).toBe("STOPPED");
  });

  it("a transaction coordinator's state not known: the failover fails and retries STOPPING, asking again", () => {
    const recovered = recoverPartition({ record: firstFailbackPreparing, logLatestEpoch: 5 });
    const toAbort = (bumpedTo: number): TestEvent[] => [
      { type: "FETCHER_REMOVED", latestMirroredEpoch: 5 },
      { type: "LME_RECORDED" },
      { type: "EPOCH_BUMPED", leaderEpoch: bumpedTo },
    ];
    const failed = drive(recovered.snapshot, [
      { type: "STOP" },
      COMMITTED,
      ...toAbort(60),
      { type: "EFFECT_FAILED", message: "coordinator not loaded", retryable: true, random: 0.5 },
      COMMITTED,
    ]);
    expect(lifecycleStateOf(failed.snapshot)).toBe("FAILED");
    const retried = drive(failed.snapshot, [{ type: "RETRY_TIMER_FIRED" }, COMMITTED, ...toAbort(90)]);
    expect(lifecycleStateOf(retried.snapshot)).toBe("STOPPING");
    expect(types(retried.effects)).toContain("abortHangingTransactions");
    expect(types(retried.effects)).not.toContain("abortOpenTransactions");
    expect(types(retried.effects)).not.toContain("appendPidReset");
  });
});
