import type { Uuid } from "@cluster-mirror/cluster";
import { RecordBatchLayout } from "@cluster-mirror/protocol";
import type { LocalReplica, SourceCluster, SourceLogRewrite } from "../ports";

const { BASE_OFFSET_OFFSET, BATCH_LENGTH_OFFSET, LAST_OFFSET_DELTA_OFFSET, LOG_OVERHEAD } = RecordBatchLayout;

/** Bytes read from each side per comparison step. */
const CHECK_BYTES = 1 << 20;

/**
 * The source's log rewrites (`SourceFetchPartitionResult.logRewrites`) a partition must still compare its
 * log with: those newer than `checkedId` that start below `logEndOffset` (a cut at or above the local log
 * end removed nothing the destination holds). `newestId`: the newest id among them all, checked or not.
 */
export function uncheckedLogRewrites(
  rewrites: readonly SourceLogRewrite[] | undefined,
  checkedId: number,
  logEndOffset: bigint,
): { unchecked: SourceLogRewrite[]; newestId: number } {
  const unchecked: SourceLogRewrite[] = [];
  let newestId = checkedId;
  for (const r of rewrites ?? []) {
    if (r.id <= checkedId) continue;
    if (r.id > newestId) newestId = r.id;
    if (r.offset < logEndOffset) unchecked.push(r);
  }
  return { unchecked, newestId };
}

/** Where the comparison reads the source: the partition's leader, as its fetches do. */
export interface LogRewriteCheckTarget {
  source: SourceCluster;
  clientId: string;
  brokerId: number;
  topic: string;
  partition: number;
  topicId: Uuid;
}

/** What a comparison found (see `compareRewrittenRanges`). */
export interface LogRewriteComparison {
  /** Where the local log must be truncated: the first batch the source holds otherwise. */
  cut?: bigint;
  /**
   * Set when the source ends below what the local log holds in a rewritten range and everything up to there
   * agreed: where the comparison stopped. The local batches from there on are kept (the source may hold
   * the same batches again once it re-copied them) and compared once the source holds more.
   */
  pendingFrom?: bigint;
}

/**
 * Compares, batch by batch and byte for byte, what the local log holds in each rewritten range (from the
 * cut to the log end before it, and no further than the local log end) with what the source holds there
 * now: the first batch that differs is where the local log parts from it (`cut`). Where the source holds
 * nothing yet (shorter, or OFFSET_OUT_OF_RANGE past its end) nothing is cut and the comparison stops
 * (`pendingFrom`). Starts at `from` (where an earlier comparison of the same rewrites stopped). Below the
 * source's log start nothing is compared (its retention removed it, not a cut). Reads the source as a
 * consumer fetch does, up to its high watermark; throws when the source does not answer.
 */
export async function compareRewrittenRanges(
  target: LogRewriteCheckTarget,
  replica: LocalReplica,
  rewrites: readonly SourceLogRewrite[],
  from?: bigint,
): Promise<LogRewriteComparison> {
  const logStart = replica.logStartOffset();
  const start = from !== undefined && from > logStart ? from : logStart;
  for (const [rangeFrom, to] of rangesToCompare(rewrites, start, replica.logEndOffset())) {
    const found = await firstDifference(target, replica, rangeFrom, to);
    // Ranges are in offset order: a difference, or the source's end, ends the comparison.
    if (found.cut !== undefined || found.pendingFrom !== undefined) return found;
  }
  return {};
}

/** The rewritten ranges within the local log, merged and in offset order. */
function rangesToCompare(
  rewrites: readonly SourceLogRewrite[],
  logStart: bigint,
  logEnd: bigint,
): [bigint, bigint][] {
  const ranges = rewrites
    .map((r): [bigint, bigint] => [
      r.offset > logStart ? r.offset : logStart,
      r.endOffset !== undefined && r.endOffset < logEnd ? r.endOffset : logEnd,
    ])
    .filter(([from, to]) => from < to)
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const merged: [bigint, bigint][] = [];
  for (const range of ranges) {
    const last = merged[merged.length - 1];
    if (last && range[0] <= last[1]) {
      if (range[1] > last[1]) last[1] = range[1];
    } else merged.push(range);
  }
  return merged;
}

/** The first local batch in `[from, to)` the source holds otherwise, or where the source ends before `to`. */
async function firstDifference(
  target: LogRewriteCheckTarget,
  replica: LocalReplica,
  from: bigint,
  to: bigint,
): Promise<LogRewriteComparison> {
  let position = from;
  while (position < to) {
    const local = wholeBatches(replica.read(position, CHECK_BYTES));
    const first = local[0];
    // The local log ends here, or holds nothing more in the range (a compaction gap).
    if (!first || first.baseOffset >= to) return {};
    const { partitions } = await target.source.fetch({
      clientId: target.clientId,
      brokerId: target.brokerId,
      maxBytes: CHECK_BYTES,
      // Outside the fetcher's fetch session (same client id and broker): as one of its rounds, this
      // one-partition fetch would make the source forget the session's other partitions.
      sessionless: true,
      partitions: [
        {
          topic: target.topic,
          partition: target.partition,
          fetchOffset: position,
          lastFetchedEpoch: -1,
          currentLeaderEpoch: -1,
          maxBytes: CHECK_BYTES,
          topicId: target.topicId,
        },
      ],
    });
    const answer = partitions[0];
    if (!answer) throw new Error(`the source did not answer for ${target.topic}-${target.partition}`);
    if (answer.error) {
      if (answer.error.errorName !== "OFFSET_OUT_OF_RANGE") throw answer.error;
      // Below the source's log start: not compared (retention, not a cut). Past its end: nothing to compare yet.
      if (answer.logStartOffset > position) {
        position = answer.logStartOffset;
        continue;
      }
      return { pendingFrom: position };
    }
    const remote = wholeBatches(answer.recordSlices);
    if (remote.length === 0) return { pendingFrom: position };
    const n = Math.min(local.length, remote.length);
    for (let i = 0; i < n; i++) {
      const a = local[i]!;
      const b = remote[i]!;
      if (a.baseOffset >= to) return {};
      if (a.baseOffset !== b.baseOffset || !a.bytes.equals(b.bytes)) return { cut: a.baseOffset };
    }
    position = local[n - 1]!.lastOffset + 1n;
  }
  return {};
}

/** One whole batch of a read: its offsets and bytes (a view). */
interface StoredBatch {
  baseOffset: bigint;
  lastOffset: bigint;
  bytes: Buffer;
}

/** The whole batches of record slices (each starts at a batch boundary; a partial last batch is left out). */
function wholeBatches(slices: readonly Buffer[]): StoredBatch[] {
  const batches: StoredBatch[] = [];
  for (const slice of slices) {
    let at = 0;
    while (slice.length - at >= LOG_OVERHEAD) {
      const size = LOG_OVERHEAD + slice.readInt32BE(at + BATCH_LENGTH_OFFSET);
      if (size <= LOG_OVERHEAD || at + size > slice.length) break;
      const baseOffset = slice.readBigInt64BE(at + BASE_OFFSET_OFFSET);
      batches.push({
        baseOffset,
        lastOffset: baseOffset + BigInt(slice.readInt32BE(at + LAST_OFFSET_DELTA_OFFSET)),
        bytes: slice.subarray(at, at + size),
      });
      at += size;
    }
  }
  return batches;
}
