import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ManualClock, MemoryLogStorage, PartitionLog } from "../src/index";
import { dataBatch } from "./helpers";

const SEED = Number(process.env.FC_SEED ?? 20261202);

/** A memory storage of one segment holding `bytes`, appended in the parts that `cuts` (positions) make. */
function storageOf(bytes: Buffer, cuts: readonly number[]): MemoryLogStorage {
  const storage = new MemoryLogStorage();
  storage.roll(0n);
  const points = [...new Set([0, ...cuts, bytes.length])].sort((a, b) => a - b);
  for (let i = 1; i < points.length; i++) storage.append(bytes.subarray(points[i - 1], points[i]));
  return storage;
}

const open = (storage: MemoryLogStorage) =>
  PartitionLog.open(
    storage,
    { clock: new ManualClock(0), segmentBytes: 1 << 20 },
    { highWatermark: 1n << 40n },
  );

/**
 * What opening found: the bytes read through the index from each of `offsets` (the index's positions),
 * the producer state and the torn tail.
 */
function observe(log: PartitionLog, offsets: readonly bigint[]) {
  return {
    end: log.logEndOffset,
    reads: offsets.map((o) => log.read(o, 1 << 20, "read_uncommitted").records.toString("hex")),
    producers: log.producerStateSnapshot(),
    torn: log.recovery.truncatedTail,
    batches: log.recovery.batches,
  };
}

describe("opening a log read as the storage's slices", () => {
  it("a batch appended in parts (spanning slices) is read as if appended whole, and a partial tail is cut where it begins", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.array(fc.nat(), { maxLength: 8 }),
        fc.nat(200),
        (n, rawCuts, chop) => {
          const whole = Buffer.concat(
            Array.from({ length: n }, (_, i) => {
              const b = dataBatch({ pid: 1n, seq: i * 2, count: 2 });
              b.writeBigInt64BE(BigInt(i * 2), 0); // base offsets 0, 2, 4, ...
              return b;
            }),
          );
          // The last batch loses `chop` bytes (0: none), as a torn write leaves it.
          const kept = whole.subarray(0, Math.max(0, whole.length - Math.min(chop, whole.length)));
          const cuts = rawCuts.map((c) => c % Math.max(1, kept.length));
          const reference = open(storageOf(kept, []));
          const sliced = open(storageOf(kept, cuts));
          const offsets = [...reference.batches()].map((b) => b.baseOffset);
          expect(observe(sliced, offsets)).toEqual(observe(reference, offsets));
          // Every whole batch is kept; a partial one is cut at its start.
          const batchSize = whole.length / n;
          expect(sliced.logEndOffset).toBe(BigInt(2 * Math.floor(kept.length / batchSize)));
          if (kept.length % batchSize !== 0)
            expect(sliced.recovery.truncatedTail?.position).toBe(kept.length - (kept.length % batchSize));
        },
      ),
      { seed: SEED, numRuns: 200 },
    );
  });
});
