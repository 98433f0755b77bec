import type { KafkaCluster } from "@cluster-mirror/cluster";
import type { StateHistoryPage } from "@cluster-mirror/mirror";
import { MIRROR_STATE_TOPIC } from "@cluster-mirror/mirror";
import { decodeRecordBatch, decodeRecords, recordBatches } from "@cluster-mirror/protocol";
import { decodeHistoryRecord, historyOrder, type UnnumberedHistoryRecord } from "./mirror-state-history";

/** Bytes asked of the log per read while catching up (a read returns whole batches of one segment). */
const READ_BYTES = 1024 * 1024;

/** The leader's log of one `__mirror_state` partition, as the cache reads it. */
type LeaderLog = NonNullable<ReturnType<ReturnType<KafkaCluster["leaderFor"]>["replica"]>>["log"];

/** What the cache holds of one partition: which log it read, and up to which offset. */
interface PartitionCursor {
  /** The leader's log read (another log, after a leader change, is read again from its start). */
  log: LeaderLog;
  /** The log's `rewriteCount` when read: changed by a compaction pass alone, the records it removed go. */
  rewrites: number;
  /** The log's `truncationCount` when read: a truncation since, and it is read again from its start. */
  truncations: number;
  /** The log start offset when read: records below a higher one are dropped. */
  logStartOffset: bigint;
  /** Every committed record below it is in the history (the high watermark of the last read). */
  next: bigint;
}

/** One cluster's history: the merged records and the partitions they come from. */
interface ClusterHistory {
  topicId: string | undefined;
  cursors: Map<number, PartitionCursor>;
  /** Every record read, in {@link historyOrder}. */
  records: UnnumberedHistoryRecord[];
}

/**
 * The node's `__mirror_state` history, kept between requests: per cluster the decoded records up to each
 * partition's high watermark, so a request decodes only what was committed since the last one (a read of
 * each partition's leader log from where the last read stopped), not the whole topic again. It answers
 * what {@link readMirrorStateHistory} reads from scratch (committed records only, merged by timestamp,
 * partition, offset); a partition is read again from its start when its log no longer holds what was read:
 * another leader's log, a truncation (`PartitionLog.truncationCount`), a high watermark below the last read
 * (a replica led again before it caught up). After a compaction pass alone (`rewriteCount` changed, not
 * `truncationCount`) the records it removed are dropped: which offsets survive is read from the batches'
 * offsets, decoding no `__mirror_state` record again (the cleaner keeps the others as they were). Records
 * below a log start that moved up (retention, DeleteRecords) are dropped; a re-created topic (another topic
 * id) starts the history anew. A partition without a running leader is
 * left out, as a from-scratch read leaves it, until it has one again.
 *
 * New records may sort before records already listed (a partition whose high watermark lagged, a producer
 * clock behind another): positions after them then move up. Readers paging the history use the stable
 * cursor of {@link recordsAfter} rather than a position.
 */
export class MirrorStateHistoryCache {
  private readonly clusters = new WeakMap<KafkaCluster, ClusterHistory>();

  /** The history as of now: every committed record, in order, and each readable partition's offsets. */
  read(cluster: KafkaCluster): {
    records: readonly UnnumberedHistoryRecord[];
    partitions: StateHistoryPage["partitions"];
  } {
    const image = cluster.controller.image;
    const topic = image.topic(MIRROR_STATE_TOPIC);
    let history = this.clusters.get(cluster);
    if (history === undefined || history.topicId !== topic?.topicId) {
      history = { topicId: topic?.topicId, cursors: new Map(), records: [] };
      this.clusters.set(cluster, history);
    }
    const partitions: StateHistoryPage["partitions"][number][] = [];
    const dropped = new Set<number>();
    const trims = new Map<number, bigint>();
    /** Per partition compacted since the last read: the offsets still held below the last read's end. */
    const compacted = new Map<number, SurvivingOffsets>();
    const added: UnnumberedHistoryRecord[] = [];
    const count = topic?.partitions.length ?? 0;
    for (const p of history.cursors.keys()) if (p >= count) dropped.add(p);
    for (let p = 0; p < count; p++) {
      const log = leaderLogOf(cluster, p);
      let cursor = history.cursors.get(p);
      if (log === undefined) {
        if (cursor !== undefined) dropped.add(p); // no running leader: listed once it has one again
        history.cursors.delete(p);
        continue;
      }
      if (
        cursor !== undefined &&
        (cursor.log !== log || cursor.truncations !== log.truncationCount || log.highWatermark < cursor.next)
      ) {
        dropped.add(p);
        cursor = undefined;
      }
      let survivors: SurvivingOffsets | undefined;
      if (cursor !== undefined && cursor.rewrites !== log.rewriteCount) {
        survivors = survivingOffsets(log, cursor.next);
        if (survivors === undefined) {
          dropped.add(p); // a read below what was read came back empty: read the partition again
          cursor = undefined;
        }
      }
      if (cursor === undefined) {
        cursor = {
          log,
          rewrites: log.rewriteCount,
          truncations: log.truncationCount,
          logStartOffset: log.logStartOffset,
          next: 0n,
        };
        history.cursors.set(p, cursor);
      } else {
        if (log.logStartOffset > cursor.logStartOffset) trims.set(p, log.logStartOffset);
        if (survivors !== undefined) {
          compacted.set(p, survivors);
          cursor.rewrites = log.rewriteCount;
        }
      }
      cursor.logStartOffset = log.logStartOffset;
      if (cursor.next < log.logStartOffset) cursor.next = log.logStartOffset;
      cursor.next = readCommitted(image, p, log, cursor.next, added);
      partitions.push({
        partition: p,
        logStartOffset: Number(log.logStartOffset),
        logEndOffset: Number(log.logEndOffset),
      });
    }
    let kept = history.records;
    if (dropped.size > 0 || trims.size > 0 || compacted.size > 0) {
      kept = kept.filter((r) => {
        if (dropped.has(r.partition)) return false;
        const start = trims.get(r.partition);
        if (start !== undefined && BigInt(r.offset) < start) return false;
        return compacted.get(r.partition)?.has(r.offset) ?? true;
      });
    }
    history.records = merge(kept, added.sort(historyOrder));
    return { records: history.records, partitions };
  }
}

