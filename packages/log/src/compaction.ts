import {
  CorruptRecordError,
  decodeRecords,
  encodeRecordBatch,
  type Record,
  type RecordBatch,
  UnsupportedCompressionError,
} from "@cluster-mirror/protocol";

/** One cleanable segment: its base offset and its batches in order. */
export interface CleanableSegment {
  baseOffset: bigint;
  batches: RecordBatch[];
}

/** What the cleaner needs to know beyond the bytes. */
export interface CompactionContext {
  /** True if the (transactional) batch belongs to an aborted transaction. */
  isAborted(batch: RecordBatch): boolean;
  /** Last offset of the producer's last data batch, for producers that still have state. */
  lastDataOffsetOf(producerId: bigint): bigint | undefined;
  nowMs: number;
  deleteRetentionMs: number;
}

/** Counts of one compaction pass. */
export interface CompactionStats {
  segmentsCleaned: number;
  batchesRemoved: number;
  recordsRemoved: number;
  bytesBefore: number;
  bytesAfter: number;
  /** Offsets below this were cleanable (min of the active segment's base offset and the LSO). */
  cleanableEndOffset: bigint;
}

/** A rewritten segment (only segments whose bytes changed are returned). */
export interface CleanedSegment {
  baseOffset: bigint;
  bytes: Buffer;
}

/** Kafka's Long.MAX_VALUE, the largest delete horizon a batch can hold. */
const INT64_MAX = 2n ** 63n - 1n;

/**
 * Kafka's LogCleaner for one log, in one pass over the cleanable segments:
 * - latest record per key: the offset map is built from non-aborted data batches of the cleanable range;
 *   a keyed record survives only if it is its key's latest; records without a key are kept;
 * - tombstones: the first pass that keeps a tombstone stamps its batch with a delete horizon (KIP-534:
 *   hasDeleteHorizon, baseTimestamp = now + delete.retention.ms, record timestamps unchanged); a later
 *   pass at or after the horizon drops the tombstone;
 * - aborted transactional records are dropped;
 * - control batches are always kept (markers and MIRROR_PID_RESET stay, so replay gives the same
 *   transaction outcomes and producer resets);
 * - a batch left empty is removed, except a producer's last data batch, kept empty (header only: producer
 *   id, epoch, sequences, offsets) so that producer state rebuilt from the log stays the same, as Kafka's
 *   RETAIN_EMPTY;
 * - rewritten batches keep baseOffset, lastOffsetDelta, partition leader epoch and producer fields, so
 *   offsets (and their gaps) never move; records keep their offset deltas;
 * - a compressed batch is rewritten with its own codec, as Kafka's cleaner does; one whose records cannot
 *   be read (codec not loaded, zstd before `loadCompressionCodecs()`; or a records section malformed under
 *   a valid CRC) is left as it is and does not count in the offset map (so it only ever makes the cleaner
 *   keep more, never less); tombstones above it are never dropped, as it may hold an older value of their
 *   key.
 */
export function compactSegments(
  segments: readonly CleanableSegment[],
  ctx: CompactionContext,
): { cleaned: CleanedSegment[]; stats: Omit<CompactionStats, "cleanableEndOffset"> } {
  const latest = new Map<string, bigint>();
  /** Base offset of the first data batch left as it is, unread: tombstones above it stay (see `cleanBatch`). */
  let firstUnread: bigint | undefined;
  for (const seg of segments) {
    for (const batch of seg.batches) {
      if (batch.isControl) continue;
      const records = recordsOf(batch);
      if (!records) {
        firstUnread ??= batch.baseOffset;
        continue;
      }
      if (batch.isTransactional && ctx.isAborted(batch)) continue;
      const base = batch.baseOffset;
      for (const r of records) {
        if (r.key !== null) latest.set(r.key.toString("hex"), base + BigInt(r.offsetDelta));
      }
    }
  }
  const stats = { segmentsCleaned: 0, batchesRemoved: 0, recordsRemoved: 0, bytesBefore: 0, bytesAfter: 0 };
  const cleaned: CleanedSegment[] = [];
  for (const seg of segments) {
    const out: Buffer[] = [];
    let changed = false;
    for (const batch of seg.batches) {
      stats.bytesBefore += batch.sizeInBytes;
      const kept = cleanBatch(batch, latest, ctx, firstUnread);
      if (kept !== batch.buffer) {
        changed = true;
        stats.recordsRemoved += batch.recordCount - (kept ? kept.readInt32BE(57) : 0);
        if (!kept) stats.batchesRemoved++;
      }
      if (kept) {
        out.push(kept);
        stats.bytesAfter += kept.length;
      }
    }
    if (changed) {
      stats.segmentsCleaned++;
      cleaned.push({ baseOffset: seg.baseOffset, bytes: Buffer.concat(out) });
    }
  }
  return { cleaned, stats };
}

