import { CorruptRecordError } from "@cluster-mirror/protocol";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { FileLogStorage, ManualClock, PartitionLog } from "../src/index";
import { dataBatch, memoryLog, removeDir, tempDir } from "./helpers";

const SEED = Number(process.env.FC_SEED ?? 20261129);
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) removeDir(dir);
});

function fileLog(segmentBytes: number): PartitionLog {
  const dir = tempDir();
  dirs.push(dir);
  return PartitionLog.open(FileLogStorage.open(dir), { clock: new ManualClock(0), segmentBytes });
}

/** A leader log with `counts.length` appends (one batch each), and an as-is copy of each batch. */
function filled(log: PartitionLog, counts: readonly number[]): Buffer[] {
  const stored: Buffer[] = [];
  for (const count of counts) {
    const batch = dataBatch({ count });
    log.appendAsLeader(batch, 0);
    stored.push(Buffer.from(batch));
  }
  log.updateHighWatermark(log.logEndOffset);
  return stored;
}

describe("record slices", () => {
  it("a read's slices are views of the stored appends that join to the same bytes as `records`", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 30 }),
        fc.integer({ min: 0, max: 40 }),
        fc.integer({ min: 1, max: 4000 }),
        fc.integer({ min: 200, max: 3000 }),
        (counts, from, maxBytes, segmentBytes) => {
          for (const log of [memoryLog({ segmentBytes }).log, fileLog(segmentBytes)]) {
            filled(log, counts);
            const fetchOffset = BigInt(from) % (log.logEndOffset + 1n);
            const data = log.read(fetchOffset, maxBytes, "read_uncommitted");
            const joined = Buffer.concat(data.recordSlices as Buffer[]);
            expect(joined.length).toBe(data.sizeInBytes);
            expect(data.records.equals(joined)).toBe(true);
            // The oracle: whole stored batches from the one holding fetchOffset, in order, at least one.
            const stored = [...log.batches()].filter((b) => b.lastOffset >= fetchOffset);
            let expected = 0;
            let prefix = Buffer.alloc(0);
            while (prefix.length < joined.length && expected < stored.length) {
              prefix = Buffer.concat([prefix, stored[expected++]!.buffer]);
            }
            expect(prefix.toString("hex")).toBe(joined.toString("hex"));
            expect(joined.length > 0).toBe(fetchOffset < log.logEndOffset);
            // Every slice holds whole batches: an as-is append of the slices, to memory and to files,
            // stores the same bytes.
            for (const copy of [memoryLog().log, fileLog(1 << 20)]) {
              if (data.sizeInBytes === 0) break;
              copy.truncateFullyAndStartAt(joined.readBigInt64BE(0));
              copy.appendAsFollower(data.recordSlices);
              expect(Buffer.concat([...copy.batches()].map((b) => b.buffer)).toString("hex")).toBe(
                joined.toString("hex"),
              );
              copy.close();
            }
            log.close();
          }
        },
      ),
      { seed: SEED, numRuns: 60 },
    );
  });

  it("memory storage answers a read spanning many appends with views, not a copy", () => {
    const { log } = memoryLog();
    filled(log, [2, 3, 1, 4]);
    const data = log.read(0n, 1 << 20, "read_uncommitted");
    expect(data.recordSlices.length).toBe(4);
    const again = log.read(0n, 1 << 20, "read_uncommitted");
    // Views of the same stored memory: the same bytes at the same address, twice.
    const sameMemory = data.recordSlices.map(
      (s, i) =>
        s.buffer === again.recordSlices[i]?.buffer && s.byteOffset === again.recordSlices[i]?.byteOffset,
    );
    expect(sameMemory).toEqual([true, true, true, true]);
  });

  it("appends slices all or nothing, with a partial batch allowed only at the end of the last slice", () => {
    const source = memoryLog().log;
    filled(source, [1, 2, 3]);
    const [a, b, c] = source.read(0n, 1 << 20, "read_uncommitted").recordSlices as Buffer[];
    expect([a, b, c].every((s) => s !== undefined)).toBe(true);

    const target = memoryLog().log;
    const cut = c!.subarray(0, c!.length - 3);
    expect(target.appendAsFollower([a!, b!, cut])).toMatchObject({ batchCount: 2, lastOffset: 2n });
    expect(target.logEndOffset).toBe(3n);

    const bad = Buffer.from(c!);
    bad[bad.length - 1]! ^= 0xff;
    const other = memoryLog().log;
    expect(() => other.appendAsFollower([a!, b!, bad])).toThrow(CorruptRecordError);
    expect(other.logEndOffset).toBe(0n); // nothing from the valid slices either
    const split = [a!.subarray(0, a!.length - 4), Buffer.concat([a!.subarray(a!.length - 4), b!])];
    expect(() => other.appendAsFollower(split)).toThrow(/ends inside a batch/);
    expect(other.logEndOffset).toBe(0n);
  });
});
