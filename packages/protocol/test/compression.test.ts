import { createRequire } from "node:module";
import { gzipSync } from "node:zlib";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import {
  CorruptRecordError,
  compress,
  compressionCodecsLoaded,
  decompress,
  loadCompressionCodecs,
  UnsupportedCompressionError,
} from "../src/index";
import { onlyTypedErrors, SEED } from "./helpers";

const require = createRequire(import.meta.url);
const snappy = require("snappy") as { compressSync(b: Buffer): Buffer };

beforeAll(async () => {
  await loadCompressionCodecs();
  await loadCompressionCodecs(); // idempotent
});

const CODECS = [1, 2, 3, 4] as const;

describe("compression codecs", () => {
  it("loads every codec", () => {
    expect(compressionCodecsLoaded()).toBe(true);
  });

  it("round-trips arbitrary data through every codec", () => {
    // numRuns: 200 (each run covers all four codecs)
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 5000 }), fc.nat(40), (raw, repeat) => {
        const data = Buffer.concat(Array.from({ length: 1 + repeat }, () => Buffer.from(raw)));
        for (const codec of CODECS) expect(decompress(codec, compress(codec, data)).equals(data)).toBe(true);
      }),
      { seed: SEED, numRuns: 200 },
    );
  });

  it("NONE returns the bytes themselves", () => {
    const b = Buffer.from("abc");
    expect(compress(0, b)).toBe(b);
    expect(decompress(0, b)).toBe(b);
  });

  it("writes snappy in xerial framing (as Kafka's Java client) with 32 KiB blocks", () => {
    const data = Buffer.alloc(100_000, "kafka");
    const out = compress(2, data);
    expect(out.subarray(0, 8)).toEqual(Buffer.from([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0]));
    expect(out.readInt32BE(8)).toBe(1);
    expect(out.readInt32BE(12)).toBe(1);
    let blocks = 0;
    for (let o = 16; o < out.length; o += 4 + out.readInt32BE(o)) blocks++;
    expect(blocks).toBe(Math.ceil(100_000 / 32768));
  });

  it("reads raw (unframed) snappy, as librdkafka and the kafkajs snappy codecs write it", () => {
    const data = Buffer.from("raw snappy block ".repeat(50));
    expect(decompress(2, snappy.compressSync(data)).equals(data)).toBe(true);
    const zeros = Buffer.alloc(1 << 20);
    expect(decompress(2, snappy.compressSync(zeros)).equals(zeros)).toBe(true);
  });

  it("rejects a snappy block claiming more output than snappy can expand to", () => {
    // varint 0xffffffff (4 GiB - 1) followed by 3 bytes.
    expect(() => decompress(2, Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f, 0, 1, 2]))).toThrow(/claims/);
  });

  it("writes LZ4 frames Kafka's KafkaLZ4BlockInputStream reads (magic, version 01, independent blocks)", () => {
    const out = compress(3, Buffer.alloc(1000, 1));
    expect(out.readUInt32LE(0)).toBe(0x184d2204);
    const flg = out[4]!;
    expect(flg >> 6).toBe(1); // version
    expect((flg >> 5) & 1).toBe(1); // block independence
    expect(flg & 0x13).toBe(0); // no block checksum, no dict id, reserved bit clear
    expect((out[5]! >> 4) & 7).toBeGreaterThanOrEqual(4); // block max size 64 KiB .. 4 MiB
  });

  it("reads concatenated gzip members", () => {
    const two = Buffer.concat([gzipSync(Buffer.from("ab")), gzipSync(Buffer.from("cd"))]);
    expect(decompress(1, two).toString()).toBe("abcd");
  });

  it("rejects unknown codec ids with UnsupportedCompressionError", () => {
    for (const id of [5, 6, 7, -1]) {
      expect(() => decompress(id as 0, Buffer.from("x"))).toThrow(UnsupportedCompressionError);
      expect(() => compress(id as 0, Buffer.from("x"))).toThrow(UnsupportedCompressionError);
    }
  });

  it("truncated or corrupt compressed data throws CorruptRecordError only", () => {
    // numRuns: 300 (each run: all four codecs, every truncation point sampled, random edits)
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 1, maxLength: 2000 }),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 4 }),
        fc.nat(),
        (raw, edits, cutSeed) => {
          const data = Buffer.from(raw);
          for (const codec of CODECS) {
            const good = compress(codec, data);
            const cut = good.subarray(0, cutSeed % good.length);
            expect(onlyTypedErrors(() => decompress(codec, cut))).not.toBe(undefined);
            const edited = Buffer.from(good);
            for (const [at, v] of edits) edited[at % edited.length] = v;
            onlyTypedErrors(() => decompress(codec, edited));
          }
        },
      ),
      { seed: SEED, numRuns: 300 },
    );
  });

  it("random bytes decompress or throw CorruptRecordError", () => {
    // numRuns: 500
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (raw) => {
        for (const codec of CODECS) {
          try {
            decompress(codec, Buffer.from(raw));
          } catch (err) {
            expect(err).toBeInstanceOf(CorruptRecordError);
          }
        }
      }),
      { seed: SEED, numRuns: 500 },
    );
  });

  it("cut-off frames are corrupt", () => {
    const data = Buffer.alloc(5000, "z");
    for (const codec of CODECS) {
      const good = compress(codec, data);
      // lz4_flex accepts a frame whose 4-byte end mark is cut off once every block is whole.
      if (codec !== 3) {
        expect(() => decompress(codec, good.subarray(0, good.length - 2))).toThrow(CorruptRecordError);
      }
      expect(() => decompress(codec, good.subarray(0, good.length - 8))).toThrow(CorruptRecordError);
      expect(() => decompress(codec, good.subarray(0, 3))).toThrow(CorruptRecordError);
    }
  });
});
