import fc from "fast-check";
import { expect } from "vitest";
import {
  CorruptRecordError,
  type Record,
  type RecordBatchInput,
  type RecordHeader,
  UnsupportedCompressionError,
  UnsupportedVersionError,
} from "../src/index";

/** Seed of every property in this package; override with FC_SEED to replay a failure. */
export const SEED = Number(process.env.FC_SEED ?? 20261129);
console.log(`fast-check seed ${SEED} (set FC_SEED to change)`);

const bytes = (maxLength: number) => fc.uint8Array({ maxLength }).map((a) => Buffer.from(a));
/** A nullable byte string. */
export const nullableBytes = (maxLength = 40): fc.Arbitrary<Buffer | null> =>
  fc.option(bytes(maxLength), { nil: null, freq: 5 });

const headerArb: fc.Arbitrary<RecordHeader> = fc.record({
  key: fc.oneof(fc.string({ maxLength: 12 }), fc.string({ unit: "grapheme", maxLength: 6 })),
  value: nullableBytes(16),
});

const recordShape = fc.record({
  attributes: fc.integer({ min: -128, max: 127 }),
  gap: fc.nat(4),
  timestampDelta: fc.bigInt({ min: -(1n << 40n), max: 1n << 40n }),
  key: nullableBytes(),
  value: nullableBytes(200),
  headers: fc.array(headerArb, { maxLength: 4 }),
});

/** Records with strictly increasing offset deltas starting at >= 0 (gaps as compaction leaves them). */
export const recordsArb = (maxLength = 12): fc.Arbitrary<Record[]> =>
  fc.array(recordShape, { maxLength }).map((shapes) => {
    let delta = -1;
    return shapes.map(({ gap, ...r }) => {
      delta += 1 + gap;
      return { ...r, offsetDelta: delta };
    });
  });

/** Any batch this project may see: empty, control, transactional, compressed (every codec), gaps. */
export const batchInputArb = (
  opts: { compression?: fc.Arbitrary<0 | 1 | 2 | 3 | 4>; maxRecords?: number } = {},
) =>
  fc
    .record({
      baseOffset: fc.bigInt({ min: 0n, max: (1n << 62n) - 1n }),
      partitionLeaderEpoch: fc.integer({ min: -1, max: 0x7fffffff }),
      compression:
        opts.compression ?? fc.constantFrom(0 as const, 1 as const, 2 as const, 3 as const, 4 as const),
      timestampType: fc.constantFrom(0 as const, 1 as const),
      isTransactional: fc.boolean(),
      isControl: fc.boolean(),
      hasDeleteHorizon: fc.boolean(),
      extraDelta: fc.nat(3),
      baseTimestamp: fc.bigInt({ min: -1n, max: 1n << 50n }),
      producerId: fc.bigInt({ min: -1n, max: (1n << 62n) - 1n }),
      producerEpoch: fc.integer({ min: -1, max: 0x7fff }),
      baseSequence: fc.integer({ min: -1, max: 0x7fffffff }),
      records: recordsArb(opts.maxRecords ?? 12),
    })
    .map(({ extraDelta, ...b }): RecordBatchInput => {
      const last = b.records[b.records.length - 1];
      return { ...b, lastOffsetDelta: (last?.offsetDelta ?? 0) + extraDelta };
    });

/** Runs `fn`; passes if it returns or throws one of the typed errors, fails on anything else. */
export function onlyTypedErrors(fn: () => unknown): "ok" | "typed" {
  try {
    fn();
    return "ok";
  } catch (err) {
    if (
      err instanceof CorruptRecordError ||
      err instanceof UnsupportedVersionError ||
      err instanceof UnsupportedCompressionError
    ) {
      return "typed";
    }
    expect.fail(`threw ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}`);
  }
}
