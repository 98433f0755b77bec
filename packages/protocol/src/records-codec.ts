import { compress, compressionName, decompress } from "./compression";
import { CorruptRecordError } from "./errors";
import type { Record, RecordHeader } from "./record";
import type { RecordBatch } from "./record-batch";
import type { CompressionType } from "./record-batch-layout";
import { readVarint, readVarlong, sizeOfVarint, sizeOfVarlong, writeVarint, writeVarlong } from "./varint";

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

/**
 * Writes records, compressing the section with `compression`. An empty record list gives an empty section
 * whatever the codec, as Kafka's log cleaner leaves an emptied batch.
 */
export function encodeRecords(records: readonly Record[], compression: CompressionType): Buffer {
  const plain = encodeRecordsUncompressed(records);
  if (compression === 0 || records.length === 0) return plain;
  return compress(compression, plain);
}

/**
 * Decodes every record of `batch`, decompressing its records section if needed. Checks that the section
 * holds exactly `recordCount` well-formed records and that their offset deltas increase within
 * `[0, lastOffsetDelta]` (gaps are allowed: compaction leaves them). It does not check the CRC: use
 * `decodeRecordBatch` or `batch.validate()` for that.
 *
 * Keys, values and header values are views into the batch's bytes (or the decompressed copy): copy them if
 * the batch's buffer will be reused. Throws `CorruptRecordError` for malformed bytes and
 * `UnsupportedCompressionError` for a codec that is unknown or not loaded; never anything else.
 */
export function decodeRecords(batch: RecordBatch): Record[] {
  const count = batch.recordCount;
  const where = `record batch at offset ${batch.baseOffset}`;
  if (count < 0) throw new CorruptRecordError(`${where} has a negative record count ${count}`);
  const section = batch.recordsBytes;
  if (section.length === 0 && count === 0) return [];
  const compression = batch.compression;
  let plain: Buffer;
  try {
    plain = decompress(compression, section);
  } catch (err) {
    if (err instanceof CorruptRecordError) {
      throw new CorruptRecordError(`${where}: ${err.message}`, { cause: err });
    }
    throw err;
  }
  return decodeRecordsSection(
    plain,
    count,
    batch.lastOffsetDelta,
    `${where} (${compressionName(compression)})`,
  );
}

/**
 * Decodes an uncompressed records section holding exactly `count` records whose offset deltas must
 * increase within `[0, lastOffsetDelta]`. `where` names the data in error messages. Throws only
 * `CorruptRecordError`.
 */
export function decodeRecordsSection(
  buf: Buffer,
  count: number,
  lastOffsetDelta: number,
  where = "records section",
): Record[] {
  const end = buf.length;
  // Every record takes at least 7 bytes: reject absurd counts before looping.
  if (count < 0 || count > Math.ceil(end / 7)) {
    throw new CorruptRecordError(`${where} declares ${count} records but holds only ${end} bytes`);
  }
  const records: Record[] = [];
  let o = 0;
  let previousDelta = -1;
  for (let i = 0; i < count; i++) {
    if (o >= end) {
      throw new CorruptRecordError(`${where} declares ${count} records but its bytes end after ${i}`);
    }
    const length = readVarint(buf, o, end);
    o = length.next;
    if (length.value < 0 || o + length.value > end) {
      throw new CorruptRecordError(
        `${where}: record ${i} at byte ${o} declares ${length.value} bytes but ${end - o} remain`,
      );
    }
    const bodyEnd = o + length.value;
    if (o >= bodyEnd) throw new CorruptRecordError(`${where}: record ${i} is empty`);
    const attributes = buf.readInt8(o++);
    const timestampDelta = readVarlong(buf, o, bodyEnd);
    const offsetDelta = readVarint(buf, timestampDelta.next, bodyEnd);
    o = offsetDelta.next;
    if (offsetDelta.value <= previousDelta || offsetDelta.value > lastOffsetDelta) {
      throw new CorruptRecordError(
        `${where}: record ${i} has offset delta ${offsetDelta.value}, expected above ${previousDelta} and at most lastOffsetDelta ${lastOffsetDelta}`,
      );
    }
    previousDelta = offsetDelta.value;
    const key = readNullableBytes(buf, o, bodyEnd, where, i, "key");
    const value = readNullableBytes(buf, key.next, bodyEnd, where, i, "value");
    const headerCount = readVarint(buf, value.next, bodyEnd);
    o = headerCount.next;
    if (headerCount.value < 0 || headerCount.value > bodyEnd - o) {
      throw new CorruptRecordError(`${where}: record ${i} declares ${headerCount.value} headers`);
    }
    const headers: RecordHeader[] = [];
    for (let h = 0; h < headerCount.value; h++) {
      const hk = readNullableBytes(buf, o, bodyEnd, where, i, "header key");
      if (hk.value === null) throw new CorruptRecordError(`${where}: record ${i} has a null header key`);
      const hv = readNullableBytes(buf, hk.next, bodyEnd, where, i, "header value");
      headers.push({ key: hk.value.toString("utf8"), value: hv.value });
      o = hv.next;
    }
    if (o !== bodyEnd) {
      throw new CorruptRecordError(
        `${where}: record ${i} declares ${length.value} bytes but its fields take ${o - (bodyEnd - length.value)}`,
      );
    }
    records.push({
      attributes,
      offsetDelta: offsetDelta.value,
      timestampDelta: timestampDelta.value,
      key: key.value,
      value: value.value,
      headers,
    });
  }
  if (o !== end) {
    throw new CorruptRecordError(`${where} has ${end - o} bytes left over after its ${count} records`);
  }
  return records;
}

function readNullableBytes(
  buf: Buffer,
  offset: number,
  end: number,
  where: string,
  index: number,
  field: string,
): { value: Buffer | null; next: number } {
  const len = readVarint(buf, offset, end);
  if (len.value === -1) return { value: null, next: len.next };
  if (len.value < -1 || len.next + len.value > end) {
    throw new CorruptRecordError(
      `${where}: record ${index} ${field} declares ${len.value} bytes but ${end - len.next} remain`,
    );
  }
  return { value: buf.subarray(len.next, len.next + len.value), next: len.next + len.value };
}
