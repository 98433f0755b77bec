import { decodeRecords, ManualClock, MemoryLogStorage, PartitionLog } from "@cluster-mirror/log";
import { encodeRecordBatch, type Record, RecordBatch, recordBatches } from "@cluster-mirror/protocol";
import { type BenchResult, type BenchSuite, measureOpsPerSecond, result } from "../harness";

const BATCH_BYTES = 16 * 1024;
const BATCHES_PER_FETCH = 64;
/** Start a new log after this many bytes: memory stays bounded and is reused instead of page-faulted in. */
const RESET_AFTER_BYTES = 4 * 1024 * 1024;
const SEGMENT_BYTES = 2 * 1024 * 1024;

/** One 16 KiB idempotent batch of `valueBytes`-byte records (the last value padded to hit 16 KiB exactly). */
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
    const record: Record = {
      attributes: 0,
      offsetDelta: i,
      timestampDelta: BigInt(i),
      key: Buffer.from(`key-${baseSequence + i}`),
      value: Buffer.alloc(valueBytes, i & 0xff),
      headers: [],
    };
    records.push(record);
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

/** A fetch response's worth of 16 KiB batches with consecutive offsets. */
function buildFetch(valueBytes: number): Buffer {
  const batches: Buffer[] = [];
  let offset = 0n;
  let sequence = 0;
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

function measure(valueBytes: number): BenchResult {
  const fetch = buildFetch(valueBytes);
  const views = [...recordBatches(fetch)];
  const megabytes = fetch.length / 1e6;
  const recordsPerBatch = views[0]!.recordCount;

  let log = newLog();
  let appended = 0;
  const appendAsIs = () => {
    if (appended >= RESET_AFTER_BYTES) {
      log = newLog();
      appended = 0;
    }
    // The source's offsets continue where the log ends (a mirror fetching from its log end offset). The base
    // offset is outside the CRC, so rewriting it here costs the append nothing.
    let next = log.logEndOffset;
    for (const v of views) {
      v.setBaseOffset(next);
      next += BigInt(v.lastOffsetDelta + 1);
    }
    log.appendAsFollower(fetch);
    appended += fetch.length;
  };

  const decodeReencode = () => {
    for (const v of views) {
      const batch = new RecordBatch(v.buffer);
      batch.validate();
      encodeRecordBatch({
        baseOffset: batch.baseOffset,
        partitionLeaderEpoch: batch.partitionLeaderEpoch,
        producerId: batch.producerId,
        producerEpoch: batch.producerEpoch,
        baseSequence: batch.baseSequence,
        baseTimestamp: batch.baseTimestamp,
        records: decodeRecords(batch),
      });
    }
  };

  const asIs = measureOpsPerSecond(appendAsIs, megabytes, 1500);
  const baseline = measureOpsPerSecond(decodeReencode, megabytes, 1500);
  return result(
    `log.appendAsIs.16KiB.${valueBytes}B-values (${recordsPerBatch} rec/batch)`,
    asIs,
    "MB/s",
    baseline,
    "baseline: CRC + decode + re-encode of the same batches, no append; target >= 20x and >= 1000 MB/s",
  );
}

/**
 * The log's append-as-is of fetched 16 KiB batches (CRC validated, copied into an in-memory log) vs what
 * a consume-then-produce mirror does with the same batches (decode + re-encode). Two record sizes: the
 * baseline's cost grows with the record count, the append's does not.
 */
export const suite: BenchSuite = {
  name: "log",
  run() {
    return [measure(100), measure(1000)];
  },
};
