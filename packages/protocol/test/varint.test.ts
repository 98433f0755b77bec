import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  CorruptRecordError,
  readVarint,
  readVarlong,
  sizeOfVarint,
  sizeOfVarlong,
  writeVarint,
  writeVarlong,
} from "../src/index";
import { SEED } from "./helpers";

describe("varints", () => {
  it("round-trip int32 and int64 with the predicted size", () => {
    // numRuns: 2000
    fc.assert(
      fc.property(
        fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
        fc.bigInt(-(1n << 63n), (1n << 63n) - 1n),
        (i, l) => {
          const buf = Buffer.alloc(16);
          const end = writeVarint(buf, 1, i);
          expect(end - 1).toBe(sizeOfVarint(i));
          expect(readVarint(buf, 1)).toEqual({ value: i, next: end });
          const lend = writeVarlong(buf, 0, l);
          expect(lend).toBe(sizeOfVarlong(l));
          expect(readVarlong(buf, 0)).toEqual({ value: l, next: lend });
          for (let n = 1; n < end; n++) expect(() => readVarint(buf, 1, n)).toThrow(CorruptRecordError);
          for (let n = 0; n < lend; n++) expect(() => readVarlong(buf, 0, n)).toThrow(CorruptRecordError);
        },
      ),
      { seed: SEED, numRuns: 2000 },
    );
  });

  it("known encodings (protobuf zig-zag)", () => {
    const cases: [number, number[]][] = [
      [0, [0]],
      [-1, [1]],
      [1, [2]],
      [63, [0x7e]],
      [-64, [0x7f]],
      [64, [0x80, 0x01]],
      [2 ** 31 - 1, [0xfe, 0xff, 0xff, 0xff, 0x0f]],
      [-(2 ** 31), [0xff, 0xff, 0xff, 0xff, 0x0f]],
    ];
    for (const [v, bytes] of cases) {
      const buf = Buffer.alloc(5);
      expect([...buf.subarray(0, writeVarint(buf, 0, v))]).toEqual(bytes);
    }
  });

  it("any bytes read as a value or a CorruptRecordError", () => {
    // numRuns: 2000
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 12 }), (raw) => {
        const buf = Buffer.from(raw);
        for (const read of [readVarint, readVarlong]) {
          try {
            read(buf, 0);
          } catch (err) {
            expect(err).toBeInstanceOf(CorruptRecordError);
          }
        }
      }),
      { seed: SEED, numRuns: 2000 },
    );
  });

  it("rejects overlong varints", () => {
    expect(() => readVarint(Buffer.from([0x80, 0x80, 0x80, 0x80, 0x80, 0x01]), 0)).toThrow(/longer than 5/);
    expect(() => readVarlong(Buffer.alloc(11, 0x80), 0)).toThrow(/longer than 10/);
  });
});
