import { CorruptRecordError, RecordBatch } from "@cluster-mirror/protocol";
import { describe, expect, it } from "vitest";
import { BatchIndex, UnexpectedAppendOffsetError } from "../src/index";
import { dataBatch, memoryLog } from "./helpers";

/** Three batches at offsets 0-1, 2 and 5-7 (a gap, as a compacted source has), two of them idempotent. */
function fetched(): Buffer {
  return Buffer.concat([
    dataBatch({ baseOffset: 0n, count: 2, leaderEpoch: 1 }),
    dataBatch({ baseOffset: 2n, count: 1, leaderEpoch: 1, pid: 9n, seq: 0 }),
    dataBatch({ baseOffset: 5n, count: 3, leaderEpoch: 2, pid: 9n, seq: 1 }),
  ]);
}

describe("appendAsFollower of bytes the caller keeps (copied once, CRCs checked on the copy)", () => {
  it("stores a copy: writing to the caller's buffer afterwards changes nothing in the log", () => {
    const { log } = memoryLog();
    const bytes = fetched();
    const original = Buffer.from(bytes);
    expect(log.appendAsFollower(bytes)).toMatchObject({ firstOffset: 0n, lastOffset: 7n, batchCount: 3 });
    bytes.fill(0);
    const stored = log.read(0n, 1 << 20, "read_uncommitted", { fetchUpTo: "log_end" });
    expect(stored.records.equals(original)).toBe(true);
    expect(log.epochEntries()).toEqual([
      { epoch: 1, startOffset: 0n },
      { epoch: 2, startOffset: 5n },
    ]);
    expect(log.producerStateSnapshot()[0]?.batchMetadata.map((m) => m.lastSeq)).toEqual([0, 3]);
  });

  it("keeps handed-over bytes as they are (no copy)", () => {
    const { log } = memoryLog();
    const bytes = fetched();
    log.appendAsFollower([bytes], { transferOwnership: true });
    const stored = log.read(0n, 1 << 20, "read_uncommitted", { fetchUpTo: "log_end" });
    expect(stored.recordSlices[0]!.buffer).toBe(bytes.buffer);
  });

  it("copies only the whole batches of a fetch cut inside its last batch, over several slices", () => {
    const { log } = memoryLog();
    const bytes = fetched();
    const cut = bytes.length - 10;
    // Every slice but the last ends on a batch boundary: the first one after the first batch.
    const firstEnd = 12 + bytes.readInt32BE(8);
    const slices = [bytes.subarray(0, firstEnd), bytes.subarray(firstEnd, cut)];
    const info = log.appendAsFollower(slices);
    expect(info).toMatchObject({ firstOffset: 0n, lastOffset: 2n, batchCount: 2 });
    expect(log.logEndOffset).toBe(3n);
    const stored = log.read(0n, 1 << 20, "read_uncommitted", { fetchUpTo: "log_end" }).records;
    expect(stored.equals(bytes.subarray(0, info.validBytes))).toBe(true);
  });

  it("is all or nothing when a later batch's CRC fails, and says which batch", () => {
    const { log } = memoryLog();
    const bytes = fetched();
    bytes[bytes.length - 1]! ^= 0xff; // inside the third batch's records
    expect(() => log.appendAsFollower(bytes)).toThrow(/record batch at offset 5 is corrupt: stored CRC/);
    expect(() => log.appendAsFollower(bytes)).toThrow(CorruptRecordError);
    expect(log.logEndOffset).toBe(0n);
    expect(log.epochEntries()).toEqual([]);
    expect(log.producerStateSnapshot()).toEqual([]);
    expect([...log.batches()]).toHaveLength(0);
  });

  it("refuses a negative lastOffsetDelta and offsets going backwards, appending nothing", () => {
    const { log } = memoryLog();
    const backwards = Buffer.concat([dataBatch({ baseOffset: 8n }), dataBatch({ baseOffset: 6n })]);
    expect(() => log.appendAsFollower(backwards)).toThrow(UnexpectedAppendOffsetError);
    expect(log.logEndOffset).toBe(0n);
  });
});

describe("CRC-32C checked per run of small batches (one native call for many batches)", () => {
  /** `count` one-record batches from offset 0, of slightly different sizes. */
  function smallBatches(count: number): Buffer[] {
    return Array.from({ length: count }, (_, i) =>
      dataBatch({ baseOffset: BigInt(i), leaderEpoch: 1, values: ["x".repeat(20 + (i % 7))] }),
    );
  }

  for (const transferOwnership of [false, true]) {
    it(`names the one corrupt batch in the middle of a run and appends nothing (transferOwnership ${transferOwnership})`, () => {
      for (const bad of [0, 1, 17, 39]) {
        const { log } = memoryLog();
        const batches = smallBatches(40);
        const target = batches[bad]!;
        target[target.length - 2]! ^= 0x10;
        expect(() => log.appendAsFollower(Buffer.concat(batches), { transferOwnership })).toThrow(
          new RegExp(`record batch at offset ${bad} is corrupt: stored CRC`),
        );
        expect(log.logEndOffset).toBe(0n);
      }
    });

    it(`accepts a run whose batches' uncovered header fields differ from when they were written (transferOwnership ${transferOwnership})`, () => {
      const { log } = memoryLog();
      const batches = smallBatches(40);
      // The partition leader epoch is outside the CRC: a leader may stamp it without rewriting the CRC.
      for (const [i, b] of batches.entries()) b.writeInt32BE(3 + (i % 2), 12);
      const bytes = Buffer.concat(batches);
      expect(log.appendAsFollower(bytes, { transferOwnership })).toMatchObject({
        batchCount: 40,
        lastOffset: 39n,
      });
      const stored = log.read(0n, 1 << 20, "read_uncommitted", { fetchUpTo: "log_end" }).records;
      expect(stored.equals(bytes)).toBe(true);
    });
  }
});

