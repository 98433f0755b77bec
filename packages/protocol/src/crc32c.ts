import { createRequire } from "#platform/module";

/**
 * CRC-32C (Castagnoli), the checksum of RecordBatch v2.
 *
 * Every mirrored byte goes through it once, so it bounds the mirror's throughput. Implementations, first
 * that loads and passes the check vector wins:
 * - `aws-crt`: AWS's aws-checksums (x86-64: SSE4.2 CRC instructions over three interleaved streams and
 *   AVX-512 VPCLMULQDQ folding; ARMv8 CRC instructions), about 20 GB/s on 16 KiB here. The binary ships
 *   inside the npm package for linux/macOS/Windows, so it installs without a compiler or a download.
 * - `@node-rs/crc32`: Rust, one stream of SSE4.2/ARMv8 CRC instructions, about 5.5 GB/s; prebuilt per
 *   platform through npm optional dependencies.
 * - the plain JS table below (slicing-by-8), so the project still works everywhere.
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

/** The implementations `crc32c` can use, fastest first. */
export type Crc32cImplementation = "aws-crt" | "node-rs" | "js";

const nativeFailures: string[] = [];
const native = loadNative(nativeFailures);

/** Which implementation `crc32c` uses (`js` when no native binary could be loaded). */
export const crc32cImplementation: Crc32cImplementation = native?.name ?? "js";

/**
 * Why `crc32c` runs on the JavaScript table, one line per native package that did not load (not installed,
 * no binary for this platform, a browser build, a wrong check value); undefined when a native one is used.
 * Tools print it next to their throughput so a slow install is explained, not silent.
 */
export const crc32cFallbackReason: string | undefined = native
  ? undefined
  : `no native CRC-32C could be loaded, using the JavaScript table (slower, same results): ${nativeFailures.join("; ")}`;

const impl: (data: Uint8Array) => number = native ? native.crc32c : crc32cJs;

/** Loads the fastest native binding that works; a missing or wrong binary falls back rather than failing. */
function loadNative(
  failures: string[],
): { name: Crc32cImplementation; crc32c: (d: Uint8Array) => number } | undefined {
  const require = createRequire(import.meta.url);
  const candidates: [Crc32cImplementation, () => (d: Uint8Array) => number][] = [
    [
      "aws-crt",
      () => {
        // Only the checksums module (and its native binding), not the MQTT/HTTP parts of the package.
        const mod = require("aws-crt/dist/native/checksums") as {
          crc32c(d: Uint8Array, prev?: number): number;
        };
        return (d) => mod.crc32c(d) >>> 0;
      },
    ],
    [
      "node-rs",
      () => {
        const mod = require("@node-rs/crc32") as { crc32c(d: Buffer): number };
        return (d) => mod.crc32c(toBuffer(d)) >>> 0;
      },
    ],
  ];
  for (const [name, load] of candidates) {
    try {
      const crc = load();
      const probe = new Uint8Array(20);
      probe.set(Buffer.from("123456789"), 5);
      // The check vector, through a view at an offset (the bindings must honour byteOffset).
      if (crc(Buffer.from("123456789")) === 0xe3069283 && crc(probe.subarray(5, 14)) === 0xe3069283) {
        return { name, crc32c: crc };
      }
      failures.push(`${name}: wrong check value`);
    } catch (err) {
      // Not installed, or no binary for this platform: try the next one.
      failures.push(`${name}: ${err instanceof Error ? err.message.split("\n")[0] : String(err)}`);
    }
  }
  return undefined;
}

function toBuffer(d: Uint8Array): Buffer {
  return Buffer.isBuffer(d) ? d : Buffer.from(d.buffer, d.byteOffset, d.byteLength);
}
