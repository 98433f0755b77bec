import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type FetchedBatchScan,
  prefixEnd,
  scanFetchedBatches,
  slicesPrefix,
} from "../src/fetcher/batch-scan";
import { valuesBatch } from "./data-helpers";

const SEED = Number(process.env.FC_SEED ?? 20261129);

/** Valid batches with increasing offsets (gaps allowed, as compacted sources have) and epochs. */
const batchesArb = fc
  .array(
    fc.record({
      count: fc.integer({ min: 1, max: 4 }),
      gap: fc.integer({ min: 0, max: 3 }),
      epochStep: fc.integer({ min: 0, max: 2 }),
    }),
    { minLength: 1, maxLength: 12 },
  )
  .map((specs) => {
    let offset = 0n;
    let epoch = 0;
    return specs.map(({ count, gap, epochStep }, i) => {
      offset += BigInt(gap);
      epoch += epochStep;
      const batch = valuesBatch(
        Array.from({ length: count }, (_, r) => `v${i}-${r}`),
        { baseOffset: offset, partitionLeaderEpoch: epoch },
      );
      offset += BigInt(count);
      return batch;
    });
  });

/** Cuts the concatenation of `batches` into slices at some batch boundaries, plus a partial tail. */
function sliced(batches: Buffer[], cuts: boolean[], tail: number): Buffer[] {
  const slices: Buffer[] = [];
  let current: Buffer[] = [];
  batches.forEach((b, i) => {
    current.push(b);
    if (cuts[i % cuts.length]) {
      slices.push(Buffer.concat(current));
      current = [];
    }
  });
  if (current.length > 0) slices.push(Buffer.concat(current));
  if (tail > 0) {
    const last = slices.pop()!;
    slices.push(Buffer.concat([last, batches[0]!.subarray(0, tail)]));
  }
  return slices;
}

/** A scan without where its last batch lies (slice and position differ between cuts of the same bytes). */
function placeless({ lastSlice: _s, lastPosition: _p, ...rest }: FetchedBatchScan) {
  return rest;
}

describe("scanFetchedBatches", () => {
  it("on well-formed data: the fast scan, the full scan, slices and one buffer all agree", () => {
    fc.assert(
      fc.property(
        batchesArb,
        fc.array(fc.boolean(), { minLength: 1, maxLength: 5 }),
        fc.integer({ min: 0, max: 40 }),
        fc.integer({ min: -1, max: 20 }),
        (batches, cuts, tail, localEpoch) => {
          const slices = sliced(batches, cuts, tail);
          const whole = [Buffer.concat(slices)];
          const full = scanFetchedBatches(slices, localEpoch);
          const fast = scanFetchedBatches(slices, localEpoch, { verifyCrc: false });
          const wholeScan = scanFetchedBatches(whole, localEpoch);
          expect(placeless(wholeScan)).toEqual(placeless(full));
          expect(full.corrupt).toBeUndefined();
          expect(fast).toEqual(full);
          // The model: the prefix stops at the first batch whose epoch is above the local one.
          const held = batches.findIndex((b) => b.readInt32BE(12) > localEpoch);
          const kept = held < 0 ? batches : batches.slice(0, held);
          expect(full.batchCount).toBe(kept.length);
          expect(full.validBytes).toBe(kept.reduce((n, b) => n + b.length, 0));
          expect(full.heldEpoch).toBe(held < 0 ? undefined : batches[held]!.readInt32BE(12));
          expect(full.firstBaseOffset).toBe(kept[0]?.readBigInt64BE(0));
          const prefix = Buffer.concat(slicesPrefix(slices, full.validBytes) as Buffer[]);
          expect(prefix.equals(Buffer.concat(kept))).toBe(true);
          // Where the log stands after the prefix (the next fetch's offset and last fetched epoch).
          const last = kept[kept.length - 1];
          const end = last && {
            nextOffset: last.readBigInt64BE(0) + BigInt(last.readInt32BE(23)) + 1n,
            epoch: last.readInt32BE(12),
          };
          expect(prefixEnd(slices, full)).toEqual(end);
          expect(prefixEnd(whole, wholeScan)).toEqual(end);
        },
      ),
      { seed: SEED, numRuns: 200 },
    );
  });

  it("the full scan stops before a corrupt batch, and keeps nothing when batches are out of order", () => {
    fc.assert(
      fc.property(batchesArb, fc.nat(), fc.nat(), (batches, which, bit) => {
        fc.pre(batches.length >= 2);
        const at = which % batches.length;
        const damaged = batches.map((b) => Buffer.from(b));
        const victim = damaged[at]!;
        // A bit after the CRC field: the CRC no longer matches.
        const byte = 21 + (bit % (victim.length - 21));
        victim[byte]! ^= 1 << (bit % 8);
        const scan = scanFetchedBatches(damaged, 1 << 30);
        expect(scan.corrupt?.at).toBe(victim.readBigInt64BE(0).toString());
        expect(scan.batchCount).toBe(at);

        const swapped = [...batches];
        [swapped[0], swapped[swapped.length - 1]] = [swapped[swapped.length - 1]!, swapped[0]!];
        const out = scanFetchedBatches(swapped, 1 << 30);
        expect(out.corrupt?.error.message).toMatch(/out of order/);
        expect(out.validBytes).toBe(0);
      }),
      { seed: SEED, numRuns: 200 },
    );
  });

  it("the fast scan reports a bad length, a bad magic or a slice ending inside a batch where the full scan does", () => {
    fc.assert(
      fc.property(
        batchesArb,
        fc.nat(),
        fc.constantFrom("length", "magic", "split"),
        (batches, which, damage) => {
          const at = which % batches.length;
          const slices = batches.map((b) => Buffer.from(b));
          const victim = slices[at]!;
          if (damage === "length") victim.writeInt32BE(5, 8);
          else if (damage === "magic") victim[16] = 1;
          else {
            fc.pre(at < slices.length - 1);
            // The victim's slice ends 7 bytes early; those bytes start the next slice.
            slices[at + 1] = Buffer.concat([victim.subarray(victim.length - 7), slices[at + 1]!]);
            slices[at] = victim.subarray(0, victim.length - 7);
          }
          const full = scanFetchedBatches(slices, 1 << 30);
          const fast = scanFetchedBatches(slices, 1 << 30, { verifyCrc: false });
          expect(full.corrupt).toBeDefined();
          expect(fast.corrupt?.at).toBe(full.corrupt?.at);
          expect(fast.corrupt?.error.message).toBe(full.corrupt?.error.message);
          expect([fast.batchCount, fast.validBytes]).toEqual([full.batchCount, full.validBytes]);
          expect(fast.batchCount).toBe(at);
        },
      ),
      { seed: SEED, numRuns: 200 },
    );
  });

  it("slicesPrefix returns views that join to the first n bytes", () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 20 }), { maxLength: 6 }), fc.nat(), (arrays, n) => {
        const slices = arrays.map((a) => Buffer.from(a));
        const all = Buffer.concat(slices);
        const bytes = all.length === 0 ? 0 : n % (all.length + 1);
        const prefix = slicesPrefix(slices, bytes);
        expect(Buffer.concat(prefix as Buffer[]).equals(all.subarray(0, bytes))).toBe(true);
      }),
      { seed: SEED, numRuns: 300 },
    );
  });
});
