import { describe, expect, it } from "vitest";
import { applyEvent, lifecycleStateOf } from "../src/index";
import { COMMITTED, drive, fresh, names, START_TO_MIRRORING, type TestEvent, withEpoch } from "./helpers";

const noDestinationLeader: TestEvent = {
  type: "EFFECT_FAILED",
  message: "orders-0 has no leader on the destination; the fetcher step is retried after the election",
  retryable: true,
  random: 0.5,
};

/**
 * Soak `failback` FC_SEED=16 and 18 (x100) hung: a partition failed while its destination partition had no
 * leader, FAILED's entry (removeFetcher) then failed for the same reason, and that failure committed FAILED
 * again, which entered FAILED and ran removeFetcher again, without delay: 3,000 `__mirror_state` records a
 * second, virtual time stuck, for as long as the partition had no leader.
 */
describe("FAILED's own removeFetcher failing", () => {
  function failed() {
    const mirroring = drive(fresh(), START_TO_MIRRORING).snapshot;
    const { snapshot, effects } = drive(mirroring, [noDestinationLeader, COMMITTED]);
    expect(lifecycleStateOf(snapshot)).toBe("FAILED");
    expect(names(effects[1] ?? [])).toEqual(["removeFetcher", "scheduleRetry"]);
    return snapshot;
  }

  it("appends nothing and runs nothing: the retry timer armed on entry moves on after its backoff", () => {
    const before = failed();
    const step = applyEvent(before, withEpoch(before, noDestinationLeader));
    expect(step.effects).toEqual([]);
    expect(lifecycleStateOf(step.snapshot)).toBe("FAILED");
    expect(step.snapshot.value).toEqual(before.value);
    expect(step.snapshot.context.record).toEqual(before.context.record);
    expect(step.snapshot.context.pending).toBeNull();
    const retry = drive(step.snapshot, [{ type: "RETRY_TIMER_FIRED" }]);
    expect(names(retry.effects[0] ?? [])).toEqual(["appendStateRecord"]);
  });

  it("still records a FAIL the coordinator sends while FAILED (e.g. the source topic was deleted)", () => {
    const before = failed();
    const step = applyEvent(
      before,
      withEpoch(before, {
        type: "FAIL",
        message: "the source topic was deleted",
        retryable: false,
        random: 0,
      }),
    );
    expect(names(step.effects)).toContain("appendStateRecord");
  });
});
