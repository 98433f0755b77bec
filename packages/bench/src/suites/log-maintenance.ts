import { performance } from "node:perf_hooks";
import { ManualClock, MemoryLogStorage, PartitionLog } from "@cluster-mirror/log";
import { crc32c, encodeRecordBatch, RecordBatch } from "@cluster-mirror/protocol";
import { type BenchResult, type BenchSuite, result } from "../harness";
import { median } from "../interleave";

const LOG_BYTES = 512 * 1024 * 1024;
/** Where a batch's CRC-32C range begins: the attributes field, after baseOffset, length, epoch, magic, crc. */
const CRC_FROM = 21;
const SEGMENT_BYTES = 16 * 1024 * 1024;
/** Segments deleted, one retention pass each; the figure is their median. */
const DELETIONS = 9;

/** 16 records of 1000 B from producer 7 (idempotent), about 16 KiB. */
function batch(baseSequence: number): Buffer {
  return encodeRecordBatch({
    producerId: 7n,
    producerEpoch: 0,
    baseSequence,
    baseTimestamp: 1_700_000_000_000n,
    records: Array.from({ length: 16 }, (_, i) => ({
      attributes: 0,
      offsetDelta: i,
      timestampDelta: BigInt(i),
      key: null,
      value: Buffer.alloc(1000, i),
      headers: [],
    })),
  });
}

/**
 * Log maintenance that blocks the broker's event loop, on a 512 MiB in-memory log of 16 KiB batches:
 * - retention (`retention.bytes`) deleting the oldest segment;
 * - a tail truncation (a follower's divergence, a failback's or re-add's truncation to the LME) cutting
 *   the last 4 batches, on the live log and as the first thing after reopening it;
 * - a truncation to the middle of the log right after reopening it.
 * Baseline, same run: reopening the same log, i.e. a replay of every remaining batch, which is what each
 * of these did before the log dropped the deleted segments' state (retention) or restored the producer
 * state checkpointed at the last segment roll and replayed only the batches after it (truncation).
 */
