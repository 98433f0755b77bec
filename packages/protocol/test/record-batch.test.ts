import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import {
  CorruptRecordError,
  crc32c,
  decodeRecordBatch,
  decodeRecords,
  encodeRecordBatch,
  loadCompressionCodecs,
  partialTrailingBytes,
  RECORD_BATCH_OVERHEAD,
  type Record,
  RecordBatch,
  type RecordBatchInput,
  RecordBatchLayout,
  recordBatches,
} from "../src/index";
import { batchInputArb, onlyTypedErrors, SEED } from "./helpers";

beforeAll(async () => {
  await loadCompressionCodecs();
});

/** Checks that a decoded batch (or a view) carries every field of the input. */
function expectMatches(decoded: ReturnType<typeof decodeRecordBatch>, input: RecordBatchInput): void {
  expect(decoded.baseOffset).toBe(input.baseOffset);
  expect(decoded.partitionLeaderEpoch).toBe(input.partitionLeaderEpoch);
  expect(decoded.magic).toBe(2);
  expect(decoded.compression).toBe(input.compression);
  expect(decoded.timestampType).toBe(input.timestampType);
  expect(decoded.isTransactional).toBe(input.isTransactional);
  expect(decoded.isControl).toBe(input.isControl);
  expect(decoded.hasDeleteHorizon).toBe(input.hasDeleteHorizon);
  expect(decoded.lastOffsetDelta).toBe(input.lastOffsetDelta);
  expect(decoded.baseTimestamp).toBe(input.baseTimestamp);
  let maxDelta = 0n;
  for (const r of input.records) if (r.timestampDelta > maxDelta) maxDelta = r.timestampDelta;
  expect(decoded.maxTimestamp).toBe(input.baseTimestamp! + maxDelta);
  expect(decoded.producerId).toBe(input.producerId);
  expect(decoded.producerEpoch).toBe(input.producerEpoch);
  expect(decoded.baseSequence).toBe(input.baseSequence);
  expect(decoded.recordCount).toBe(input.records.length);
  expect(decoded.records).toEqual(input.records);
}

const record = (i: number, value = `value-${i}`): Record => ({
  attributes: 0,
  offsetDelta: i,
  timestampDelta: BigInt(i * 10),
  key: Buffer.from(`key-${i}`),
  value: Buffer.from(value),
  headers: [
    { key: "h", value: Buffer.from("1") },
    { key: "h", value: null },
    { key: "a", value: Buffer.alloc(0) },
  ],
});

describe("RecordBatch v2 encoder and full decoder", () => {
  it("round-trips arbitrary batches (empty, control, transactional, every codec)", () => {
    // numRuns: 300
    fc.assert(
      fc.property(batchInputArb(), (input) => {
        const bytes = encodeRecordBatch(input);
        const decoded = decodeRecordBatch(bytes);
        expectMatches(decoded, input);
        expect(decoded.batchLength).toBe(bytes.length - 12);
        // Re-encoding the decoded batch gives the same bytes (all our compressors are deterministic).
        expect(encodeRecordBatch(decoded).equals(bytes)).toBe(true);
      }),
      { seed: SEED, numRuns: 300 },
    );
  });

  for (const compression of [0, 1, 2, 3, 4] as const) {
    it(`round-trips a 16 KiB batch with codec ${compression}, keeping header order and nulls`, () => {
      const records = Array.from({ length: 64 }, (_, i) => record(i, "x".repeat(256)));
      records[3] = { ...records[3]!, key: null, value: null };
      const input: RecordBatchInput = {
        baseOffset: 1000n,
        compression,
        baseTimestamp: 1_700_000_000_000n,
        producerId: 42n,
        producerEpoch: 3,
        baseSequence: 7,
        isTransactional: true,
        records,
      };
      const bytes = encodeRecordBatch(input);
      const batch = new RecordBatch(bytes);
      batch.validate();
      expect(batch.compression).toBe(compression);
      if (compression !== 0) expect(bytes.length).toBeLessThan(8000);
      const decoded = decodeRecordBatch(batch);
      expect(decoded.records).toEqual(records);
      expect(decoded.records[0]!.headers.map((h) => h.key)).toEqual(["h", "h", "a"]);
    });
  }

  it("writes and reads an empty batch of every codec (as the log cleaner leaves one)", () => {
    for (const compression of [0, 1, 2, 3, 4] as const) {
      const bytes = encodeRecordBatch({ compression, lastOffsetDelta: 4, records: [] });
      expect(bytes.length).toBe(RECORD_BATCH_OVERHEAD);
      const decoded = decodeRecordBatch(bytes);
      expect(decoded.records).toEqual([]);
      expect(decoded.lastOffsetDelta).toBe(4);
      expect(new RecordBatch(bytes).nextOffset).toBe(5n);
    }
  });

  it("stores the CRC-32C of the bytes after the CRC field", () => {
    const bytes = encodeRecordBatch({ records: [record(0)] });
    expect(bytes.readUInt32BE(RecordBatchLayout.CRC_OFFSET)).toBe(crc32c(bytes.subarray(21)));
  });
});

