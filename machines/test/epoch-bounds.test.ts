// The leader-epoch rules of a MIRRORING partition at their exact bounds (spec §4 EPOCH_FENCING and the
// proactive bump; the LME rule of PREPARING). A narrowed Stryker run over their guards found the bounds
// unpinned: `>` vs `>=` and a missing null check all survived.
import { describe, expect, it } from "vitest";
import {
  applyEvent,
  LEADER_EPOCH_BUMP_THRESHOLD,
  lifecycleStateOf,
  type MirrorPartitionSnapshot,
} from "../src/index";
import { COMMITTED, drive, fresh, names, START_TO_MIRRORING } from "./helpers";

/** MIRRORING with the given local leader epoch and no batch observed above epoch 0. */
function mirroring(localLeaderEpoch: number): MirrorPartitionSnapshot {
  const s = drive(fresh(), START_TO_MIRRORING).snapshot;
  return drive(s, [{ type: "EPOCH_OBSERVED", batchEpoch: 0, localLeaderEpoch }]).snapshot;
}

describe("EPOCH_FENCING starts strictly above the local epoch", () => {
  it("a batch at the local epoch is mirrored on (no fencing, no new record)", () => {
    const step = applyEvent(mirroring(20), { type: "EPOCH_OBSERVED", batchEpoch: 20, localLeaderEpoch: 20 });
    expect(lifecycleStateOf(step.snapshot)).toBe("MIRRORING");
    expect(names(step.effects)).not.toContain("appendStateRecord");
    expect(names(step.effects)).not.toContain("holdAppends");
  });

  it("a batch one above it fences: the change to EPOCH_FENCING is appended", () => {
    const step = applyEvent(mirroring(20), { type: "EPOCH_OBSERVED", batchEpoch: 21, localLeaderEpoch: 20 });
    expect(names(step.effects)).toEqual(["appendStateRecord"]);
    const fenced = drive(step.snapshot, [COMMITTED]);
    expect(lifecycleStateOf(fenced.snapshot)).toBe("EPOCH_FENCING");
  });
});

describe("observations", () => {
  it("one that advances neither the batch epoch nor the local epoch changes nothing", () => {
    const s = drive(mirroring(20), [
      { type: "EPOCH_OBSERVED", batchEpoch: 5, localLeaderEpoch: 20 },
    ]).snapshot;
    expect(applyEvent(s, { type: "EPOCH_OBSERVED", batchEpoch: 5, localLeaderEpoch: 20 }).changed).toBe(
      false,
    );
    expect(applyEvent(s, { type: "EPOCH_OBSERVED", batchEpoch: 4, localLeaderEpoch: 19 }).changed).toBe(
      false,
    );
    const higherBatch = applyEvent(s, { type: "EPOCH_OBSERVED", batchEpoch: 6, localLeaderEpoch: 20 });
    expect(higherBatch.snapshot.context.highestBatchEpoch).toBe(6);
    const higherLocal = applyEvent(s, { type: "EPOCH_OBSERVED", batchEpoch: 5, localLeaderEpoch: 21 });
    expect(higherLocal.snapshot.context.localLeaderEpoch).toBe(21);
  });
});

describe("the proactive bump is asked from the threshold on, once, and only its own answer counts", () => {
  const local = 20;
  const edge = local - LEADER_EPOCH_BUMP_THRESHOLD;

  it(`a batch at local - ${LEADER_EPOCH_BUMP_THRESHOLD} asks for it; one below does not`, () => {
    const at = applyEvent(mirroring(local), {
      type: "EPOCH_OBSERVED",
      batchEpoch: edge,
      localLeaderEpoch: local,
    });
    expect(at.effects).toEqual([
      { type: "bumpLeaderEpoch", params: { stateEpoch: 2, minLeaderEpoch: local + 10 } },
    ]);
    const below = applyEvent(mirroring(local), {
      type: "EPOCH_OBSERVED",
      batchEpoch: edge - 1,
      localLeaderEpoch: local,
    });
    expect(names(below.effects)).not.toContain("bumpLeaderEpoch");
    expect(below.snapshot.context.proactiveBumpMin).toBeNull();
  });

  it("an EPOCH_BUMPED when no bump was asked is ignored", () => {
    const s = mirroring(local);
    expect(s.context.proactiveBumpMin).toBeNull();
    expect(applyEvent(s, { type: "EPOCH_BUMPED", stateEpoch: 2, leaderEpoch: 40 }).changed).toBe(false);
  });
});

describe("PREPARING: an LME of 0 is a known LME", () => {
  it("LME 0 truncates to epoch 0; only -1 (unknown) truncates fully", () => {
    const prepared = (lme: number) =>
      drive(fresh(), [
        { type: "START" },
        COMMITTED,
        { type: "MIRROR_LOOP_CHECKED" },
        { type: "LME_FOUND", lme },
      ]).effects.at(-1);
    expect(prepared(0)).toEqual([{ type: "truncateToEpoch", params: { stateEpoch: 1, lme: 0 } }]);
    expect(names(prepared(-1) ?? [])).toEqual(["truncateFully"]);
  });
});
