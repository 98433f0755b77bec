import * as lz4js from "lz4js";
import * as snappyjs from "snappyjs";
import { CorruptRecordError } from "./errors";

/**
 * Plain JavaScript codecs for when a native codec package cannot load (no binary for the platform, or a
 * browser build): same formats, slower. They have the shape of the native packages' APIs that
 * `compression.ts` uses, so the framing code there (xerial snappy, size checks) is the same for both.
 */

/** The subset of the `snappy` package used: raw snappy blocks. */
export interface SnappyCodec {
  compressSync(input: Uint8Array): Buffer;
  uncompressSync(input: Uint8Array, options: { asBuffer: true }): Buffer;
}

/** The subset of `lz4-napi` used: LZ4 frames. */
export interface Lz4Codec {
  compressFrameSync(data: Buffer, options?: { contentChecksum?: boolean; blockChecksums?: boolean }): Buffer;
  decompressFrameSync(data: Buffer): Buffer;
}

/** Raw snappy blocks through `snappyjs`. */
export const snappyJs: SnappyCodec = {
  compressSync: (input) =>
    toBuffer(snappyjs.compress(new Uint8Array(input.buffer, input.byteOffset, input.byteLength))),
  uncompressSync: (input) =>
    toBuffer(snappyjs.uncompress(new Uint8Array(input.buffer, input.byteOffset, input.byteLength))),
};

/**
 * LZ4 frame header as Kafka's `KafkaLZ4BlockOutputStream` and lz4-napi write it: magic, FLG = version 01
 * with independent blocks and no checksums, BD = 64 KiB blocks, and the header checksum of those two bytes.
 */
const LZ4_FRAME_HEADER = [0x04, 0x22, 0x4d, 0x18, 0x60, 0x40, 0x82];
const LZ4_BLOCK_SIZE = 64 * 1024;
const LZ4_UNCOMPRESSED_BLOCK = 0x80000000;
/** Largest decompressed records section accepted, as for the other codecs. */
const LZ4_MAX_OUTPUT = 256 * 1024 * 1024;

/** LZ4 frames through `lz4js`'s block codec (its own frame writer makes dependent blocks, which Kafka refuses). */
export const lz4Js: Lz4Codec = {
  compressFrameSync(data) {
    const parts: Buffer[] = [Buffer.from(LZ4_FRAME_HEADER)];
    for (let start = 0; start < data.length; start += LZ4_BLOCK_SIZE) {
      const block = data.subarray(start, start + LZ4_BLOCK_SIZE);
      // A new hash table per block: every match stays inside its block (independent blocks).
      const out = new Uint8Array(lz4js.compressBound(block.length));
      const size = lz4js.compressBlock(block, out, 0, block.length, new Uint32Array(1 << 16));
      const stored = size > 0 && size < block.length;
      const length = Buffer.alloc(4);
      length.writeUInt32LE(stored ? size : (LZ4_UNCOMPRESSED_BLOCK | block.length) >>> 0, 0);
      parts.push(length, stored ? toBuffer(out.subarray(0, size)) : block);
    }
    parts.push(Buffer.alloc(4)); // end mark
    return Buffer.concat(parts);
  },
  decompressFrameSync(data) {
    // An upper bound from the block headers (or the declared content size), then a check that the frame
    // did not hold more than that: lz4js would otherwise cut the output short without saying so.
    const bound = lz4js.decompressBound(data) as unknown as number;
    if (!Number.isSafeInteger(bound) || bound < 0 || bound > LZ4_MAX_OUTPUT) {
      throw new CorruptRecordError(`lz4 frame declares ${bound} bytes, more than this reader accepts`);
    }
    const out = new Uint8Array(bound);
    const size = lz4js.decompressFrame(data, out);
    if (size > bound)
      throw new CorruptRecordError(`lz4 frame holds more than the ${bound} bytes it declares`);
    return toBuffer(out.subarray(0, size));
  },
};

function toBuffer(out: Uint8Array): Buffer {
  return Buffer.from(out.buffer, out.byteOffset, out.byteLength);
}
