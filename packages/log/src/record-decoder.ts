import {
  CorruptRecordError,
  type Record,
  type RecordBatch,
  type RecordHeader,
  readVarint,
  readVarlong,
  UnsupportedCompressionError,
} from "@cluster-mirror/protocol";

/**
 * Decodes the records of an uncompressed batch. Private to the log: only compaction needs records (the
 * mirror path never decodes). Replace with the protocol's full decoder once it exists.
 */
export function decodeRecords(batch: RecordBatch): Record[] {
  if (batch.compression !== 0) {
    throw new UnsupportedCompressionError(
      `batch at offset ${batch.baseOffset} is compressed (codec ${batch.compression}); the log's decoder reads uncompressed batches only`,
    );
  }
  const buf = batch.recordsBytes;
  const records: Record[] = [];
  let o = 0;
  for (let i = 0; i < batch.recordCount; i++) {
    const length = readVarint(buf, o);
    const end = length.next + length.value;
    if (length.value < 0 || end > buf.length) {
      throw new CorruptRecordError(
        `record ${i} of batch at offset ${batch.baseOffset} runs past the batch end`,
      );
    }
    o = length.next;
    const attributes = buf.readInt8(o++);
    const ts = readVarlong(buf, o, end);
    const od = readVarint(buf, ts.next, end);
    const key = readBytes(buf, od.next, end);
    const value = readBytes(buf, key.next, end);
    const count = readVarint(buf, value.next, end);
    o = count.next;
    const headers: RecordHeader[] = [];
    for (let h = 0; h < count.value; h++) {
      const k = readBytes(buf, o, end);
      const v = readBytes(buf, k.next, end);
      headers.push({ key: (k.value ?? Buffer.alloc(0)).toString("utf8"), value: v.value });
      o = v.next;
    }
    if (o !== end)
      throw new CorruptRecordError(`record ${i} of batch at offset ${batch.baseOffset} has trailing bytes`);
    records.push({
      attributes,
      timestampDelta: ts.value,
      offsetDelta: od.value,
      key: key.value,
      value: value.value,
      headers,
    });
  }
  return records;
}

function readBytes(buf: Buffer, offset: number, end: number): { value: Buffer | null; next: number } {
  const len = readVarint(buf, offset, end);
  if (len.value < 0) return { value: null, next: len.next };
  const next = len.next + len.value;
  if (next > end) throw new CorruptRecordError(`record field at byte ${offset} runs past the record end`);
  return { value: buf.subarray(len.next, next), next };
}
