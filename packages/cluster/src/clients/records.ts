import type { AbortedTxn, IsolationLevel } from "@cluster-mirror/log";
import {
  type CompressionType,
  decodeRecords,
  encodeRecordBatch,
  type Record,
  type RecordBatch,
  type RecordHeader,
  recordBatches,
  TimestampType,
} from "@cluster-mirror/protocol";
import type { IHeaders, KafkaMessage, Message } from "./types";

/** Producer fields of a batch to encode. */
export interface BatchProducer {
  producerId?: bigint;
  producerEpoch?: number;
  baseSequence?: number;
  isTransactional?: boolean;
}

/** Encodes kafkajs messages as one RecordBatch v2 (offsets 0..n-1; the leader assigns the real ones). */
export function encodeMessages(
  messages: readonly Message[],
  now: number,
  producer: BatchProducer,
  compression: CompressionType = 0,
): Buffer {
  const timestamps = messages.map((m) => (m.timestamp === undefined ? BigInt(now) : BigInt(m.timestamp)));
  const baseTimestamp = timestamps[0] ?? BigInt(now);
  const records: Record[] = messages.map((m, i) => ({
    attributes: 0,
    offsetDelta: i,
    timestampDelta: timestamps[i]! - baseTimestamp,
    key: toBuffer(m.key),
    value: toBuffer(m.value),
    headers: encodeHeaders(m.headers),
  }));
  return encodeRecordBatch({ ...producer, compression, baseTimestamp, records });
}

/** kafkajs headers to the record's ordered header list (arrays become repeated headers). */
export function encodeHeaders(headers: IHeaders | undefined): RecordHeader[] {
  const out: RecordHeader[] = [];
  if (!headers) return out;
  for (const [key, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) out.push({ key, value: toBuffer(v) });
  }
  return out;
}

/** The record's header list as kafkajs shows it: repeated keys become arrays, in order. */
export function decodeHeaders(headers: readonly RecordHeader[]): IHeaders {
  const out: IHeaders = {};
  for (const h of headers) {
    const existing = out[h.key];
    if (existing === undefined) out[h.key] = h.value;
    else if (Array.isArray(existing)) existing.push(h.value);
    else out[h.key] = [existing, h.value];
  }
  return out;
}

/** What one partition's fetch yields for the application. */
export interface DecodedFetch {
  messages: KafkaMessage[];
  /** The next offset to fetch (past every batch returned, control and aborted ones included), if any. */
  nextOffset: bigint | undefined;
  /** The partition leader epoch of the last batch returned (-1 if none). */
  lastLeaderEpoch: number;
}

/**
 * Turns a fetch response's raw batches into the records an application sees: control batches are never
 * delivered; records below `fetchOffset` (the first batch may start before it) are skipped; with
 * read_committed, records of aborted transactions are dropped. A batch is aborted when an aborted
 * transaction of its producer spans its base offset (`firstOffset <= base <= lastOffset`, where lastOffset
 * is the ABORT marker): each producer's transactions are checked on their own, so overlapping aborted
 * transactions of several producers are all honoured (kafkajs's `filterAbortedMessages` tracks at most one
 * at a time and can let such records through).
 */
export function decodeFetch(
  records: Buffer | readonly Buffer[],
  fetchOffset: bigint,
  isolation: IsolationLevel,
  abortedTransactions: readonly AbortedTxn[],
): DecodedFetch {
  const messages: KafkaMessage[] = [];
  let nextOffset: bigint | undefined;
  let lastLeaderEpoch = -1;
  const aborted = new Map<bigint, AbortedTxn[]>();
  if (isolation === "read_committed") {
    for (const t of abortedTransactions) {
      const list = aborted.get(t.producerId) ?? [];
      list.push(t);
      aborted.set(t.producerId, list);
    }
  }
  for (const batch of batchesOf(records)) {
    nextOffset = batch.nextOffset;
    lastLeaderEpoch = batch.partitionLeaderEpoch;
    if (batch.isControl || batch.nextOffset <= fetchOffset) continue;
    if (batch.isTransactional && isolation === "read_committed") {
      const base = batch.baseOffset;
      const txns = aborted.get(batch.producerId);
      if (txns?.some((t) => t.firstOffset <= base && base <= t.lastOffset)) continue;
    }
    const logAppendTime = batch.timestampType === TimestampType.LOG_APPEND_TIME;
    for (const r of decodeRecords(batch)) {
      const offset = batch.baseOffset + BigInt(r.offsetDelta);
      if (offset < fetchOffset) continue;
      messages.push({
        key: r.key,
        value: r.value,
        timestamp: String(logAppendTime ? batch.maxTimestamp : batch.baseTimestamp + r.timestampDelta),
        attributes: r.attributes,
        offset: String(offset),
        headers: decodeHeaders(r.headers),
        leaderEpoch: batch.partitionLeaderEpoch,
      });
    }
  }
  return { messages, nextOffset, lastLeaderEpoch };
}

function toBuffer(v: Buffer | string | null | undefined): Buffer | null {
  if (v === undefined || v === null) return null;
  return typeof v === "string" ? Buffer.from(v) : v;
}

/** The batches of one buffer, or of slices that each hold whole batches (a fetch's `recordSlices`). */
function* batchesOf(records: Buffer | readonly Buffer[]): Generator<RecordBatch, void, undefined> {
  if (Buffer.isBuffer(records)) yield* recordBatches(records);
  else for (const slice of records) yield* recordBatches(slice);
}
