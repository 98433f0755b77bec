import { createRequire } from "node:module";

/**
 * CRC-32C (Castagnoli), the checksum of RecordBatch v2.
 *
 * The fast path is `@node-rs/crc32` (Rust, SSE4.2/ARMv8 CRC instructions, prebuilt per platform through npm
 * optional dependencies, so it installs without a compiler). Where its binary is missing the plain table
 * implementation below is used, so the project still works everywhere.
 */
export function crc32c(data: Uint8Array): number {
  return impl(data);
}

const TABLE = buildTable();

function buildTable(): Uint32Array {
  const table = new Uint32Array(256 * 8);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
    table[n] = c >>> 0;
  }
  // Slicing-by-8 tables: TABLE[k * 256 + n] advances the CRC of byte n by k more zero bytes.
  for (let n = 0; n < 256; n++) {
    let c = table[n]!;
    for (let k = 1; k < 8; k++) {
      c = table[c & 0xff]! ^ (c >>> 8);
      table[k * 256 + n] = c >>> 0;
    }
  }
  return table;
}

/** Plain JavaScript CRC-32C (slicing-by-8 table). The fallback, and the baseline in benchmarks. */
export function crc32cJs(data: Uint8Array): number {
  const t = TABLE;
  let crc = 0xffffffff;
  let i = 0;
  const end8 = data.length - (data.length % 8);
  while (i < end8) {
    const a = crc ^ (data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24));
    crc =
      t[7 * 256 + (a & 0xff)]! ^
      t[6 * 256 + ((a >>> 8) & 0xff)]! ^
      t[5 * 256 + ((a >>> 16) & 0xff)]! ^
      t[4 * 256 + (a >>> 24)]! ^
      t[3 * 256 + data[i + 4]!]! ^
      t[2 * 256 + data[i + 5]!]! ^
      t[256 + data[i + 6]!]! ^
      t[data[i + 7]!]!;
    i += 8;
  }
  while (i < data.length) crc = t[(crc ^ data[i++]!) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

const nativeCrc32c = loadNative();

/** Which implementation `crc32c` uses: `native` (@node-rs/crc32) or `js` (its binary could not be loaded). */
export const crc32cImplementation: "native" | "js" = nativeCrc32c ? "native" : "js";

const impl: (data: Uint8Array) => number = nativeCrc32c ? (d) => nativeCrc32c(toBuffer(d)) >>> 0 : crc32cJs;

/** Loads the native binding; a missing or wrong binary falls back to JS rather than failing the import. */
function loadNative(): ((d: Buffer) => number) | undefined {
  try {
    const mod = createRequire(import.meta.url)("@node-rs/crc32") as { crc32c(d: Buffer): number };
    return mod.crc32c(Buffer.from("123456789")) >>> 0 === 0xe3069283 ? mod.crc32c : undefined;
  } catch {
    return undefined;
  }
}

function toBuffer(d: Uint8Array): Buffer {
  return Buffer.isBuffer(d) ? d : Buffer.from(d.buffer, d.byteOffset, d.byteLength);
}
