import { CorruptRecordError, crc32c, RecordBatch, RecordBatchLayout } from "@cluster-mirror/protocol";
import { describe, expect, it } from "vitest";
import { type PartitionLog, UnexpectedAppendOffsetError } from "../src/index";
import { dataBatch, memoryLog } from "./helpers";

const { ATTRIBUTES_OFFSET, BATCH_LENGTH_OFFSET, CRC_OFFSET, LAST_OFFSET_DELTA_OFFSET, MAGIC_OFFSET } =
  RecordBatchLayout;
const RECORDS_COUNT_OFFSET = RecordBatchLayout.RECORDS_COUNT_OFFSET;

/**
 * Every check of the follower append's header walk, through both of its ways of reading the bytes: the
 * copy (bytes the caller keeps: copied into the log's memory, checked on the copy) and in place (bytes
 * handed over: checked and kept as they are), each with the fetch as one buffer and as one slice per batch
 * (as the embedded source hands them out, where the copying walk's CRC runs span slices).
 */
const MODES = [
  { name: "copied", transferOwnership: false },
  { name: "in place", transferOwnership: true },
] as const;
const LAYOUTS = [
  { name: "one buffer", split: (batches: Buffer[]) => [Buffer.concat(batches)] },
  { name: "one slice per batch", split: (batches: Buffer[]) => batches },
] as const;

/** Six one-record batches from `from` (offsets from..from+5), of slightly different sizes. */
function batches(from = 0): Buffer[] {
  return Array.from({ length: 6 }, (_, i) =>
    dataBatch({ baseOffset: BigInt(from + i), leaderEpoch: 1, values: ["w".repeat(25 + i)] }),
  );
}

/** Writes the CRC-32C of `batch` again after a covered field was changed (as a buggy writer would). */
function restamp(batch: Buffer): void {
  batch.writeUInt32BE(crc32c(batch.subarray(ATTRIBUTES_OFFSET)), CRC_OFFSET);
}

interface BadInput {
  name: string;
  /** The fetched batches, one of them bad. */
  make: () => Buffer[];
  error: typeof CorruptRecordError | typeof UnexpectedAppendOffsetError;
  message: RegExp;
  /** Offsets 0..endOffset-1 appended (good batches) before the bad fetch. */
  endOffset?: number;
}

const BAD_INPUTS: BadInput[] = [
  {
    name: "a corrupt CRC in the first batch",
    make: () => {
      const b = batches();
      b[0]![b[0]!.length - 2]! ^= 0x08;
      return b;
    },
    error: CorruptRecordError,
    message: /record batch at offset 0 is corrupt: stored CRC 0x[0-9a-f]{8}, computed 0x[0-9a-f]{8}/,
  },
  {
    name: "a corrupt CRC in the middle of a run",
    make: () => {
      const b = batches();
      b[3]![b[3]!.length - 1]! ^= 0x01;
      return b;
    },
    error: CorruptRecordError,
    message: /record batch at offset 3 is corrupt: stored CRC/,
  },
  {
    name: "a batch of magic 1",
    make: () => {
      const b = batches();
      b[2]![MAGIC_OFFSET] = 1; // outside the CRC: only the magic check sees it
      return b;
    },
    error: CorruptRecordError,
    message: /record batch has magic 1; only magic 2/,
  },
  {
    name: "a negative lastOffsetDelta (CRC rewritten to match)",
    make: () => {
      const b = batches();
      b[4]!.writeInt32BE(-1, LAST_OFFSET_DELTA_OFFSET);
      restamp(b[4]!);
      return b;
    },
    error: CorruptRecordError,
    message: /record batch at offset 4 has a negative lastOffsetDelta -1/,
  },
  {
    name: "a negative record count (CRC rewritten to match)",
    make: () => {
      const b = batches();
      b[1]!.writeInt32BE(-2, RECORDS_COUNT_OFFSET);
      restamp(b[1]!);
      return b;
    },
    error: CorruptRecordError,
    message: /record batch at offset 1 has a negative record count -2/,
  },
  {
    name: "a declared length shorter than the v2 header",
    make: () => {
      const b = batches();
      b[5]!.writeInt32BE(20, BATCH_LENGTH_OFFSET);
      return b;
    },
    error: CorruptRecordError,
    message: /record batch at byte \d+ declares length 20, less than the v2 header needs/,
  },
  {
    name: "a first offset below the log end offset",
    endOffset: 4,
    make: () => batches(2),
    error: UnexpectedAppendOffsetError,
    message: /first offset 2 is below the log end offset 4/,
  },
  {
    name: "offsets going backwards",
    make: () => {
      const b = batches();
      return [b[0]!, b[1]!, b[4]!, b[3]!, b[5]!];
    },
    error: UnexpectedAppendOffsetError,
    message:
      /batch at offset 3 does not follow the previous batch ending at 4; the fetched data is out of order/,
  },
  {
    name: "a batch overlapping the one before (same base offset as its last offset)",
    make: () => [dataBatch({ baseOffset: 0n, count: 3 }), dataBatch({ baseOffset: 2n })],
    error: UnexpectedAppendOffsetError,
    message: /batch at offset 2 does not follow the previous batch ending at 2/,
  },
];

