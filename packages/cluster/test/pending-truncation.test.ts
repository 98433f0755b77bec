import { describe, expect, it } from "vitest";
import {
  addTruncation,
  cutsAfter,
  MAX_PENDING_CUTS,
  type PendingTruncation,
  settlesAny,
  settleTruncations,
} from "../src/pending-truncation";

const cut = (id: number, offset: bigint, full = false) => ({ id, offset, full });

function owing(...cuts: ReturnType<typeof cut>[]): PendingTruncation {
  return cuts.reduce<PendingTruncation | undefined>((o, c) => addTruncation(o, c), undefined)!;
}

describe("the cuts a replica owes", () => {
  it("combine as a replica that applied none cuts: the deeper cut, a full truncation wins", () => {
    expect(owing(cut(3, 5n), cut(7, 2n))).toMatchObject({ id: 7, offset: 2n, full: false });
    expect(owing(cut(3, 2n), cut(7, 5n))).toMatchObject({ id: 7, offset: 2n, full: false });
    expect(owing(cut(3, 9n, true), cut(7, 12n))).toMatchObject({ id: 7, offset: 9n, full: true });
    expect(owing(cut(3, 2n), cut(7, 40n, true))).toMatchObject({ id: 7, offset: 40n, full: true });
  });

  it("a replica that applied the first owes only the later ones", () => {
    const owed = owing(cut(3, 1n), cut(7, 4n), cut(9, 6n));
    expect(cutsAfter(owed, -1)).toMatchObject(cut(9, 1n));
    expect(cutsAfter(owed, 3)).toMatchObject(cut(9, 4n));
    expect(cutsAfter(owed, 8)).toMatchObject(cut(9, 6n));
    expect(cutsAfter(owed, 9)).toBeUndefined();
  });

  it("a report settles every cut up to its id, an older report too", () => {
    const owed = owing(cut(3, 1n), cut(7, 4n));
    expect(settlesAny(owed, 2)).toBe(false);
    expect(settlesAny(owed, 3)).toBe(true);
    expect(settleTruncations(owed, 3)).toEqual({ ...cut(7, 4n), cuts: [cut(7, 4n)] });
    expect(settleTruncations(owed, 7)).toBeUndefined();
    expect(settlesAny(undefined, 7)).toBe(false);
  });

  it(`keeps at most ${MAX_PENDING_CUTS} cuts, merging the two oldest`, () => {
    const cuts = Array.from({ length: MAX_PENDING_CUTS + 1 }, (_, i) => cut(i + 1, BigInt(100 - i)));
    const owed = owing(...cuts);
    expect(owed.cuts).toHaveLength(MAX_PENDING_CUTS);
    expect(owed.cuts[0]).toEqual(cut(2, 99n));
    expect(owed.cuts.at(-1)).toEqual(cut(MAX_PENDING_CUTS + 1, BigInt(100 - MAX_PENDING_CUTS)));
    expect(owed).toMatchObject({ id: MAX_PENDING_CUTS + 1, offset: BigInt(100 - MAX_PENDING_CUTS) });
  });
});

describe("the cap on the cuts a replica owes (review)", () => {
  it("never merges a cut with a later, shallower one: a replica that applied it would cut the later one deeper", () => {
    // Each cut shallower than the one before (the mirror re-aligned what it appended after the last one).
    const cuts = Array.from({ length: MAX_PENDING_CUTS + 2 }, (_, i) => cut(i + 1, BigInt(10 + i)));
    const owed = owing(...cuts);
    expect(owed.cuts).toEqual(cuts);
    expect(cutsAfter(owed, 1)).toMatchObject({ id: MAX_PENDING_CUTS + 2, offset: 11n });
  });

  it("merges the oldest pair whose later cut covers the earlier one", () => {
    const cuts = [
      cut(1, 10n),
      cut(2, 20n),
      ...Array.from({ length: MAX_PENDING_CUTS - 1 }, (_, i) => cut(i + 3, 30n)),
    ];
    const owed = owing(...cuts);
    expect(owed.cuts).toHaveLength(MAX_PENDING_CUTS);
    expect(owed.cuts.slice(0, 3)).toEqual([cut(1, 10n), cut(2, 20n), cut(4, 30n)]);
    expect(cutsAfter(owed, 1)).toMatchObject({ offset: 20n });
    expect(cutsAfter(owed, 2)).toMatchObject({ offset: 30n });
  });
});