describe("corruption", () => {
  it("detects every single flipped bit after the CRC field", () => {
    // numRuns: 6 batches, every bit of each (a few thousand flips per batch)
    fc.assert(
      fc.property(batchInputArb({ maxRecords: 4 }), (input) => {
        const bytes = encodeRecordBatch(input);
        for (let byte = RecordBatchLayout.ATTRIBUTES_OFFSET; byte < bytes.length; byte++) {
          for (let bit = 0; bit < 8; bit++) {
            const copy = Buffer.from(bytes);
            copy[byte]! ^= 1 << bit;
            const batch = new RecordBatch(copy);
            expect(batch.isValid()).toBe(false);
            expect(() => batch.validate()).toThrow(CorruptRecordError);
            expect(() => decodeRecordBatch(copy)).toThrow(CorruptRecordError);
          }
        }
      }),
      { seed: SEED, numRuns: 6 },
    );
  });

  it("detects a flipped bit in the CRC field itself", () => {
    const bytes = encodeRecordBatch({ records: [record(0)] });
    for (let bit = 0; bit < 32; bit++) {
      const copy = Buffer.from(bytes);
      copy[RecordBatchLayout.CRC_OFFSET + (bit >> 3)]! ^= 1 << (bit & 7);
      expect(() => new RecordBatch(copy).validate()).toThrow(CorruptRecordError);
    }
  });

  it("rejects every truncation of a batch with CorruptRecordError only", () => {
    // numRuns: 40
    fc.assert(
      fc.property(batchInputArb({ maxRecords: 5 }), (input) => {
        const bytes = encodeRecordBatch(input);
        for (let n = 0; n < bytes.length; n++) {
          expect(() => decodeRecordBatch(bytes.subarray(0, n))).toThrow(CorruptRecordError);
        }
      }),
      { seed: SEED, numRuns: 40 },
    );
  });

  it("garbage records sections with a valid CRC throw only typed errors", () => {
    // numRuns: 1500. The CRC is recomputed after mutation, so the records decoders see the garbage.
    fc.assert(
      fc.property(
        batchInputArb({ maxRecords: 5 }),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 6 }),
        fc.nat(),
        (input, edits, cut) => {
          const original = encodeRecordBatch(input);
          let bytes = Buffer.from(original);
          for (const [at, v] of edits)
            bytes[RecordBatchLayout.ATTRIBUTES_OFFSET + (at % (bytes.length - 21))] = v;
          if (cut % 3 === 0 && bytes.length > RECORD_BATCH_OVERHEAD) {
            bytes = bytes.subarray(0, RECORD_BATCH_OVERHEAD + (cut % (bytes.length - RECORD_BATCH_OVERHEAD)));
            bytes.writeInt32BE(bytes.length - 12, RecordBatchLayout.BATCH_LENGTH_OFFSET);
          }
          bytes.writeUInt32BE(crc32c(bytes.subarray(21)), RecordBatchLayout.CRC_OFFSET);
          onlyTypedErrors(() => decodeRecordBatch(bytes));
          onlyTypedErrors(() => decodeRecords(new RecordBatch(bytes)));
          onlyTypedErrors(() => new RecordBatch(bytes).controlType);
        },
      ),
      { seed: SEED, numRuns: 1500 },
    );
  });

  it("random bytes throw only typed errors from every entry point", () => {
    // numRuns: 1000
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (raw) => {
        const bytes = Buffer.from(raw);
        onlyTypedErrors(() => decodeRecordBatch(bytes));
        onlyTypedErrors(() => decodeRecordBatch(bytes, { verifyCrc: false }));
        onlyTypedErrors(() => [...recordBatches(bytes)]);
        onlyTypedErrors(() => partialTrailingBytes(bytes));
      }),
      { seed: SEED, numRuns: 1000 },
    );
  });

  it("rejects inconsistent record counts and offset deltas", () => {
    const good = encodeRecordBatch({ records: [record(0), record(1), record(2)] });
    const fix = (b: Buffer) => {
      b.writeUInt32BE(crc32c(b.subarray(21)), RecordBatchLayout.CRC_OFFSET);
      return b;
    };
    const moreCount = Buffer.from(good);
    moreCount.writeInt32BE(4, RecordBatchLayout.RECORDS_COUNT_OFFSET);
    expect(() => decodeRecordBatch(fix(moreCount))).toThrow(/declares 4 records/);
    const lessCount = Buffer.from(good);
    lessCount.writeInt32BE(2, RecordBatchLayout.RECORDS_COUNT_OFFSET);
    expect(() => decodeRecordBatch(fix(lessCount))).toThrow(/left over/);
    const negative = Buffer.from(good);
    negative.writeInt32BE(-1, RecordBatchLayout.RECORDS_COUNT_OFFSET);
    expect(() => decodeRecordBatch(fix(negative))).toThrow(CorruptRecordError);
    const shortDelta = Buffer.from(good);
    shortDelta.writeInt32BE(1, RecordBatchLayout.LAST_OFFSET_DELTA_OFFSET);
    expect(() => decodeRecordBatch(fix(shortDelta))).toThrow(/offset delta 2/);
    const repeated = encodeRecordBatch({ records: [record(0), record(0)], lastOffsetDelta: 1 });
    expect(() => decodeRecordBatch(repeated)).toThrow(/offset delta 0/);
    const badMagic = Buffer.from(good);
    badMagic.writeInt8(1, RecordBatchLayout.MAGIC_OFFSET);
    expect(() => decodeRecordBatch(badMagic)).toThrow(/magic 1/);
  });
});

