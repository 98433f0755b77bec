import { createRequire } from "#platform/module";
import { gunzipSync, gzipSync } from "#platform/zlib";
import { lz4Js, snappyJs } from "./codec-fallbacks";
import { CorruptRecordError, UnsupportedCompressionError } from "./errors";
import type { CompressionType } from "./record-batch-layout";

/**
 * Compression codecs of a RecordBatch's records section, in the formats Kafka's Java client writes:
 * gzip (node:zlib), snappy in xerial framing (the `snappy` napi-rs package for the raw blocks), LZ4 frame
 * format (`lz4-napi`, Rust lz4_flex) and zstd (`@bokuweb/zstd-wasm`, the reference C library built to WASM).
 * Where the snappy or LZ4 package cannot load (no binary for the platform, a browser build), plain
 * JavaScript codecs of the same formats stand in (`codec-fallbacks.ts`) and `compressionFallbacks()` says so.
 *
 * These are used only when records are read or written (producing control records, tests, tools); the
 * mirror path appends fetched batches as they are and never touches them. The packages are loaded on first
 * use, so importing this module costs nothing. zstd needs an asynchronous WASM set-up: call
 * `await loadCompressionCodecs()` once before any zstd encode or decode.
 */

const require = createRequire(import.meta.url);

/** Codec names by id, for messages. */
const CODEC_NAMES = ["none", "gzip", "snappy", "lz4", "zstd"] as const;

/** Kafka's default zstd level (`compression.zstd.level`). */
const ZSTD_LEVEL = 3;
/** Largest decompressed records section accepted (gzip, zstd), guarding against corrupt sizes and bombs. */
const MAX_DECOMPRESSED_BYTES = 256 * 1024 * 1024;
/** Chunk size of xerial-framed snappy, as snappy-java's `SnappyOutputStream` uses by default. */
const XERIAL_BLOCK_SIZE = 32 * 1024;
/** xerial snappy-java stream header: magic `\x82SNAPPY\0`, version 1, compatible version 1. */
const XERIAL_MAGIC = Buffer.from([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00]);
const XERIAL_HEADER_SIZE = 16;

/** A human name for a codec id, e.g. `gzip`, or `codec 6` for ids Kafka does not define. */
export function compressionName(type: number): string {
  return CODEC_NAMES[type] ?? `codec ${type}`;
}

interface SnappyModule {
  compressSync(input: Uint8Array): Buffer;
  uncompressSync(input: Uint8Array, options: { asBuffer: true }): Buffer;
}
interface Lz4Module {
  compressFrameSync(data: Buffer, options?: { contentChecksum?: boolean; blockChecksums?: boolean }): Buffer;
  decompressFrameSync(data: Buffer): Buffer;
}
interface ZstdModule {
  init(): Promise<void>;
  compress(buf: Uint8Array, level?: number): Uint8Array;
  decompress(buf: Uint8Array, opts?: { defaultHeapSize?: number }): Uint8Array;
}

let snappy: SnappyModule | undefined;
let lz4: Lz4Module | undefined;
let zstd: ZstdModule | undefined;
let zstdLoading: Promise<void> | undefined;

function loadModule<T>(name: string, codec: CompressionType): T {
  try {
    return require(name) as T;
  } catch (err) {
    throw new UnsupportedCompressionError(
      `the ${compressionName(codec)} codec package '${name}' could not be loaded on this platform: ${messageOf(err)}`,
      { cause: err },
    );
  }
}

/** Why a codec runs on its JavaScript fallback, by codec name. */
const fallbackReasons = new Map<string, string>();

/** A native codec package, or its JavaScript fallback (same format, slower) when the package cannot load. */
function loadCodec<T>(name: string, codec: CompressionType, fallback: T): T {
  try {
    return require(name) as T;
  } catch (err) {
    fallbackReasons.set(
      compressionName(codec),
      `the ${compressionName(codec)} codec package '${name}' could not be loaded on this platform (${messageOf(err).split("\n")[0]}); using its JavaScript fallback: same format, slower`,
    );
    return fallback;
  }
}

/**
 * One line per codec that runs on its JavaScript fallback because its native package could not load (no
 * binary for this platform, or a browser build), saying why; empty when every codec used so far is native.
 */
export function compressionFallbacks(): string[] {
  return [...fallbackReasons.values()];
}

function snappyModule(): SnappyModule {
  snappy ??= loadCodec<SnappyModule>("snappy", 2, snappyJs);
  return snappy;
}

function lz4Module(): Lz4Module {
  lz4 ??= loadCodec<Lz4Module>("lz4-napi", 3, lz4Js);
  return lz4;
}