export const suite: BenchSuite = {
  name: "log-maintenance",
  run(): BenchResult[] {
    const storage = new MemoryLogStorage();
    const config = { clock: new ManualClock(0), segmentBytes: SEGMENT_BYTES };
    const log = PartitionLog.open(storage, config);
    let bytes = 0;
    for (let seq = 0; bytes < LOG_BYTES; ) {
      const b = batch(seq);
      seq += new RecordBatch(b).recordCount;
      log.appendAsLeader(b, 0, { transferOwnership: true });
      bytes += b.length;
    }
    log.updateHighWatermark(log.logEndOffset);
    const passes: number[] = [];
    const replays: number[] = [];
    /** CRC-32C of every batch (from its attributes on, as the batch CRC covers), the least opening does. */
    const crcPasses: number[] = [];
    for (let i = 0; i < DELETIONS; i++) {
      const size = log.segments().reduce((n, s) => n + s.sizeInBytes, 0);
      let start = performance.now();
      const deleted = log.applyRetention({ retentionBytes: size - log.segments()[0]!.sizeInBytes });
      passes.push(performance.now() - start);
      if (deleted.segmentsDeleted !== 1)
        throw new Error(`retention deleted ${deleted.segmentsDeleted} segments`);
      start = performance.now();
      const reopened = PartitionLog.open(storage, config, { highWatermark: log.highWatermark });
      replays.push(performance.now() - start);
      if (reopened.logStartOffset !== log.logStartOffset) throw new Error("the reopened log disagrees");
      crcPasses.push(crcOfEveryBatch(storage));
    }
    const truncations: number[] = [];
    for (let i = 0; i < DELETIONS; i++) {
      // The checkpoints of the last rolls (carried over by retention) lie below each cut of 4 batches.
      const end = log.logEndOffset;
      const start = performance.now();
      log.truncateTo(end - 4n * 16n);
      truncations.push(performance.now() - start);
      if (log.logEndOffset !== end - 64n)
        throw new Error(`truncated to ${log.logEndOffset}, not ${end - 64n}`);
    }
    const afterOpen: number[] = [];
    for (let i = 0; i < DELETIONS; i++) {
      // Opened again (a restart): the only checkpoints are those the opening replay took.
      const reopened = PartitionLog.open(storage, config, { highWatermark: log.highWatermark });
      const end = reopened.logEndOffset;
      const start = performance.now();
      reopened.truncateTo(end - 4n * 16n);
      afterOpen.push(performance.now() - start);
      if (reopened.logEndOffset !== end - 64n)
        throw new Error(`truncated to ${reopened.logEndOffset}, not ${end - 64n}`);
    }
    const farBack: number[] = [];
    const segmentsBack = Math.floor(log.segments().length / 2);
    for (let i = 0; i < DELETIONS; i++) {
      // A cut in the middle of the log, inside a segment (a failback's truncation after a long split):
      // beyond the latest checkpoints, so an older one serves. Each round opens a copy of the segments
      // (views of the same memory), as the cut deletes segments.
      const copy = new MemoryLogStorage();
      for (const seg of storage.segments()) {
        copy.roll(seg.baseOffset);
        copy.append(storage.readSlices(seg.baseOffset, 0, seg.sizeInBytes), { transferOwnership: true });
      }
      const reopened = PartitionLog.open(copy, config, { highWatermark: log.highWatermark });
      const segs = reopened.segments();
      const target = segs[segs.length - segmentsBack]!.baseOffset + 16n * BigInt(500 + i); // mid-segment
      const start = performance.now();
      reopened.truncateTo(target);
      farBack.push(performance.now() - start);
      if (reopened.logEndOffset !== target)
        throw new Error(`truncated to ${reopened.logEndOffset}, not ${target}`);
    }
    const mib = (bytes / 2 ** 20).toFixed(0);
    return [
      result(
        `log.open.${mib}MiB`,
        median(replays),
        "ms",
        median(crcPasses),
        `PartitionLog.open of the memory log (${mib} MiB at first, less each round as retention deletes a segment; 16 KiB batches): the replay that checks every batch and rebuilds the index, epochs and producer state, median of ${DELETIONS}; baseline: CRC-32C of every batch alone, same rounds (ratio below 1: open costs that many times the checksums)`,
      ),
      result(
        `log.retention.delete-oldest-segment.${mib}MiB`,
        median(passes),
        "ms",
        median(replays),
        `one retention pass deleting a 16 MiB segment of a ${mib} MiB memory log (16 KiB batches), median of ${DELETIONS}; baseline: a replay of the remaining log (reopening it), what each deletion cost before`,
      ),
      result(
        `log.truncate.tail-4-batches.${mib}MiB`,
        median(truncations),
        "ms",
        median(replays),
        `truncateTo 4 batches (64 records) below the log end, median of ${DELETIONS} in a row; baseline: the same replay of the remaining log, what each truncation cost before`,
      ),
      result(
        `log.truncate.tail-4-batches-after-open.${mib}MiB`,
        median(afterOpen),
        "ms",
        median(replays),
        `the first truncateTo (4 batches) of a log just opened again, median of ${DELETIONS}; it restores a checkpoint the opening replay took; baseline: the same replay of the remaining log, what it cost until 2 Dec`,
      ),
      result(
        `log.truncate.half-the-log-after-open.${mib}MiB`,
        median(farBack),
        "ms",
        median(replays),
        `the first truncateTo of a log just opened again, to the middle of the segment ${segmentsBack} segments back (of ${segmentsBack * 2}-${segmentsBack * 2 + 1}), median of ${DELETIONS}; an older checkpoint the opening replay took serves; baseline: the same replay of the remaining log (while only the last 8 segments had checkpoints, this cut replayed the log below it, about half of that)`,
      ),
    ];
  },
};

/** Milliseconds to CRC every batch of `storage`, read as its slices (views), walking the batch lengths. */
function crcOfEveryBatch(storage: MemoryLogStorage): number {
  const start = performance.now();
  let check = 0;
  for (const seg of storage.segments()) {
    for (const slice of storage.readSlices(seg.baseOffset, 0, seg.sizeInBytes)) {
      for (let pos = 0; pos < slice.length; ) {
        const size = slice.readInt32BE(pos + 8) + 12;
        check ^= crc32c(slice.subarray(pos + CRC_FROM, pos + size));
        pos += size;
      }
    }
  }
  if (check === 0x7fffffff) console.log("(unlikely checksum)"); // keeps the work observable
  return performance.now() - start;
}
