import { describe, expect, it } from "vitest";
import { lifecycleStateOf, recoverPartition, toStateRecord } from "../src/index";
import { COMMITTED, drive, lastAppended, START_TO_MIRRORING, type TestEvent } from "./helpers";

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
