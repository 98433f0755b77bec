import { ManualClock, MemoryLogStorage, PartitionLog } from "@cluster-mirror/log";
import {
  decodeRecordBatch,
  encodeRecordBatch,
  type Record,
  RecordBatch,
  recordBatches,
} from "@cluster-mirror/protocol";
import { type BenchResult, type BenchSuite, measureOpsPerSecond, result } from "../harness";

const BATCH_BYTES = 16 * 1024;
const BATCHES_PER_FETCH = 64;
/** Fetches per log: each log holds this many fetches (4 MiB), then a new log starts (bounded memory). */
const FETCHES_PER_LOG = 4;
const SEGMENT_BYTES = 2 * 1024 * 1024;
const MIN_MS = 1500;

/**
 * One 16 KiB idempotent batch of records with `valueBytes`-byte values and `key-N` keys, the last value
 * trimmed or padded so that the batch is exactly 16 KiB.
 */
function buildBatch(baseOffset: bigint, baseSequence: number, valueBytes: number): Buffer {
  const records: Record[] = [];
  const encode = () =>
    encodeRecordBatch({
      baseOffset,
      partitionLeaderEpoch: 3,
      producerId: 42n,
      producerEpoch: 0,
      baseSequence,
      baseTimestamp: 1_700_000_000_000n,
      records,
    });
  for (let i = 0; ; i++) {
    records.push({
      attributes: 0,
      offsetDelta: i,
      timestampDelta: BigInt(i),
      key: Buffer.from(`key-${baseSequence + i}`),
      value: Buffer.alloc(valueBytes, i & 0xff),
      headers: [],
    });
    const size = encode().length;
    if (size > BATCH_BYTES - valueBytes - 32) {
      const last = records[records.length - 1]!;
      records[records.length - 1] = { ...last, value: Buffer.alloc(valueBytes + BATCH_BYTES - size, 1) };
      let batch = encode();
      // Varint widths may shift by a byte or two; trim the last value until the size is exact.
      while (batch.length > BATCH_BYTES) {
        const l = records[records.length - 1]!;
        records[records.length - 1] = {
          ...l,
          value: l.value!.subarray(0, l.value!.length - (batch.length - BATCH_BYTES)),
        };
        batch = encode();
      }
      return batch;
    }
  }
}

/** A fetch response's worth of 16 KiB batches with consecutive offsets from `baseOffset`. */
function buildFetch(valueBytes: number, baseOffset: bigint, baseSequence: number): Buffer {
  const batches: Buffer[] = [];
  let offset = baseOffset;
  let sequence = baseSequence;
  for (let b = 0; b < BATCHES_PER_FETCH; b++) {
    const batch = buildBatch(offset, sequence, valueBytes);
    const count = new RecordBatch(batch).recordCount;
    batches.push(batch);
    offset += BigInt(count);
    sequence += count;
  }
  return Buffer.concat(batches);
}

function newLog(): PartitionLog {
  return PartitionLog.open(new MemoryLogStorage(), {
    clock: new ManualClock(0),
    segmentBytes: SEGMENT_BYTES,
  });
}

/** A message as a consumer client hands it to user code: its own copies of key, value and headers. */
interface ConsumedMessage {
  offset: bigint;
  timestamp: bigint;
  key: Buffer | null;
  value: Buffer | null;
  headers: { key: string; value: Buffer | null }[];
}

function copyOf(b: Buffer | null): Buffer | null {
  return b === null ? null : Buffer.from(b);
}

/** Consumer side: check the CRC and decode the batch into messages with copied keys, values, headers. */
function consume(batch: Buffer): ConsumedMessage[] {
  const decoded = decodeRecordBatch(batch); // validates the CRC, as Java's check.crcs=true (the default)
  const messages: ConsumedMessage[] = [];
  for (const r of decoded.records) {
    messages.push({
      offset: decoded.baseOffset + BigInt(r.offsetDelta),
      timestamp: decoded.baseTimestamp + r.timestampDelta,
      key: copyOf(r.key),
      value: copyOf(r.value),
      headers: r.headers.map((h) => ({ key: h.key, value: copyOf(h.value) })),
    });
  }
  return messages;
}

