import {
  crc32c,
  crc32cImplementation,
  crc32cJs,
  decodeRecordBatch,
  encodeRecordBatch,
  loadCompressionCodecs,
  type Record,
} from "@cluster-mirror/protocol";
import { type BenchResult, type BenchSuite, measureOpsPerSecond, result } from "../harness";

/** MB/s of `fn` over `buf` (1 MB = 10^6 bytes). */
function mbPerSecond(fn: (b: Buffer) => number, buf: Buffer, minMs = 400): number {
  let sink = 0;
  const ops = measureOpsPerSecond(
    () => {
      sink ^= fn(buf);
    },
    1,
    minMs,
  );
  if (sink === 0.5) console.log(sink); // keep the result alive
  return (ops * buf.length) / 1e6;
}

/** Deterministic pseudo-random bytes (xorshift), so every run measures the same data. */
function bytes(n: number, seed = 0x9e3779b9): Buffer {
  const b = Buffer.allocUnsafe(n);
  let x = seed >>> 0;
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    b[i] = x & 0xff;
  }
  return b;
}

/** Byte-at-a-time table (Sarwate), the textbook plain-JS CRC-32C: a second, simpler baseline. */
const SARWATE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();
function crc32cBytewise(data: Uint8Array): number {
  let crc = 0xffffffff;
  for (let i = 0; i < data.length; i++) crc = SARWATE[(crc ^ data[i]!) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/** About 16 KiB of records: 64 records of 256-byte JSON-like text values (compressible, like real data). */
function records16k(): Record[] {
  return Array.from({ length: 64 }, (_, i) => ({
    attributes: 0,
    offsetDelta: i,
    timestampDelta: BigInt(i),
    key: Buffer.from(`order-${i % 7}`),
    value: Buffer.from(
      JSON.stringify({ id: i, customer: `c-${i % 13}`, amount: i * 3.5, note: "x".repeat(180) }).padEnd(256),
    ),
    headers: [{ key: "trace", value: Buffer.from(`t-${i}`) }],
  }));
}

export const suite: BenchSuite = {
  name: "protocol",
  async run(): Promise<BenchResult[]> {
    const out: BenchResult[] = [];
    for (const [label, size] of [
      ["16KiB", 16 * 1024],
      ["1MiB", 1024 * 1024],
    ] as const) {
      const buf = bytes(size);
      const fast = mbPerSecond(crc32c, buf);
      const js = mbPerSecond(crc32cJs, buf);
      const bytewise = mbPerSecond(crc32cBytewise, buf);
      if (crc32cBytewise(buf) !== crc32c(buf)) throw new Error("byte-wise baseline disagrees with crc32c");
      out.push(
        result(
          `crc32c.${label}`,
          fast,
          "MB/s",
          js,
          `${crc32cImplementation} vs crc32cJs, the slicing-by-8 JS fallback; target >= 10x`,
        ),
        result(
          `crc32c.${label}.vs-bytewise`,
          fast,
          "MB/s",
          bytewise,
          `${crc32cImplementation} vs a byte-at-a-time JS table (Sarwate); target >= 10x`,
        ),
      );
    }

    await loadCompressionCodecs();
    const records = records16k();
    const plain = encodeRecordBatch({ records });
    const encodeBaseline = measureOpsPerSecond(() => encodeRecordBatch({ records }), 1, 300);
    const decodeBaseline = measureOpsPerSecond(() => decodeRecordBatch(plain), 1, 300);
    out.push(
      result("batch.encode.16KiB.none", encodeBaseline, "ops/s", encodeBaseline, `${plain.length} B batch`),
    );
    out.push(result("batch.decode.16KiB.none", decodeBaseline, "ops/s", decodeBaseline, "full decode + CRC"));
    for (const [name, compression] of [
      ["gzip", 1],
      ["snappy", 2],
      ["lz4", 3],
      ["zstd", 4],
    ] as const) {
      const encoded = encodeRecordBatch({ records, compression });
      const enc = measureOpsPerSecond(() => encodeRecordBatch({ records, compression }), 1, 300);
      const dec = measureOpsPerSecond(() => decodeRecordBatch(encoded), 1, 300);
      const note = `${encoded.length} B batch; baseline uncompressed`;
      out.push(result(`batch.encode.16KiB.${name}`, enc, "ops/s", encodeBaseline, note));
      out.push(result(`batch.decode.16KiB.${name}`, dec, "ops/s", decodeBaseline, note));
    }
    return out;
  },
};
