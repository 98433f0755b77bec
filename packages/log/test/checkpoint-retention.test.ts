import { describe, expect, it } from "vitest";
import {
  checkpointOffsets,
  MAX_CHECKPOINT_ENTRIES,
  OLDER_CHECKPOINTS,
  RECENT_CHECKPOINTS,
  type RetainedCheckpoint,
  retainCheckpoint,
} from "../src/checkpoint-retention";

/** Rolls `n` segments of one offset each (bases 0 to n - 1), each checkpoint holding `entries(i)` entries. */
function rolled(n: number, entries: (i: number) => number = () => 1): RetainedCheckpoint[] {
  const list: RetainedCheckpoint[] = [];
  for (let i = 0; i < n; i++) retainCheckpoint(list, { offset: BigInt(i), entries: entries(i) });
  return list;
}

const offsets = (list: readonly RetainedCheckpoint[]) => list.map((c) => Number(c.offset));
const largestGap = (xs: readonly number[]) => Math.max(...xs.slice(1).map((x, i) => x - xs[i]!));

describe("producer-state checkpoint retention", () => {
  it("keeps every checkpoint while there are few", () => {
    const n = RECENT_CHECKPOINTS + OLDER_CHECKPOINTS;
    expect(offsets(rolled(n))).toEqual(Array.from({ length: n }, (_, i) => i));
  });

  it("always keeps the latest ones and the oldest, and spreads the rest evenly over the log", () => {
    for (const n of [17, 40, 100, 1_000, 5_000]) {
      const kept = offsets(rolled(n));
      expect(kept).toHaveLength(RECENT_CHECKPOINTS + OLDER_CHECKPOINTS);
      expect(kept[0]).toBe(0);
      expect(kept.slice(-RECENT_CHECKPOINTS)).toEqual(
        Array.from({ length: RECENT_CHECKPOINTS }, (_, i) => n - RECENT_CHECKPOINTS + i),
      );
      // A truncation anywhere replays at most the gap below it: about twice an even share of the log.
      const even = n / OLDER_CHECKPOINTS;
      expect(largestGap(kept), `n=${n}: ${kept.join(",")}`).toBeLessThanOrEqual(Math.ceil(2 * even));
    }
  });

  it("drops older checkpoints first to stay within the entry budget, never a recent one", () => {
    const perCheckpoint = MAX_CHECKPOINT_ENTRIES / RECENT_CHECKPOINTS;
    const kept = rolled(50, () => perCheckpoint);
    expect(offsets(kept)).toEqual(Array.from({ length: RECENT_CHECKPOINTS }, (_, i) => 42 + i));
    // Small ones early, large ones late: older ones stay as long as the budget allows.
    const mixed = rolled(50, (i) => (i < 40 ? 10 : perCheckpoint / 2));
    const total = mixed.reduce((a, c) => a + c.entries, 0);
    expect(total).toBeLessThanOrEqual(MAX_CHECKPOINT_ENTRIES);
    expect(mixed.length).toBeGreaterThan(RECENT_CHECKPOINTS);
    expect(offsets(mixed).slice(-RECENT_CHECKPOINTS)).toEqual(offsets(rolled(50)).slice(-RECENT_CHECKPOINTS));
  });

  it("a replay checkpoints where the rolls would have kept checkpoints", () => {
    const bases = Array.from({ length: 300 }, (_, i) => BigInt(i * 16));
    const rolls: RetainedCheckpoint[] = [];
    for (const offset of bases) retainCheckpoint(rolls, { offset, entries: 3 });
    expect([...checkpointOffsets(bases)]).toEqual(rolls.map((c) => c.offset));
  });
});