function zstdModule(): ZstdModule {
  if (zstd === undefined) {
    throw new UnsupportedCompressionError(
      "zstd is not loaded yet: call await loadCompressionCodecs() first (its WASM module initialises asynchronously)",
    );
  }
  return zstd;
}

/**
 * Loads every codec, including the zstd WASM module, which cannot be initialised synchronously. Call it
 * once at start-up before encoding or decoding zstd records; calling it again is free. Rejects with
 * `UnsupportedCompressionError` if a codec package cannot be loaded.
 */
export function loadCompressionCodecs(): Promise<void> {
  zstdLoading ??= (async () => {
    snappyModule();
    lz4Module();
    const mod = loadModule<ZstdModule>("@bokuweb/zstd-wasm", 4);
    try {
      await mod.init();
    } catch (err) {
      throw new UnsupportedCompressionError(`the zstd WASM module failed to initialise: ${messageOf(err)}`, {
        cause: err,
      });
    }
    zstd = mod;
  })();
  zstdLoading.catch(() => {
    zstdLoading = undefined;
  });
  return zstdLoading;
}

/** True once `loadCompressionCodecs()` has finished, so every codec, zstd included, works synchronously. */
export function compressionCodecsLoaded(): boolean {
  return zstd !== undefined;
}

/**
 * Compresses a records section with `type`, in the format Kafka's Java client writes (xerial-framed snappy,
 * LZ4 frames, a single zstd frame at level 3, gzip at the default level). `NONE` returns `data` itself.
 * Throws `UnsupportedCompressionError` for an unknown codec id, a package that cannot load, or zstd before
 * `loadCompressionCodecs()`.
 */
export function compress(type: CompressionType, data: Buffer): Buffer {
  switch (type) {
    case 0:
      return data;
    case 1:
      return gzipSync(data);
    case 2:
      return snappyXerialCompress(snappyModule(), data);
    case 3:
      return lz4Module().compressFrameSync(data, { contentChecksum: false, blockChecksums: false });
    case 4: {
      const out = zstdModule().compress(data, ZSTD_LEVEL);
      return Buffer.from(out.buffer, out.byteOffset, out.byteLength);
    }
    default:
      throw new UnsupportedCompressionError(`compression ${compressionName(type)} is not defined by Kafka`);
  }
}

/**
 * Decompresses a records section compressed with `type`. Accepts what Kafka clients write: gzip (also
 * several concatenated members), snappy both xerial-framed (Java) and raw (librdkafka, kafkajs codecs), LZ4
 * frames, zstd frames. Bytes the codec rejects give `CorruptRecordError`; an unknown codec id, a package
 * that cannot load, or zstd before `loadCompressionCodecs()` give `UnsupportedCompressionError`.
 */
export function decompress(type: CompressionType, data: Buffer): Buffer {
  if (type === 0) return data;
  if (type < 0 || type > 4) {
    throw new UnsupportedCompressionError(`compression ${compressionName(type)} is not defined by Kafka`);
  }
  // Load first, outside the try: a missing package is not corrupt data.
  const mod = type === 2 ? snappyModule() : type === 3 ? lz4Module() : type === 4 ? zstdModule() : undefined;
  try {
    switch (type) {
      case 1:
        return gunzipSync(data, { maxOutputLength: MAX_DECOMPRESSED_BYTES });
      case 2:
        return snappyDecompress(mod as SnappyModule, data);
      case 3:
        return (mod as Lz4Module).decompressFrameSync(data);
      default:
        return zstdDecompress(mod as ZstdModule, data);
    }
  } catch (err) {
    if (err instanceof CorruptRecordError) throw err;
    throw new CorruptRecordError(
      `records section does not decompress with ${compressionName(type)}: ${messageOf(err)}`,
      { cause: err },
    );
  }
}

/** snappy-java's stream format: the xerial header, then `[int32 length, raw snappy block]*`. */
function snappyXerialCompress(mod: SnappyModule, data: Buffer): Buffer {
  const parts: Buffer[] = [];
  const header = Buffer.alloc(XERIAL_HEADER_SIZE);
  XERIAL_MAGIC.copy(header, 0);
  header.writeInt32BE(1, 8);
  header.writeInt32BE(1, 12);
  parts.push(header);
  for (let start = 0; start < data.length; start += XERIAL_BLOCK_SIZE) {
    const block = mod.compressSync(data.subarray(start, start + XERIAL_BLOCK_SIZE));
    const len = Buffer.allocUnsafe(4);
    len.writeInt32BE(block.length, 0);
    parts.push(len, block);
  }
  return Buffer.concat(parts);
}

function isXerial(data: Buffer): boolean {
  return data.length >= XERIAL_MAGIC.length && data.subarray(0, XERIAL_MAGIC.length).equals(XERIAL_MAGIC);
}