describe("zero-copy view", () => {
  it("agrees with the full decoder on every header field", () => {
    // numRuns: 200
    fc.assert(
      fc.property(batchInputArb(), (input) => {
        const bytes = encodeRecordBatch(input);
        const view = new RecordBatch(bytes);
        const d = decodeRecordBatch(bytes);
        expect(view.buffer).toBe(bytes);
        for (const field of [
          "baseOffset",
          "batchLength",
          "partitionLeaderEpoch",
          "magic",
          "crc",
          "attributes",
          "compression",
          "timestampType",
          "isTransactional",
          "isControl",
          "hasDeleteHorizon",
          "lastOffsetDelta",
          "baseTimestamp",
          "maxTimestamp",
          "producerId",
          "producerEpoch",
          "baseSequence",
          "recordCount",
        ] as const) {
          expect(view[field], field).toBe(d[field]);
        }
        expect(view.recordCount).toBe(d.records.length);
        expect(view.lastOffset).toBe(d.baseOffset + BigInt(d.lastOffsetDelta));
        expect(view.sizeInBytes).toBe(bytes.length);
        expect(view.isValid()).toBe(true);
        expect(decodeRecords(view)).toEqual(d.records);
      }),
      { seed: SEED, numRuns: 200 },
    );
  });

  it("rewrites baseOffset and partition leader epoch in place without breaking the CRC", () => {
    const bytes = encodeRecordBatch({ records: [record(0)] });
    const view = new RecordBatch(bytes);
    view.setBaseOffset(77n);
    view.setPartitionLeaderEpoch(9);
    view.validate();
    expect(decodeRecordBatch(bytes).baseOffset).toBe(77n);
    expect(decodeRecordBatch(bytes).partitionLeaderEpoch).toBe(9);
  });
});

describe("recordBatches iterator", () => {
  it("yields every whole batch and stops cleanly at a partial trailing batch", () => {
    // numRuns: 150
    fc.assert(
      fc.property(
        fc.array(batchInputArb({ maxRecords: 4 }), { maxLength: 5 }),
        fc.nat(),
        (inputs, cutSeed) => {
          const encoded = inputs.map((i) => encodeRecordBatch(i));
          const whole = Buffer.concat(encoded);
          const last = encoded[encoded.length - 1];
          const cut = last === undefined ? 0 : 1 + (cutSeed % (last.length - 1));
          const partial = last === undefined ? whole : whole.subarray(0, whole.length - last.length + cut);
          const all = [...recordBatches(whole)];
          expect(all.map((b) => b.buffer)).toEqual(encoded);
          expect(partialTrailingBytes(whole)).toBe(0);
          const some = [...recordBatches(partial)];
          expect(some.length).toBe(last === undefined ? 0 : encoded.length - 1);
          expect(partialTrailingBytes(partial)).toBe(last === undefined ? 0 : cut);
          for (const b of some) b.validate();
        },
      ),
      { seed: SEED, numRuns: 150 },
    );
  });

  it("throws CorruptRecordError for a length field too small for a v2 header", () => {
    const bytes = encodeRecordBatch({ records: [] });
    bytes.writeInt32BE(10, RecordBatchLayout.BATCH_LENGTH_OFFSET);
    expect(() => [...recordBatches(bytes)]).toThrow(CorruptRecordError);
  });
});
