import { randomBytes } from "node:crypto";
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { lz4Js, snappyJs } from "../src/codec-fallbacks";
import { CorruptRecordError } from "../src/errors";
import { compressionFallbacks, decompress } from "../src/index";

const require = createRequire(import.meta.url);
const snappyNative = require("snappy") as typeof snappyJs;
const lz4Native = require("lz4-napi") as typeof lz4Js;

/** Compressible and incompressible inputs, across the 64 KiB LZ4 block boundary. */
function inputs(): Buffer[] {
  const text = Buffer.from("order-42,customer-7,EUR,19.99\n".repeat(5000));
  return [
    Buffer.alloc(0),
    Buffer.from("x"),
    text,
    randomBytes(70_000),
    Buffer.concat([text, randomBytes(1000), text]),
  ];
}

// The JavaScript codecs stand in for the native packages where those cannot load: they must read what the
// native ones write and write what the native ones (and so Kafka's Java client) read.
describe("JavaScript fallbacks of the native codecs", () => {
  it("snappy blocks cross-decode with the native snappy package", () => {
    for (const data of inputs()) {
      expect(
        Buffer.compare(snappyNative.uncompressSync(snappyJs.compressSync(data), { asBuffer: true }), data),
      ).toBe(0);
      expect(
        Buffer.compare(snappyJs.uncompressSync(snappyNative.compressSync(data), { asBuffer: true }), data),
      ).toBe(0);
    }
  });

  it("LZ4 frames cross-decode with lz4-napi, with its header (independent 64 KiB blocks)", () => {
    for (const data of inputs()) {
      const ours = lz4Js.compressFrameSync(data);
      const theirs = lz4Native.compressFrameSync(data, { contentChecksum: false, blockChecksums: false });
      // Kafka's header: version 01, independent blocks, no checksums, 64 KiB blocks, header checksum 0x82.
      expect(ours.subarray(0, 7).toString("hex")).toBe("04224d18604082");
      expect(Buffer.compare(lz4Native.decompressFrameSync(ours), data)).toBe(0);
      expect(Buffer.compare(lz4Js.decompressFrameSync(theirs), data)).toBe(0);
      // And through the records-section decoder, which reads what either writes.
      expect(Buffer.compare(decompress(3, ours), data)).toBe(0);
    }
  });

  it("writes the same frame header as lz4-napi for a 64 KiB-block frame (its header checksum included)", () => {
    const small = Buffer.from("abc");
    const theirs = lz4Native.compressFrameSync(small, { contentChecksum: false, blockChecksums: false });
    expect(lz4Js.compressFrameSync(small).subarray(0, 7).toString("hex")).toBe(
      theirs.subarray(0, 7).toString("hex"),
    );
  });

  it("an LZ4 frame claiming an absurd size is corrupt, not an allocation", () => {
    const frame = Buffer.from(lz4Native.compressFrameSync(Buffer.from("abc")));
    frame[4] = (frame[4] ?? 0) | 0x08; // content-size flag: the next 8 bytes become a size
    expect(() => lz4Js.decompressFrameSync(frame)).toThrow(CorruptRecordError);
  });

  it("reports no fallback where the native packages load", () => {
    decompress(2, snappyNative.compressSync(Buffer.from("v")));
    decompress(3, lz4Native.compressFrameSync(Buffer.from("v")));
    expect(compressionFallbacks()).toEqual([]);
  });
});
