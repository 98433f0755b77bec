import { describe, expect, it } from "vitest";
import { applyEvent, lifecycleStateOf, recoverPartition, toStateRecord } from "../src/index";
import { COMMITTED, drive, lastAppended, START_TO_MIRRORING, type TestEvent, withEpoch } from "./helpers";

const fail: TestEvent = { type: "FAIL", message: "fetch failed", retryable: true, random: 0.5 };
const timedOut: TestEvent = { type: "COMMIT_FAILED", message: "timed out", random: 0.5, maybeAppended: true };
const refused: TestEvent = { type: "COMMIT_FAILED", message: "not enough replicas", random: 0.5 };

/** A MIRRORING partition whose PAUSING change waits for its append. */
function pausing() {
  const s = drive(recoverPartition({}).snapshot, START_TO_MIRRORING).snapshot;
  return drive(s, [{ type: "PAUSE" }]).snapshot;
}

describe("a failure behind a state record whose append may have reached the log", () => {
  it("waits for that record to commit, then commits FAILED at the next stateEpoch", () => {
    const start = pausing();
    const epoch = start.context.pending!.record.stateEpoch;
    // Timed out (on the log, unacknowledged), then a failure while the append waits for its retry; the
    // retry is refused outright (that one missed the log, the first may not have).
    const retry: TestEvent = { type: "COMMIT_RETRY_TIMER_FIRED" };
    const r = drive(start, [timedOut, fail, retry, refused, retry]);
    // Still the same record, appended again: no FAILED record took its stateEpoch.
    const appended = r.effects.flat().filter((e) => e.type === "appendStateRecord");
    expect(appended.map((e) => (e.params as { state: string }).state)).toEqual(["PAUSING", "PAUSING"]);
    const done = drive(r.snapshot, [COMMITTED]);
    expect(lastAppended(done.effects)).toMatchObject({ state: "FAILED", stateEpoch: epoch + 1 });
    const failed = drive(done.snapshot, [COMMITTED]).snapshot;
    expect(lifecycleStateOf(failed)).toBe("FAILED");
    expect(toStateRecord(failed)).toMatchObject({ stateEpoch: epoch + 1, previousState: "PAUSING" });
  });

  it("a record that surely missed the log is still replaced by FAILED at once (at its stateEpoch)", () => {
    const start = pausing();
    const epoch = start.context.pending!.record.stateEpoch;
    const r = drive(start, [refused, fail]);
    expect(lastAppended(r.effects)).toMatchObject({ state: "FAILED", stateEpoch: epoch });
  });
});

describe("a failure behind a record that may be on the log: the cases around the deferral", () => {
  const retry: TestEvent = { type: "COMMIT_RETRY_TIMER_FIRED" };
  const appendedStates = (effects: readonly (readonly { type: string; params: unknown }[])[]) =>
    effects
      .flat()
      .filter((e) => e.type === "appendStateRecord")
      .map((e) => {
        const r = e.params as { state: string; stateEpoch: number };
        return `${r.state}@${r.stateEpoch}`;
      });

  it("a pending FAILED that timed out, then another failure: that FAILED commits, the second takes the next stateEpoch", () => {
    const start = pausing();
    const epoch = start.context.pending!.record.stateEpoch;
    const second: TestEvent = { type: "FAIL", message: "source down", retryable: true, random: 0.5 };
    // PAUSING surely missed the log: the failure replaces it with FAILED at its stateEpoch; that FAILED
    // record times out (may be on the log) and a second failure arrives while it waits for its retry.
    const r = drive(start, [refused, fail, timedOut, second, retry, COMMITTED]);
    expect(appendedStates(r.effects)).toEqual([`FAILED@${epoch}`, `FAILED@${epoch}`, `FAILED@${epoch + 1}`]);
    expect(lastAppended(r.effects)).toMatchObject({ errorMessage: "source down" });
    const failed = drive(r.snapshot, [COMMITTED]).snapshot;
    expect(toStateRecord(failed)).toMatchObject({ state: "FAILED", stateEpoch: epoch + 1 });
    expect(failed.context.deferredFailure).toBeNull();
  });

  it("a pending STOPPING that timed out drops a failure (the failover needs nothing from the source) and commits", () => {
    const mirroring = drive(recoverPartition({}).snapshot, START_TO_MIRRORING).snapshot;
    const stopping = drive(mirroring, [{ type: "STOP" }, timedOut]);
    const epoch = stopping.snapshot.context.pending!.record.stateEpoch;
    const dropped = applyEvent(stopping.snapshot, withEpoch(stopping.snapshot, fail));
    expect(dropped.snapshot.context.deferredFailure).toBeNull();
    const r = drive(dropped.snapshot, [retry, COMMITTED]);
    expect(appendedStates([...stopping.effects, ...r.effects])).toEqual([
      `STOPPING@${epoch}`,
      `STOPPING@${epoch}`,
    ]);
    expect(toStateRecord(r.snapshot)).toMatchObject({ state: "STOPPING", stateEpoch: epoch });
  });

  it("FENCED while a failure waits behind a record that may be on the log: the actor ends, no FAILED is appended", () => {
    const r = drive(pausing(), [timedOut, fail, { type: "FENCED", message: "another coordinator" }]);
    expect(r.snapshot.value).toBe("fenced");
    expect(appendedStates(r.effects)).toEqual([]);
  });
});