describe("copying one slice per batch (as the embedded source hands them out)", () => {
  /** `count` one-record batches from offset 0, each in a slice of its own. */
  function sliced(count: number): Buffer[] {
    return Array.from({ length: count }, (_, i) =>
      dataBatch({ baseOffset: BigInt(i), leaderEpoch: 1 + (i >> 4), values: ["v".repeat(30 + (i % 5))] }),
    );
  }

  it("stores the slices' bytes joined, with every batch indexed and the epochs started where they change", () => {
    const { log } = memoryLog();
    const slices = sliced(50);
    expect(log.appendAsFollower(slices)).toMatchObject({ batchCount: 50, firstOffset: 0n, lastOffset: 49n });
    const stored = log.read(0n, 1 << 20, "read_uncommitted", { fetchUpTo: "log_end" }).records;
    expect(stored.equals(Buffer.concat(slices))).toBe(true);
    expect(log.epochEntries().map((e) => e.startOffset)).toEqual([0n, 16n, 32n, 48n]);
    expect(log.read(37n, 1, "read_uncommitted", { fetchUpTo: "log_end" }).records.readBigInt64BE(0)).toBe(
      37n,
    );
  });

  it("names a corrupt batch inside a run that spans slices, and appends nothing", () => {
    for (const bad of [0, 9, 30, 49]) {
      const { log } = memoryLog();
      const slices = sliced(50);
      slices[bad]![slices[bad]!.length - 3]! ^= 0x40;
      expect(() => log.appendAsFollower(slices)).toThrow(
        new RegExp(`record batch at offset ${bad} is corrupt`),
      );
      expect(log.logEndOffset).toBe(0n);
    }
  });

  it("refuses a slice other than the last that ends inside a batch, even when the next slice completes it", () => {
    const { log } = memoryLog();
    const slices = sliced(6);
    const joined = Buffer.concat([slices[2]!, slices[3]!]);
    const cutAt = slices[2]!.length + 20;
    const split = [slices[0]!, slices[1]!, joined.subarray(0, cutAt), joined.subarray(cutAt), slices[4]!];
    expect(() => log.appendAsFollower(split)).toThrow(/slice 2 of the fetched records ends inside a batch/);
    expect(log.logEndOffset).toBe(0n);
  });
});

describe("offsets beyond 2^53 (the general path)", () => {
  const huge = 2n ** 60n;

  it("appends, indexes and reads batches whose offsets do not fit a double", () => {
    const { log } = memoryLog();
    log.appendAsFollower(dataBatch({ baseOffset: 0n, count: 2 }));
    log.truncateFullyAndStartAt(huge);
    const a = dataBatch({ baseOffset: huge, count: 2, leaderEpoch: 3 });
    const b = dataBatch({ baseOffset: huge + 3n, count: 1, leaderEpoch: 3 });
    expect(log.appendAsFollower(Buffer.concat([a, b]))).toMatchObject({
      firstOffset: huge,
      lastOffset: huge + 3n,
      batchCount: 2,
    });
    expect(log.logEndOffset).toBe(huge + 4n);
    // The batch holding huge + 1 is `a`, the next one from huge + 2 is `b`: exact, no rounding.
    const fromA = log.read(huge + 1n, 1, "read_uncommitted", { fetchUpTo: "log_end" });
    expect(new RecordBatch(fromA.records).baseOffset).toBe(huge);
    const fromB = log.read(huge + 2n, 1 << 20, "read_uncommitted", { fetchUpTo: "log_end" });
    expect(new RecordBatch(fromB.records).baseOffset).toBe(huge + 3n);
    expect(log.epochEntries()).toEqual([{ epoch: 3, startOffset: huge }]);
  });

  it("BatchIndex answers the same as numbers and, once widened, as bigints", () => {
    const index = new BatchIndex();
    index.push({ baseOffset: 0n, lastOffset: 4n, segment: 0n, position: 0, size: 100 });
    index.pushNumbers(5, 9, 0, 100, 80);
    expect(index.compact).toBe(true);
    expect(index.search(7n)).toBe(1);
    expect(index.search(10n)).toBe(2);
    expect(index.at(1)).toEqual({ baseOffset: 5n, lastOffset: 9n, segment: 0n, position: 100, size: 80 });
    const far = 2n ** 62n;
    index.push({ baseOffset: far, lastOffset: far + 1n, segment: far, position: 0, size: 70 });
    expect(index.compact).toBe(false);
    expect(index.length).toBe(3);
    expect(index.search(far)).toBe(2);
    expect(index.search(far + 1n)).toBe(2);
    expect(index.search(far + 2n)).toBe(3);
    expect(index.at(0)).toEqual({ baseOffset: 0n, lastOffset: 4n, segment: 0n, position: 0, size: 100 });
    expect(index.last()?.lastOffset).toBe(far + 1n);
    index.clear();
    expect(index.compact).toBe(true);
    expect(index.length).toBe(0);
  });
});
