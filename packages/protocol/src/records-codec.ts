import { UnsupportedCompressionError } from "./errors";
import type { Record } from "./record";
import type { CompressionType } from "./record-batch-layout";
import { sizeOfVarint, sizeOfVarlong, writeVarint, writeVarlong } from "./varint";

/** Size in bytes of one record's body (everything after its length varint). */
function bodySize(r: Record): number {
  let size = 1 + sizeOfVarlong(r.timestampDelta) + sizeOfVarint(r.offsetDelta);
  size += r.key === null ? sizeOfVarint(-1) : sizeOfVarint(r.key.length) + r.key.length;
  size += r.value === null ? sizeOfVarint(-1) : sizeOfVarint(r.value.length) + r.value.length;
  size += sizeOfVarint(r.headers.length);
  for (const h of r.headers) {
    const k = Buffer.byteLength(h.key, "utf8");
    size += sizeOfVarint(k) + k;
    size += h.value === null ? sizeOfVarint(-1) : sizeOfVarint(h.value.length) + h.value.length;
  }
  return size;
}

/** Writes records in the v2 record format (uncompressed). */
export function encodeRecordsUncompressed(records: readonly Record[]): Buffer {
  let total = 0;
  const sizes = records.map((r) => {
    const body = bodySize(r);
    total += sizeOfVarint(body) + body;
    return body;
  });
  const buf = Buffer.allocUnsafe(total);
  let o = 0;
  records.forEach((r, i) => {
    o = writeVarint(buf, o, sizes[i]!);
    buf.writeInt8(r.attributes, o++);
    o = writeVarlong(buf, o, r.timestampDelta);
    o = writeVarint(buf, o, r.offsetDelta);
    o = writeBytes(buf, o, r.key);
    o = writeBytes(buf, o, r.value);
    o = writeVarint(buf, o, r.headers.length);
    for (const h of r.headers) {
      const k = Buffer.from(h.key, "utf8");
      o = writeBytes(buf, o, k);
      o = writeBytes(buf, o, h.value);
    }
  });
  return buf;
}

function writeBytes(buf: Buffer, o: number, bytes: Buffer | null): number {
  if (bytes === null) return writeVarint(buf, o, -1);
  o = writeVarint(buf, o, bytes.length);
  bytes.copy(buf, o);
  return o + bytes.length;
}

/** Writes records, compressing the section with `compression`. */
export function encodeRecords(records: readonly Record[], compression: CompressionType): Buffer {
  const plain = encodeRecordsUncompressed(records);
  if (compression === 0) return plain;
  throw new UnsupportedCompressionError(`compression codec ${compression} is not wired into the encoder yet`);
}