/** Producer side: an idempotent producer's new batch of the messages (its own id/epoch/sequence, no compression). */
function produce(messages: readonly ConsumedMessage[], producerId: bigint, baseSequence: number): Buffer {
  const baseTimestamp = messages[0]?.timestamp ?? 0n;
  return encodeRecordBatch({
    producerId,
    producerEpoch: 0,
    baseSequence,
    baseTimestamp,
    compression: 0,
    records: messages.map((m, i) => ({
      attributes: 0,
      offsetDelta: i,
      timestampDelta: m.timestamp - baseTimestamp,
      key: m.key,
      value: m.value,
      headers: m.headers,
    })),
  });
}

interface Figures {
  recordsPerBatch: number;
  asIs: number;
  asIsOwned: number;
  baseline: number;
  baselineOwned: number;
}

function measure(valueBytes: number): Figures {
  // FETCHES_PER_LOG distinct fetch buffers whose offsets continue from one to the next: a log takes them in
  // order, so each append starts at the log end offset (a mirror fetching from its log end) and no buffer
  // is ever written to after it was appended (so handing it over to the log is honest).
  const fetches: Buffer[] = [];
  let recordsPerFetch = 0n;
  for (let f = 0; f < FETCHES_PER_LOG; f++) {
    const fetch = buildFetch(valueBytes, BigInt(f) * recordsPerFetch, Number(BigInt(f) * recordsPerFetch));
    if (f === 0) {
      for (const b of recordBatches(fetch)) recordsPerFetch += BigInt(b.lastOffsetDelta + 1);
    }
    fetches.push(fetch);
  }
  const fetchMegabytes = fetches[0]!.length / 1e6;
  const recordsPerBatch = new RecordBatch(fetches[0]!.subarray(0, BATCH_BYTES)).recordCount;

  const asIs = (transferOwnership: boolean) => {
    let log = newLog();
    let f = 0;
    return () => {
      if (f === FETCHES_PER_LOG) {
        log = newLog();
        f = 0;
      }
      log.appendAsIs(fetches[f++]!, { transferOwnership });
    };
  };

  const consumeThenProduce = (transferOwnership: boolean) => {
    let log = newLog();
    let f = 0;
    let sequence = 0;
    return () => {
      if (f === FETCHES_PER_LOG) {
        log = newLog();
        f = 0;
        sequence = 0;
      }
      for (const batch of recordBatches(fetches[f++]!)) {
        const messages = consume(batch.buffer);
        const produced = produce(messages, 7n, sequence);
        sequence += messages.length;
        log.appendAsLeader(produced, 0, { transferOwnership });
      }
    };
  };

  return {
    recordsPerBatch,
    asIs: measureOpsPerSecond(asIs(false), fetchMegabytes, MIN_MS),
    baseline: measureOpsPerSecond(consumeThenProduce(false), fetchMegabytes, MIN_MS),
    asIsOwned: measureOpsPerSecond(asIs(true), fetchMegabytes, MIN_MS),
    baselineOwned: measureOpsPerSecond(consumeThenProduce(true), fetchMegabytes, MIN_MS),
  };
}

const BASELINE =
  "baseline = consume-then-produce per batch: decodeRecordBatch (CRC) into messages with copied key/value/header buffers, a new idempotent batch (own pid/epoch/seq, no compression, CRC) and appendAsLeader (CRC again, offsets stamped)";
const TARGET = "target >= 20x and >= 1000 MB/s";

/**
 * The log's append-as-is of fetched 16 KiB batches (CRC validated, stored in an in-memory log) vs what a
 * consume-then-produce mirror does with the same batches, both ending in the same kind of in-memory log.
 * Two record sizes: the baseline's cost grows with the record count, the append's does not. Each is run
 * with the storage copying the appended bytes (default) and with the buffer handed over to it
 * (`transferOwnership`), for both paths alike.
 */
export const suite: BenchSuite = {
  name: "log",
  run() {
    const out: BenchResult[] = [];
    for (const [valueBytes, label] of [
      [100, "100B"],
      [1024, "1KiB"],
    ] as const) {
      const m = measure(valueBytes);
      const name = `log.appendAsIs.16KiB.${label}-values (${m.recordsPerBatch} rec/batch)`;
      out.push(result(name, m.asIs, "MB/s", m.baseline, `storage copies the bytes; ${BASELINE}; ${TARGET}`));
      out.push(
        result(
          `${name} owned`,
          m.asIsOwned,
          "MB/s",
          m.baselineOwned,
          `transferOwnership on both paths (no storage copy); ${TARGET}`,
        ),
      );
    }
    return out;
  },
};
