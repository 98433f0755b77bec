import { describe, expect, it } from "vitest";
import { applyEvent, lifecycleStateOf } from "../src/index";
import { COMMITTED, drive, fresh, names, withEpoch } from "./helpers";

/**
 * A failover asked while PREPARING's mirror-loop check is in flight against a source that is down: the
 * check's failure arrives while the STOPPING record is being appended. It belongs to the state left, so it
 * must neither turn the failover into FAILED (whose retry then skipped the markers: a failover that writes
 * its ABORT markers and PID reset or not depending on an outage) nor replace the pending STOPPING.
 */
describe("a failover waiting for its STOPPING record", () => {
  function preparingThenStop() {
    const { snapshot } = drive(fresh(), [{ type: "START" }, COMMITTED]);
    expect(lifecycleStateOf(snapshot)).toBe("PREPARING");
    const loopCheckEpoch = snapshot.context.record.stateEpoch;
    const stop = drive(snapshot, [{ type: "STOP" }]).snapshot;
    return { stop, loopCheckEpoch };
  }
  const sourceDown = (stateEpoch: number) =>
    ({
      type: "EFFECT_FAILED",
      stateEpoch,
      message: "listMirrors failed: the source is unreachable",
      retryable: true,
      random: 0.5,
    }) as const;

  it("drops a failure of the state it leaves while the record is appended, then runs the failover's steps", () => {
    const { stop, loopCheckEpoch } = preparingThenStop();
    const failed = applyEvent(stop, sourceDown(loopCheckEpoch));
    const committed = applyEvent(failed.snapshot, withEpoch(failed.snapshot, COMMITTED));
    expect(lifecycleStateOf(committed.snapshot)).toBe("STOPPING");
    expect(committed.snapshot.context.deferredFailure).toBeNull();
    expect(names(committed.effects)).toContain("removeFetcher");
    // The rest of the failover decides on the markers as one without the outage does (the log was
    // PREPARING's, not a FAILED one's): this new topic's log never held mirrored data, so none either way.
    const rest = [
      { type: "FETCHER_REMOVED", latestMirroredEpoch: 0 },
      { type: "LME_RECORDED" },
      { type: "EPOCH_BUMPED", leaderEpoch: 30 },
      { type: "TXNS_ABORTED" },
    ] as const;
    const done = drive(committed.snapshot, rest);
    const undisturbed = drive(applyEvent(stop, withEpoch(stop, COMMITTED)).snapshot, rest);
    const steps = (r: typeof done) => r.effects.flat().map((e) => e.type);
    expect(steps(done)).toEqual(steps(undisturbed));
    expect(steps(done)).toEqual([
      "recordLastMirrorEpoch",
      "bumpLeaderEpoch",
      "abortHangingTransactions",
      "appendStateRecord",
    ]);
  });

  it("drops it while the append waits to be retried, and does not replace the pending STOPPING", () => {
    const { stop, loopCheckEpoch } = preparingThenStop();
    const retrying = drive(stop, [{ type: "COMMIT_FAILED", message: "not enough replicas", random: 0.5 }]);
    const failed = applyEvent(retrying.snapshot, sourceDown(loopCheckEpoch));
    expect(failed.snapshot.context.pending?.to).toBe("STOPPING");
    const done = drive(failed.snapshot, [{ type: "COMMIT_RETRY_TIMER_FIRED" }, COMMITTED]);
    expect(lifecycleStateOf(done.snapshot)).toBe("STOPPING");
  });

  it("still defers a failure that arrives while another change is appended (PAUSE)", () => {
    const { snapshot } = drive(fresh(), [{ type: "START" }, COMMITTED]);
    const mirroring = drive(snapshot, [
      { type: "MIRROR_LOOP_CHECKED" },
      { type: "LME_FOUND", lme: -1 },
      { type: "TRUNCATED" },
      { type: "ISR_TRUNCATED" },
      COMMITTED,
    ]).snapshot;
    const pausing = drive(mirroring, [{ type: "PAUSE" }]).snapshot;
    const failed = applyEvent(pausing, sourceDown(mirroring.context.record.stateEpoch));
    expect(failed.snapshot.context.deferredFailure).not.toBeNull();
  });
});
