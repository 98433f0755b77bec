import { describe, expect, it } from "vitest";
import { type DivergenceLocalView, divergenceTruncationOffset, LeaderEpochCache } from "../src/index";

/** A local log with epochs 2@10, 4@20, 7@35, log end 50 and the given high watermark. */
function local(highWatermark: bigint, logEndOffset = 50n): DivergenceLocalView {
  const cache = new LeaderEpochCache([
    { epoch: 2, startOffset: 10n },
    { epoch: 4, startOffset: 20n },
    { epoch: 7, startOffset: 35n },
  ]);
  return { logEndOffset, highWatermark, endOffsetForEpoch: (e) => cache.endOffsetFor(e, logEndOffset) };
}

describe("divergenceTruncationOffset (Kafka's follower, KIP-101/279/320)", () => {
  it("an UNDEFINED answer truncates to the high watermark, never to the log start", () => {
    expect(divergenceTruncationOffset(local(42n), { epoch: -1, endOffset: -1n })).toBe(42n);
    // A high watermark above the log end (a leader's view) is bounded by the log end.
    expect(divergenceTruncationOffset(local(60n), { epoch: -1, endOffset: -1n })).toBe(50n);
  });

  it("the same epoch on both sides: the smaller end offset", () => {
    expect(divergenceTruncationOffset(local(0n), { epoch: 4, endOffset: 30n })).toBe(30n);
    expect(divergenceTruncationOffset(local(0n), { epoch: 4, endOffset: 40n })).toBe(35n);
    expect(divergenceTruncationOffset(local(0n), { epoch: 7, endOffset: 45n })).toBe(45n);
  });

  it("an epoch the local log does not have: the local end of its largest epoch below it (an intermediate step)", () => {
    // The leader ends epoch 5 at 48; locally epoch 4 ends at 35 (epoch 7 follows): truncate to 35, not 48.
    expect(divergenceTruncationOffset(local(0n), { epoch: 5, endOffset: 48n })).toBe(35n);
  });

  it("an epoch below every local epoch: the leader's end offset", () => {
    // Locally, epoch 1 is below the first entry: Kafka answers (1, 10), the start of the known history.
    expect(divergenceTruncationOffset(local(0n), { epoch: 1, endOffset: 5n })).toBe(5n);
    expect(divergenceTruncationOffset(local(0n), { epoch: 1, endOffset: 30n })).toBe(10n);
  });

  it("never above the local log end", () => {
    expect(divergenceTruncationOffset(local(0n), { epoch: 7, endOffset: 80n })).toBe(50n);
    const empty: DivergenceLocalView = {
      logEndOffset: 0n,
      highWatermark: 0n,
      endOffsetForEpoch: (e) => new LeaderEpochCache().endOffsetFor(e, 0n),
    };
    expect(divergenceTruncationOffset(empty, { epoch: 3, endOffset: 9n })).toBe(0n);
  });
});