/**
 * The batch's bytes after cleaning: the same buffer if unchanged, a new one if rewritten, or undefined.
 * A tombstone at or above `firstUnread` (a batch whose records cannot be read, left as it is) is kept
 * past its delete horizon: that batch may hold an older value of its key, which nothing removed, and
 * which would be the key's latest again once the tombstone is gone (Kafka's cleaner reads every batch,
 * or gives up on the log).
 */
function cleanBatch(
  batch: RecordBatch,
  latest: Map<string, bigint>,
  ctx: CompactionContext,
  firstUnread: bigint | undefined,
): Buffer | undefined {
  if (batch.isControl) return batch.buffer;
  const records = recordsOf(batch);
  if (!records) return batch.buffer;
  const base = batch.baseOffset;
  const aborted = batch.isTransactional && ctx.isAborted(batch);
  const horizon = batch.hasDeleteHorizon ? batch.baseTimestamp : undefined;
  const keep: Record[] = [];
  let tombstones = false;
  if (!aborted) {
    for (const r of records) {
      if (r.key !== null && latest.get(r.key.toString("hex")) !== base + BigInt(r.offsetDelta)) continue;
      if (r.key !== null && r.value === null) {
        const expired = horizon !== undefined && BigInt(ctx.nowMs) >= horizon;
        if (expired && (firstUnread === undefined || base + BigInt(r.offsetDelta) < firstUnread)) continue;
        tombstones = true;
      }
      keep.push(r);
    }
  }
  const needsHorizon = tombstones && horizon === undefined;
  if (keep.length === records.length && !needsHorizon) return batch.buffer;
  const isProducersLast =
    batch.producerId >= 0n && ctx.lastDataOffsetOf(batch.producerId) === batch.lastOffset;
  if (keep.length === 0 && !isProducersLast) return undefined;
  let baseTimestamp = batch.baseTimestamp;
  let rebased = keep;
  if (needsHorizon) {
    // KIP-534: baseTimestamp becomes the delete horizon; deltas are shifted so record timestamps stay.
    // At most Long.MAX: delete.retention.ms may be as large as a long (as a double, even past it).
    const horizon = BigInt(ctx.nowMs) + BigInt(Math.trunc(ctx.deleteRetentionMs));
    const newBase = horizon > INT64_MAX ? INT64_MAX : horizon;
    const shift = baseTimestamp - newBase;
    rebased = keep.map((r) => ({ ...r, timestampDelta: r.timestampDelta + shift }));
    baseTimestamp = newBase;
  }
  return encodeRecordBatch({
    baseOffset: base,
    partitionLeaderEpoch: batch.partitionLeaderEpoch,
    compression: batch.compression,
    timestampType: batch.timestampType,
    isTransactional: batch.isTransactional,
    hasDeleteHorizon: batch.hasDeleteHorizon || needsHorizon,
    lastOffsetDelta: batch.lastOffsetDelta,
    baseTimestamp,
    maxTimestamp: batch.maxTimestamp,
    producerId: batch.producerId,
    producerEpoch: batch.producerEpoch,
    baseSequence: batch.baseSequence,
    records: rebased,
  });
}

/**
 * The batch's records, or undefined if they cannot be read here (the batch is then kept as is): its codec
 * is not available, or its records section is malformed under a valid CRC (the leader checks only the
 * CRC and the header, and a mirror copies what its source holds). Kafka's leader would have refused the
 * latter and its cleaner skips such a log; throwing here failed every pass over the log, and the
 * broker's whole cleaner pass with it.
 */
function recordsOf(batch: RecordBatch): Record[] | undefined {
  try {
    return decodeRecords(batch);
  } catch (err) {
    if (err instanceof UnsupportedCompressionError || err instanceof CorruptRecordError) return undefined;
    throw err;
  }
}
