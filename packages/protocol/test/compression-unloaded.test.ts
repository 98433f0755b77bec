import { describe, expect, it } from "vitest";
import {
  compress,
  compressionCodecsLoaded,
  decodeRecordBatch,
  decompress,
  encodeRecordBatch,
  UnsupportedCompressionError,
} from "../src/index";

// This file never calls loadCompressionCodecs(): vitest runs each test file in its own module graph.
describe("zstd before loadCompressionCodecs()", () => {
  it("encode and decode throw UnsupportedCompressionError naming the fix", () => {
    expect(compressionCodecsLoaded()).toBe(false);
    const records = [
      { attributes: 0, offsetDelta: 0, timestampDelta: 0n, key: null, value: Buffer.from("v"), headers: [] },
    ];
    expect(() => encodeRecordBatch({ compression: 4, records })).toThrow(UnsupportedCompressionError);
    expect(() => compress(4, Buffer.from("x"))).toThrow(/await loadCompressionCodecs\(\)/);
    expect(() => decompress(4, Buffer.from("x"))).toThrow(UnsupportedCompressionError);
  });

  it("the synchronous codecs work without loading", () => {
    for (const codec of [0, 1, 2, 3] as const) {
      const records = [
        {
          attributes: 0,
          offsetDelta: 0,
          timestampDelta: 0n,
          key: null,
          value: Buffer.from("v"),
          headers: [],
        },
      ];
      expect(decodeRecordBatch(encodeRecordBatch({ compression: codec, records })).records).toEqual(records);
    }
  });

  it("an empty zstd batch needs no codec", () => {
    expect(decodeRecordBatch(encodeRecordBatch({ compression: 4, records: [] })).records).toEqual([]);
  });
});