/**
 * Checks a raw snappy block's declared uncompressed length (its leading varint) before the codec allocates
 * it: snappy cannot expand more than 64 bytes out of a 3-byte copy, so a larger claim is corrupt.
 */
function snappyRawUncompress(mod: SnappyModule, block: Buffer): Buffer {
  let declared = 0;
  let i = 0;
  for (let shift = 0; ; shift += 7) {
    if (i >= block.length || shift > 28) throw new CorruptRecordError("snappy block has a malformed length");
    const b = block[i++]!;
    declared += (b & 0x7f) * 2 ** shift;
    if ((b & 0x80) === 0) break;
  }
  if (declared > MAX_DECOMPRESSED_BYTES || declared > (block.length - i) * 22 + 16) {
    throw new CorruptRecordError(
      `snappy block of ${block.length} bytes claims ${declared} uncompressed bytes`,
    );
  }
  return mod.uncompressSync(block, { asBuffer: true });
}

function snappyDecompress(mod: SnappyModule, data: Buffer): Buffer {
  if (!isXerial(data)) return snappyRawUncompress(mod, data);
  if (data.length < XERIAL_HEADER_SIZE) {
    throw new CorruptRecordError(`xerial snappy stream is ${data.length} bytes, shorter than its header`);
  }
  const parts: Buffer[] = [];
  let o = XERIAL_HEADER_SIZE;
  while (o < data.length) {
    if (o + 4 > data.length) {
      throw new CorruptRecordError(`xerial snappy stream ends inside a block length at byte ${o}`);
    }
    const len = data.readInt32BE(o);
    o += 4;
    if (len < 0 || o + len > data.length) {
      throw new CorruptRecordError(
        `xerial snappy block at byte ${o - 4} declares ${len} bytes but ${data.length - o} remain`,
      );
    }
    parts.push(snappyRawUncompress(mod, data.subarray(o, o + len)));
    o += len;
  }
  return Buffer.concat(parts);
}

const ZSTD_MAGIC = 0xfd2fb528;
const ZSTD_DST_SIZE_TOO_SMALL = -70;

/**
 * Reads the content size from a zstd frame header (RFC 8878 §3.1.1.1), or undefined if the frame does not
 * declare it. Checking the header here keeps malformed sizes away from the WASM allocator.
 */
function zstdFrameContentSize(data: Buffer): number | undefined {
  if (data.length < 5 || data.readUInt32LE(0) !== ZSTD_MAGIC) {
    throw new CorruptRecordError("records section is not a zstd frame (bad magic number)");
  }
  const descriptor = data[4]!;
  const fcsFlag = descriptor >> 6;
  const singleSegment = (descriptor >> 5) & 1;
  if (descriptor & 0x08) throw new CorruptRecordError("zstd frame header has its reserved bit set");
  const dictIdSize = [0, 1, 2, 4][descriptor & 3]!;
  const fcsSize = fcsFlag === 0 ? singleSegment : [0, 2, 4, 8][fcsFlag]!;
  const fcsAt = 5 + (singleSegment ? 0 : 1) + dictIdSize;
  if (fcsAt + fcsSize > data.length) throw new CorruptRecordError("zstd frame header is cut off");
  switch (fcsSize) {
    case 0:
      return undefined;
    case 1:
      return data[fcsAt]!;
    case 2:
      return data.readUInt16LE(fcsAt) + 256;
    case 4:
      return data.readUInt32LE(fcsAt);
    default: {
      const size = data.readBigUInt64LE(fcsAt);
      return size > BigInt(MAX_DECOMPRESSED_BYTES) ? MAX_DECOMPRESSED_BYTES + 1 : Number(size);
    }
  }
}

function zstdDecompress(mod: ZstdModule, data: Buffer): Buffer {
  const declared = zstdFrameContentSize(data);
  if (declared !== undefined && declared > MAX_DECOMPRESSED_BYTES) {
    throw new CorruptRecordError(`zstd frame declares ${declared} bytes, more than this reader accepts`);
  }
  // Frames written by a streaming compressor (Java's ZstdOutputStream) carry no content size: grow the
  // output buffer until it fits.
  let heap = Math.max(64 * 1024, data.length * 8);
  for (;;) {
    try {
      const out = mod.decompress(data, { defaultHeapSize: Math.min(heap, MAX_DECOMPRESSED_BYTES) });
      return Buffer.from(out.buffer, out.byteOffset, out.byteLength);
    } catch (err) {
      const tooSmall = messageOf(err).endsWith(`code ${ZSTD_DST_SIZE_TOO_SMALL}`);
      if (!tooSmall || declared !== undefined || heap >= MAX_DECOMPRESSED_BYTES) throw err;
      heap *= 4;
    }
  }
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
