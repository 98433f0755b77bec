import { createRequire } from "node:module";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  decodeRecordBatch,
  encodeEndTxnMarkerBatch,
  encodeMirrorPidResetBatch,
  encodeRecordBatch,
  type Record,
  RecordBatch,
  type RecordBatchInput,
} from "../src/index";
import { SEED } from "./helpers";

/**
 * Cross-check against an implementation we did not write: kafkajs 2.2.4's RecordBatch v2 encoder and
 * decoder (deep CommonJS requires; kafkajs has no exports map). kafkajs ships only a gzip codec.
 */
const require = createRequire(import.meta.url);
const { RecordBatch: KjsRecordBatch } = require("kafkajs/src/protocol/recordBatch/v0") as {
  RecordBatch: (input: object) => Promise<{ buffer: Buffer }>;
};
const kjsRecord = require("kafkajs/src/protocol/recordBatch/record/v0") as (r: object) => unknown;
const kjsDecodeBatch = require("kafkajs/src/protocol/recordBatch/v0/decoder") as (
  d: unknown,
) => Promise<KjsBatch>;
const KjsDecoder = require("kafkajs/src/protocol/decoder") as new (b: Buffer) => unknown;

interface KjsRecord {
  attributes: number;
  timestamp: string;
  offset: string;
  key: Buffer | null;
  value: Buffer | null;
  headers: { [key: string]: Buffer | null | (Buffer | null)[] };
  isControlRecord: boolean;
}
interface KjsBatch {
  firstOffset: string;
  firstTimestamp: string;
  partitionLeaderEpoch: number;
  inTransaction: boolean;
  isControlBatch: boolean;
  lastOffsetDelta: number;
  producerId: string;
  producerEpoch: number;
  firstSequence: number;
  maxTimestamp: string;
  timestampType: number;
  records: KjsRecord[];
}

const nullableBytes = fc.option(
  fc.uint8Array({ maxLength: 60 }).map((a) => Buffer.from(a)),
  { nil: null, freq: 5 },
);
/** kafkajs takes headers as an object: non-numeric keys (JS orders integer-like keys first), repeats as arrays. */
const kjsInputArb = fc.record({
  compression: fc.constantFrom(0, 1),
  firstOffset: fc.bigInt({ min: 0n, max: (1n << 62n) - 1n }),
  firstTimestamp: fc.bigInt({ min: 0n, max: 1n << 45n }),
  partitionLeaderEpoch: fc.integer({ min: -1, max: 0x7fffffff }),
  transactional: fc.boolean(),
  producerId: fc.bigInt({ min: -1n, max: (1n << 62n) - 1n }),
  producerEpoch: fc.integer({ min: -1, max: 0x7fff }),
  firstSequence: fc.integer({ min: -1, max: 0x7fffffff }),
  records: fc.array(
    fc.record({
      timestampDelta: fc.bigInt({ min: 0n, max: 1n << 30n }),
      key: nullableBytes,
      value: nullableBytes,
      headers: fc.dictionary(
        fc.string({ minLength: 1, maxLength: 8 }).map((s) => `h${s}`),
        fc.oneof(
          fc.uint8Array({ maxLength: 10 }).map((a) => Buffer.from(a)),
          fc.array(
            fc.uint8Array({ maxLength: 10 }).map((a) => Buffer.from(a)),
            { minLength: 1, maxLength: 3 },
          ),
        ),
        { maxKeys: 4 },
      ),
    }),
    { maxLength: 10 },
  ),
});

/** The order kafkajs writes headers in: object key order, repeated values in array order. */
function flatHeaders(headers: { [key: string]: Buffer | Buffer[] }): { key: string; value: Buffer }[] {
  return Object.keys(headers).flatMap((key) => {
    const v = headers[key]!;
    return Array.isArray(v) ? v.map((value) => ({ key, value })) : [{ key, value: v }];
  });
}