/**
 * Decodes the committed records of `log` from `from` up to its high watermark into `out` (control
 * batches and records without a key skipped, as a from-scratch read skips them); returns the offset read
 * up to, where the next read starts.
 */
function readCommitted(
  image: KafkaCluster["controller"]["image"],
  partition: number,
  log: LeaderLog,
  from: bigint,
  out: UnnumberedHistoryRecord[],
): bigint {
  const hw = log.highWatermark;
  let next = from;
  while (next < hw) {
    // Up to the log end: a batch the high watermark cuts through is read for its records below it.
    const data = log.read(next, READ_BYTES, "read_uncommitted", { fetchUpTo: "log_end" });
    const before = next;
    for (const slice of data.recordSlices) {
      for (const batch of recordBatches(slice)) {
        if (batch.baseOffset >= hw) return hw;
        if (!batch.isControl) {
          const decoded = decodeRecordBatch(batch);
          for (const r of decoded.records) {
            const offset = decoded.baseOffset + BigInt(r.offsetDelta);
            if (offset < next || offset >= hw || r.key === null) continue;
            const timestamp = Number(decoded.baseTimestamp + r.timestampDelta);
            out.push(decodeHistoryRecord(image, partition, Number(offset), timestamp, r.key, r.value));
          }
        }
        next = batch.lastOffset + 1n < hw ? batch.lastOffset + 1n : hw;
      }
    }
    if (next === before) return hw; // nothing stored from `next` to the high watermark
  }
  return next;
}

/** The offsets a log holds records at (below some end), as sorted, disjoint, inclusive ranges. */
class SurvivingOffsets {
  private readonly firsts: number[] = [];
  private readonly lasts: number[] = [];

  /** Adds `first..last`, above every range added before. */
  add(first: number, last: number): void {
    const end = this.lasts.length - 1;
    if (end >= 0 && this.lasts[end] === first - 1) this.lasts[end] = last;
    else {
      this.firsts.push(first);
      this.lasts.push(last);
    }
  }

  has(offset: number): boolean {
    let lo = 0;
    let hi = this.firsts.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (offset < this.firsts[mid]!) hi = mid - 1;
      else if (offset > this.lasts[mid]!) lo = mid + 1;
      else return true;
    }
    return false;
  }
}

/**
 * The offsets below `end` at which `log` still holds a data record, after a compaction pass: a batch the
 * cleaner left whole by its header alone, the records of one it thinned by their offset deltas (no key or
 * value decoded). Undefined if a read below `end` came back empty (not expected: a read from an offset the
 * cleaner emptied returns the next batch): the caller reads the partition again rather than guess.
 */
function survivingOffsets(log: LeaderLog, end: bigint): SurvivingOffsets | undefined {
  const out = new SurvivingOffsets();
  let next = log.logStartOffset;
  while (next < end) {
    const data = log.read(next, READ_BYTES, "read_uncommitted", { fetchUpTo: "log_end" });
    const before = next;
    for (const slice of data.recordSlices) {
      for (const batch of recordBatches(slice)) {
        if (batch.baseOffset >= end) return out;
        if (!batch.isControl) {
          if (batch.recordCount === batch.lastOffsetDelta + 1) {
            out.add(Number(batch.baseOffset), Number(batch.lastOffset));
          } else {
            for (const r of decodeRecords(batch)) {
              const offset = Number(batch.baseOffset) + r.offsetDelta;
              out.add(offset, offset);
            }
          }
        }
        next = batch.lastOffset + 1n;
      }
    }
    if (next === before) return undefined;
  }
  return out;
}

/** The leader's log of `__mirror_state`-`partition`, undefined without a running leader holding it. */
function leaderLogOf(cluster: KafkaCluster, partition: number): LeaderLog | undefined {
  try {
    return cluster.leaderFor(MIRROR_STATE_TOPIC, partition).replica(MIRROR_STATE_TOPIC, partition)?.log;
  } catch {
    return undefined;
  }
}

/** `kept` and `added` (each in history order) merged; `kept` itself, appended to, when all sort after. */
function merge(
  kept: UnnumberedHistoryRecord[],
  added: readonly UnnumberedHistoryRecord[],
): UnnumberedHistoryRecord[] {
  const last = kept[kept.length - 1];
  if (added.length === 0) return kept;
  if (last === undefined || historyOrder(last, added[0]!) <= 0) {
    for (const r of added) kept.push(r);
    return kept;
  }
  const out: UnnumberedHistoryRecord[] = [];
  let i = 0;
  let j = 0;
  while (i < kept.length && j < added.length) {
    out.push(historyOrder(kept[i]!, added[j]!) <= 0 ? kept[i++]! : added[j++]!);
  }
  while (i < kept.length) out.push(kept[i++]!);
  while (j < added.length) out.push(added[j++]!);
  return out;
}
