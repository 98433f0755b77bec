import { describe, expect, it } from "vitest";
import { formatLeaderEpochCheckpoint, LeaderEpochCache, parseLeaderEpochCheckpoint } from "../src/index";

describe("LeaderEpochCache", () => {
  const cache = () =>
    new LeaderEpochCache([
      { epoch: 2, startOffset: 10n },
      { epoch: 4, startOffset: 20n },
      { epoch: 7, startOffset: 35n },
    ]);

  it("answers the latest epoch with the log end offset", () => {
    expect(cache().endOffsetFor(7, 50n)).toEqual({ epoch: 7, endOffset: 50n });
  });

  it("answers a known earlier epoch with the next epoch's start", () => {
    expect(cache().endOffsetFor(4, 50n)).toEqual({ epoch: 4, endOffset: 35n });
    expect(cache().endOffsetFor(2, 50n)).toEqual({ epoch: 2, endOffset: 20n });
  });

  it("answers an unknown epoch between entries with the largest epoch below it", () => {
    expect(cache().endOffsetFor(3, 50n)).toEqual({ epoch: 2, endOffset: 20n });
    expect(cache().endOffsetFor(6, 50n)).toEqual({ epoch: 4, endOffset: 35n });
  });

  it("answers an epoch below the first entry with the requested epoch and the first start offset (Kafka)", () => {
    expect(cache().endOffsetFor(1, 50n)).toEqual({ epoch: 1, endOffset: 10n });
  });

  it("answers UNDEFINED for -1, an epoch above the latest, and an empty cache", () => {
    expect(cache().endOffsetFor(-1, 50n)).toEqual({ epoch: -1, endOffset: -1n });
    expect(cache().endOffsetFor(8, 50n)).toEqual({ epoch: -1, endOffset: -1n });
    expect(new LeaderEpochCache().endOffsetFor(0, 0n)).toEqual({ epoch: -1, endOffset: -1n });
  });

  it("assign keeps the cache monotonic", () => {
    const c = cache();
    expect(c.assign(7, 40n)).toBe(false);
    expect(c.assign(5, 30n)).toBe(true);
    expect(c.entries()).toEqual([
      { epoch: 2, startOffset: 10n },
      { epoch: 4, startOffset: 20n },
      { epoch: 5, startOffset: 30n },
    ]);
  });

  it("truncates from the end and from the start", () => {
    const c = cache();
    expect(c.truncateFromEnd(20n)).toBe(true);
    expect(c.entries()).toEqual([{ epoch: 2, startOffset: 10n }]);
    const d = cache();
    expect(d.truncateFromStart(25n)).toBe(true);
    expect(d.entries()).toEqual([
      { epoch: 4, startOffset: 25n },
      { epoch: 7, startOffset: 35n },
    ]);
  });

  it("round-trips Kafka's checkpoint text format", () => {
    const text = formatLeaderEpochCheckpoint(cache().entries());
    expect(text).toBe("0\n3\n2 10\n4 20\n7 35\n");
    expect(parseLeaderEpochCheckpoint(text)).toEqual(cache().entries());
    expect(() => parseLeaderEpochCheckpoint("0\n2\n1 0\n")).toThrow(/declares 2 entries/);
  });
});