describe("cross-check with kafkajs 2.2.4", () => {
  it("batches encoded by kafkajs decode with ours, field by field", async () => {
    // numRuns: 150
    await fc.assert(
      fc.asyncProperty(kjsInputArb, async (input) => {
        let maxTs = input.firstTimestamp;
        for (const r of input.records)
          if (input.firstTimestamp + r.timestampDelta > maxTs)
            maxTs = input.firstTimestamp + r.timestampDelta;
        const encoded = await KjsRecordBatch({
          compression: input.compression,
          firstOffset: input.firstOffset.toString(),
          firstTimestamp: input.firstTimestamp.toString(),
          maxTimestamp: maxTs.toString(),
          partitionLeaderEpoch: input.partitionLeaderEpoch,
          lastOffsetDelta: Math.max(0, input.records.length - 1),
          transactional: input.transactional,
          producerId: input.producerId.toString(),
          producerEpoch: input.producerEpoch,
          firstSequence: input.firstSequence,
          records: input.records.map((r, i) =>
            kjsRecord({
              offsetDelta: i,
              timestampDelta: r.timestampDelta.toString(),
              key: r.key,
              value: r.value,
              headers: r.headers,
            }),
          ),
        });
        const bytes = Buffer.from(encoded.buffer);
        const batch = new RecordBatch(bytes);
        batch.validate(); // kafkajs's CRC-32C agrees with ours
        const d = decodeRecordBatch(bytes);
        expect(d.baseOffset).toBe(input.firstOffset);
        expect(d.partitionLeaderEpoch).toBe(input.partitionLeaderEpoch);
        expect(d.compression).toBe(input.compression);
        expect(d.isTransactional).toBe(input.transactional);
        expect(d.isControl).toBe(false);
        expect(d.timestampType).toBe(0);
        expect(d.lastOffsetDelta).toBe(Math.max(0, input.records.length - 1));
        expect(d.baseTimestamp).toBe(input.firstTimestamp);
        expect(d.maxTimestamp).toBe(maxTs);
        expect(d.producerId).toBe(input.producerId);
        expect(d.producerEpoch).toBe(input.producerEpoch);
        expect(d.baseSequence).toBe(input.firstSequence);
        expect(d.recordCount).toBe(input.records.length);
        d.records.forEach((rec, i) => {
          const src = input.records[i]!;
          expect(rec.attributes).toBe(0);
          expect(rec.offsetDelta).toBe(i);
          expect(rec.timestampDelta).toBe(src.timestampDelta);
          expect(rec.key).toEqual(src.key);
          expect(rec.value).toEqual(src.value);
          expect(rec.headers).toEqual(flatHeaders(src.headers));
        });
        // Uncompressed, our encoder writes the very same bytes kafkajs wrote.
        if (input.compression === 0) expect(encodeRecordBatch(d).equals(bytes)).toBe(true);
      }),
      { seed: SEED, numRuns: 150 },
    );
  });

  const ourInputArb: fc.Arbitrary<RecordBatchInput> = kjsInputArb.chain((b) =>
    fc
      .record({
        timestampType: fc.constantFrom(0 as const, 1 as const),
        isControl: fc.boolean(),
        gaps: fc.array(fc.nat(3), { minLength: b.records.length, maxLength: b.records.length }),
        nullHeaderValue: fc.boolean(),
      })
      .map(({ timestampType, isControl, gaps, nullHeaderValue }) => {
        let delta = -1;
        const records: Record[] = b.records.map((r, i) => {
          delta += 1 + gaps[i]!;
          const headers: Record["headers"] = flatHeaders(r.headers);
          if (nullHeaderValue) headers.push({ key: "hnull", value: null });
          return {
            attributes: 0,
            offsetDelta: delta,
            timestampDelta: r.timestampDelta,
            key: r.key,
            value: r.value,
            headers,
          };
        });
        return {
          baseOffset: b.firstOffset,
          partitionLeaderEpoch: b.partitionLeaderEpoch,
          compression: b.compression as 0 | 1,
          timestampType,
          isTransactional: b.transactional,
          isControl,
          baseTimestamp: b.firstTimestamp,
          producerId: b.producerId,
          producerEpoch: b.producerEpoch,
          baseSequence: b.firstSequence,
          records,
        };
      }),
  );

  it("batches encoded by ours decode with kafkajs's decoder, field by field", async () => {
    // numRuns: 150
    await fc.assert(
      fc.asyncProperty(ourInputArb, async (input) => {
        const bytes = encodeRecordBatch(input);
        const k = await kjsDecodeBatch(new KjsDecoder(bytes));
        const ours = new RecordBatch(bytes);
        expect(k.firstOffset).toBe(input.baseOffset!.toString());
        expect(k.partitionLeaderEpoch).toBe(input.partitionLeaderEpoch);
        expect(k.inTransaction).toBe(input.isTransactional);
        expect(k.isControlBatch).toBe(input.isControl);
        expect(k.timestampType).toBe(input.timestampType);
        expect(k.lastOffsetDelta).toBe(ours.lastOffsetDelta);
        expect(k.firstTimestamp).toBe(input.baseTimestamp!.toString());
        expect(k.maxTimestamp).toBe(ours.maxTimestamp.toString());
        expect(k.producerId).toBe(input.producerId!.toString());
        expect(k.producerEpoch).toBe(input.producerEpoch);
        expect(k.firstSequence).toBe(input.baseSequence);
        expect(k.records.length).toBe(input.records.length);
        k.records.forEach((rec, i) => {
          const src = input.records[i]!;
          expect(rec.offset).toBe((input.baseOffset! + BigInt(src.offsetDelta)).toString());
          const ts =
            input.timestampType === 1 ? ours.maxTimestamp : input.baseTimestamp! + src.timestampDelta;
          expect(rec.timestamp).toBe(ts.toString());
          expect(rec.key).toEqual(src.key);
          expect(rec.value).toEqual(src.value);
          expect(rec.isControlRecord).toBe(input.isControl);
          // kafkajs folds headers into an object (repeats into arrays, in order).
          const expected: { [key: string]: Buffer | null | (Buffer | null)[] } = {};
          for (const h of src.headers) {
            const prev = expected[h.key];
            expected[h.key] =
              prev === undefined ? h.value : Array.isArray(prev) ? [...prev, h.value] : [prev, h.value];
          }
          expect(rec.headers).toEqual(expected);
        });
      }),
      { seed: SEED, numRuns: 150 },
    );
  });

  it("kafkajs decodes our ABORT/COMMIT and MIRROR_PID_RESET control batches", async () => {
    const marker = encodeEndTxnMarkerBatch({
      type: 1,
      producerId: 4001n,
      producerEpoch: 2,
      coordinatorEpoch: 7,
      baseOffset: 10n,
      timestamp: 1000n,
    });
    const k = await kjsDecodeBatch(new KjsDecoder(marker));
    expect(k.isControlBatch).toBe(true);
    expect(k.inTransaction).toBe(true);
    expect(k.producerId).toBe("4001");
    expect(k.firstSequence).toBe(-1);
    expect(k.records[0]!.key).toEqual(Buffer.from([0, 0, 0, 1]));
    expect(k.records[0]!.value).toEqual(Buffer.from([0, 0, 0, 0, 0, 7]));
    const reset = encodeMirrorPidResetBatch({ sourceClusterId: "A", baseOffset: 11n, timestamp: 1000n });
    const r = await kjsDecodeBatch(new KjsDecoder(reset));
    expect(r.isControlBatch).toBe(true);
    expect(r.inTransaction).toBe(false);
    expect(r.producerId).toBe("-1");
    expect(r.records[0]!.key).toEqual(Buffer.from([0, 0, 0, 7]));
    expect(r.records[0]!.value).toEqual(Buffer.from([0, 0, 0, 1, 0x41]));
  });
});