/** What the log holds, to check that a refused append changed nothing. */
function state(log: PartitionLog) {
  return {
    logEndOffset: log.logEndOffset,
    batches: [...log.batches()].length,
    epochs: log.epochEntries(),
    producers: log.producerStateSnapshot(),
  };
}

for (const mode of MODES) {
  for (const layout of LAYOUTS) {
    describe(`follower append checks, ${mode.name}, ${layout.name}`, () => {
      const append = (log: PartitionLog, fetched: Buffer[]) =>
        log.appendAsFollower(layout.split(fetched), { transferOwnership: mode.transferOwnership });

      it(`takes the ${mode.name} walk (the log ${mode.transferOwnership ? "keeps" : "does not keep"} the caller's memory)`, () => {
        const { log } = memoryLog();
        const fetched = layout.split(batches());
        expect(log.appendAsFollower(fetched, { transferOwnership: mode.transferOwnership })).toMatchObject({
          batchCount: 6,
          lastOffset: 5n,
        });
        const original = Buffer.concat(fetched);
        for (const slice of fetched) slice.fill(0);
        const stored = log.read(0n, 1 << 20, "read_uncommitted", { fetchUpTo: "log_end" }).records;
        expect(stored.equals(original)).toBe(!mode.transferOwnership);
      });

      for (const bad of BAD_INPUTS) {
        it(`refuses ${bad.name}, naming it, and appends nothing`, () => {
          const { log } = memoryLog();
          if (bad.endOffset !== undefined) {
            append(log, batches().slice(0, bad.endOffset));
            expect(log.logEndOffset).toBe(BigInt(bad.endOffset));
          }
          const before = state(log);
          const fetched = bad.make();
          expect(() => append(log, fetched)).toThrow(bad.error);
          expect(() => append(log, fetched)).toThrow(bad.message);
          expect(state(log)).toEqual(before);
        });
      }

      it("appends only the whole batches of a fetch cut inside its last batch", () => {
        const { log } = memoryLog();
        const b = batches();
        const last = b.length - 1;
        b[last] = b[last]!.subarray(0, b[last]!.length - 7);
        const info = append(log, b);
        expect(info).toMatchObject({ firstOffset: 0n, lastOffset: 4n, batchCount: 5 });
        expect(log.logEndOffset).toBe(5n);
        const stored = log.read(0n, 1 << 20, "read_uncommitted", { fetchUpTo: "log_end" }).records;
        expect(stored.equals(Buffer.concat(b.slice(0, last)))).toBe(true);
      });

      it("appends offsets of 2^53 and beyond exactly (left to the general path)", () => {
        const { log } = memoryLog();
        const huge = 2n ** 60n;
        const fetched = [
          dataBatch({ baseOffset: huge, count: 2, leaderEpoch: 3 }),
          dataBatch({ baseOffset: huge + 3n, count: 1, leaderEpoch: 3 }),
        ];
        expect(append(log, fetched)).toMatchObject({
          firstOffset: huge,
          lastOffset: huge + 3n,
          batchCount: 2,
        });
        expect(log.logEndOffset).toBe(huge + 4n);
        const fromB = log.read(huge + 2n, 1 << 20, "read_uncommitted", { fetchUpTo: "log_end" });
        expect(new RecordBatch(fromB.records).baseOffset).toBe(huge + 3n);
      });

      it("appends a batch whose last offset is past 2^53 exactly (left to the general path)", () => {
        const { log } = memoryLog();
        const base = 2n ** 53n - 3n; // fits a double; its last offset, base + 4 = 2^53 + 1, does not
        const fetched = [dataBatch({ baseOffset: base, count: 5 })];
        expect(append(log, fetched)).toMatchObject({
          firstOffset: base,
          lastOffset: base + 4n,
          batchCount: 1,
        });
        expect(log.logEndOffset).toBe(base + 5n);
      });

      it("names a corrupt batch beyond 2^53 by its exact offset (left to the general path)", () => {
        const { log } = memoryLog();
        const base = 2n ** 60n + 3n; // as a double it would read 2^60
        const fetched = [dataBatch({ baseOffset: base, count: 2 })];
        fetched[0]![fetched[0]!.length - 1]! ^= 0x02;
        expect(() => append(log, fetched)).toThrow(
          new RegExp(`record batch at offset ${base} is corrupt: stored CRC`),
        );
        expect(log.logEndOffset).toBe(0n);
      });
    });
  }

  it(`refuses a slice other than the last that ends inside a batch (${mode.name})`, () => {
    const { log } = memoryLog();
    const b = batches();
    const joined = Buffer.concat([b[1]!, b[2]!]);
    const cutAt = b[1]!.length + 30;
    const split = [b[0]!, joined.subarray(0, cutAt), joined.subarray(cutAt), b[3]!];
    expect(() => log.appendAsFollower(split, { transferOwnership: mode.transferOwnership })).toThrow(
      CorruptRecordError,
    );
    expect(() => log.appendAsFollower(split, { transferOwnership: mode.transferOwnership })).toThrow(
      new RegExp(
        `slice 1 of the fetched records ends inside a batch \\(byte ${b[0]!.length + b[1]!.length}\\)`,
      ),
    );
    expect(log.logEndOffset).toBe(0n);
  });
}
