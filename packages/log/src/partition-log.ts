import {
  ControlRecordType,
  CorruptRecordError,
  controlTypeOf,
  RECORD_BATCH_OVERHEAD,
  RecordBatch,
  RecordBatchLayout,
  recordBatches,
  TimestampType,
} from "@cluster-mirror/protocol";
import { BatchIndex } from "./batch-index";
import { checkpointOffsets, retainCheckpoint } from "./checkpoint-retention";
import { type CleanableSegment, type CompactionStats, compactSegments } from "./compaction";
import {
  FencedLeaderEpochError,
  InvalidRecordError,
  KafkaStorageError,
  OffsetOutOfRangeError,
  UnexpectedAppendOffsetError,
} from "./errors";
import { FollowerAppendPlan, maxTimestampOf, walkFetchedBatches } from "./follower-append";
import { type EpochEndOffset, type EpochEntry, LeaderEpochCache } from "./leader-epoch-cache";
import {
  compacts,
  deletesByRetention,
  type LogConfig,
  type ResolvedLogConfig,
  resolveLogConfig,
} from "./log-config";
import { scanLog, type TornTail } from "./log-loader";
import type { CompletedTxn, ProducerStateEntry } from "./producer-state-entry";
import {
  type AppendOrigin,
  type ProducerStateCheckpoint,
  ProducerStateManager,
} from "./producer-state-manager";
import type { LogStorage, SegmentInfo } from "./storage";
import { MAX_RELATIVE_OFFSET } from "./storage-segment-index";
import type { IndexedAbortedTxn } from "./storage-transaction-index";
import { type AbortedTxn, TransactionIndex } from "./transaction-index";

/** Kafka's consumer isolation levels. */
export type IsolationLevel = "read_uncommitted" | "read_committed";

/** What an append did. */
export interface LogAppendInfo {
  /** Offset of the first record appended (or of the original, for a duplicate); undefined if nothing. */
  firstOffset: bigint | undefined;
  /** Offset of the last record appended (or of the original, for a duplicate); undefined if nothing. */
  lastOffset: bigint | undefined;
  /** True when the batch duplicated one of the producer's last five: nothing was appended. */
  duplicate: boolean;
  /** Number of batches appended. */
  batchCount: number;
  /** Bytes appended (a trailing partial batch of a follower fetch is not counted, nor appended). */
  validBytes: number;
  /** The append time stamped into the batch under LogAppendTime (Kafka's `logAppendTime`); else unset. */
  logAppendTimeMs?: bigint;
}

/** Options of `appendAsLeader`. */
export interface AppendAsLeaderOptions {
  /**
   * `client` (default): a produce; control batches are refused. `coordinator`: transaction markers and
   * MIRROR_PID_RESET written by the leader on a coordinator's (or the mirror's) behalf.
   */
  origin?: Exclude<AppendOrigin, "replication">;
  /** As `AppendAsIsOptions.transferOwnership`: the log may keep `batchBytes` instead of copying it. */
  transferOwnership?: boolean;
  /**
   * The append time (ms) when the topic has `message.timestamp.type=LogAppendTime`: the stored batch gets
   * the LOG_APPEND_TIME attribute and this as maxTimestamp (CRC rewritten), as Kafka's LogValidator does.
   * Unset: the producer's CreateTime timestamps are kept.
   */
  logAppendTimeMs?: bigint;
}

/** Options of `appendAsFollower` / `appendAsIs`. */
export interface AppendAsIsOptions {
  /**
   * The caller hands `batchesBytes` over to the log: it will never write to it again (typically a fetch
   * response buffer it drops after the append). Memory storage then keeps the bytes as they are instead
   * of copying them (file storage writes them out either way). Note that a view keeps its whole
   * underlying buffer alive. Default false: the bytes are copied and the caller may reuse the buffer.
   */
  transferOwnership?: boolean;
}

/** Options of `read`. */
export interface ReadOptions {
  /** Return the first batch even if it is larger than `maxBytes` (default true, as Kafka). */
  minOneBatch?: boolean;
  /**
   * `log_end` for replica fetches (followers, the mirror's own reads): read up to the log end offset.
   * Default: the high watermark (read_uncommitted) or the LSO (read_committed).
   */
  fetchUpTo?: "log_end";
}

/** Kafka's FetchDataInfo plus the partition's offsets, as a fetch response carries them. */
export interface FetchDataInfo {
  /**
   * The whole raw batches read, as slices of the stored bytes (views for memory storage, no copy); each
   * slice holds whole batches. Kafka hands a file range to the socket without copying it; in process,
   * these slices are that range.
   */
  recordSlices: readonly Buffer[];
  /** Total bytes of `recordSlices`. */
  sizeInBytes: number;
  /**
   * The same bytes as one buffer: a view when they are one slice, otherwise concatenated (a copy) on
   * first use. Readers that can take slices should use `recordSlices`.
   */
  readonly records: Buffer;
  highWatermark: bigint;
  lastStableOffset: bigint;
  logStartOffset: bigint;
  logEndOffset: bigint;
  /** For read_committed: aborted transactions overlapping the returned range; empty otherwise. */
  abortedTransactions: AbortedTxn[];
}

/** Options of `PartitionLog.open`. */
export interface OpenLogOptions {
  /** High watermark to start from (the owner's checkpoint); bounded by the recovered log. Default: log start. */
  highWatermark?: bigint;
}

/** Limits of `applyRetention`, with Kafka's topic config names; -1 (the default) disables a limit. */
export interface RetentionOptions {
  /** retention.ms: delete segments whose newest record is older than this. */
  retentionMs?: number;
  /** retention.bytes: delete the oldest segments while the log is larger than this. */
  retentionBytes?: number;
}

/** What `applyRetention` did. */
export interface RetentionResult {
  segmentsDeleted: number;
  bytesDeleted: number;
  /** The log start offset afterwards. */
  logStartOffset: bigint;
}

/** What recovery found when the log was opened. */
export interface RecoveryInfo {
  /** Where a torn or corrupt tail was cut, if anywhere. */
  truncatedTail: TornTail | undefined;
  batches: number;
}

/**
 * One partition's log (Kafka's UnifiedLog): raw record batches in segments, a leader-epoch cache, producer
 * state, an aborted-transaction index, the high watermark and the LSO.
 *
 * Batches are stored as the byte ranges they arrived as: the leader path rewrites only baseOffset and the
 * partition leader epoch in place (outside the CRC); the follower/mirror path changes nothing.
 */
export class PartitionLog {
  private config: ResolvedLogConfig;
  private readonly index = new BatchIndex();
  private readonly epochs: LeaderEpochCache;
  /** True while the leader epoch checkpoint lags the cache: its last write failed (see `saveEpochs`). */
  private epochCheckpointStale = false;
  private readonly producers = new ProducerStateManager();
  private readonly txnIndex = new TransactionIndex();
  /** The aborted transactions with the LSO after each marker, for storage's `.txnindex` files. */
  private abortedForStorage: IndexedAbortedTxn[] = [];
  /** True while `replay` rebuilds state from the stored batches (nothing new is appended). */
  private replaying = false;
  private startOffset = 0n;
  private endOffset = 0n;
  private hw = 0n;
  private rewrites = 0;
  private truncations = 0;
  private activeBase = 0n;
  private activeSize = 0;
  private activeCreatedMs: number | undefined;
  /**
   * Kafka's rollingBasedTimestamp of an active segment this log reopened (the max timestamp of its first
   * batch), undefined for a segment created since the log was opened (or without timestamps): such a segment
   * also rolls once the appended records' max timestamp is segment.ms past it (LogSegment.timeWaitedForRoll).
   */
  private activeFirstTimestamp: number | undefined;
  /** True when `activeFirstTimestamp` is still to be read from an older segment made active again. */
  private activeFirstTimestampUnread = false;
  /**
   * Control type of the last stored batch (undefined: a data batch, or no batch), kept as batches are
   * appended and rebuilt with the index, so asking costs nothing instead of a scan of the whole log.
   */
  private lastControlType: number | undefined;
  /**
   * The producer state at segment rolls (or segment starts, when the log was replayed), oldest first: the
   * latest ones and some spread over the older log (see `retainCheckpoint`). A truncation restores the
   * latest one below the cut and replays only the batches after it, as Kafka restores the producer
   * snapshot below the truncation point.
   */
  private checkpoints: ProducerCheckpoint[] = [];
  /**
   * The producer state the deleted batches below the first segment left (retention or DeleteRecords moved
   * the log start), which a replay of the stored batches starts from: Kafka keeps producers when the log
   * start moves (its snapshots carry them), so a producer whose batches are all gone still continues its
   * sequence. Kept by storage (`writeLogStartProducerState`: file storage in Kafka's producer snapshot named
   * by the first segment, which a reopened log loads before replaying the segments).
   */
  private logStartProducers: ProducerStateCheckpoint | undefined;
  /** Reused by `appendAsFollower` (one call per fetch): the header facts of the batches being appended. */
  private readonly plan = new FollowerAppendPlan();
  /** Reused by the general follower append (offsets beyond 2^53): the batches and their base offsets. */
  private readonly scratchBatches: RecordBatch[] = [];
  private readonly scratchBases: bigint[] = [];
  /** What recovery did when the log was opened. */
  readonly recovery: RecoveryInfo;

  private constructor(
    private readonly storage: LogStorage,
    config: LogConfig,
    options: OpenLogOptions,
  ) {
    this.config = resolveLogConfig(config);
    let checkpoint: EpochEntry[] | undefined;
    try {
      checkpoint = storage.readLeaderEpochCheckpoint();
    } catch {
      checkpoint = undefined; // unreadable: rebuilt from the batches' partition leader epochs below
    }
    this.epochs = new LeaderEpochCache(checkpoint ?? []);
    try {
      this.startOffset = storage.readLogStartOffset() ?? 0n;
    } catch {
      this.startOffset = 0n; // unreadable: the first segment's base offset is the log start
    }
    if (storage.segments().length === 0) storage.reset(this.startOffset);
    const saved = storage.readLogStartProducerState?.();
    // Kafka's loadFromSnapshot skips the producers that expired while the log was closed.
    if (saved && saved.offset === storage.segments()[0]?.baseOffset) {
      this.logStartProducers = ProducerStateManager.withoutExpired(
        saved.state,
        this.config.clock.now(),
        this.config.producerIdExpirationMs,
      );
    }
    let batches = 0;
    // With a checkpoint, batches wholly below the log start add no epoch: a truncation may have removed
    // theirs from the cache (and its checkpoint), as it does in the log in memory, which reopening must
    // equal; the entry at the log start comes from the checkpoint. Without one, every batch counts.
    const start = this.startOffset;
    const torn = this.replay(true, (batch) => {
      batches++;
      if (checkpoint === undefined || batch.lastOffset >= start)
        this.maybeAssignEpoch(batch.partitionLeaderEpoch, batch.baseOffset);
    });
    if (torn) this.cutTornTail(torn);
    this.refreshSegments();
    if (this.startOffset > this.endOffset) {
      // Kafka's LogLoader: a log start checkpoint above the recovered log end (the tail was lost) leaves
      // nothing readable; start empty at the checkpointed log start.
      batches = 0;
      this.storage.reset(this.startOffset);
      this.epochs.clear();
      this.setLogStartProducers(undefined);
      this.rebuild();
    }
    this.epochs.truncateFromStart(this.startOffset);
    // Entries at or past the recovered log end name batches that are gone (a torn tail), except the one
    // DeleteRecords or retention moved up to the start of a log they emptied: the log in memory keeps that
    // entry (its epoch is what a fetch from this log's end carries), so reopening keeps it too.
    const emptiedFromStart = !torn && this.endOffset === this.startOffset;
    this.epochs.truncateFromEnd(emptiedFromStart ? this.endOffset + 1n : this.endOffset);
    // Written when recovery changed it (or there was none), as Kafka's cache writes its file only on a
    // change: a restart of a broker with thousands of partitions rewrote as many unchanged files.
    if (checkpoint === undefined || !sameEpochs(checkpoint, this.epochs.entries())) this.saveEpochs();
    this.storage.writeAbortedTxns?.(this.abortedForStorage);
    this.activeFirstTimestamp = this.activeSegmentFirstTimestamp();
    this.activeFirstTimestampUnread = false;
    this.recovery = { truncatedTail: torn, batches };
    this.updateHighWatermark(options.highWatermark ?? this.startOffset);
  }

  /**
   * Opens a log over `storage`, recovering it as Kafka's LogLoader does: every batch is checked (header,
   * CRC, increasing offsets), a torn or corrupt tail is cut off (with any later segments), the leader-epoch
   * cache is loaded from its checkpoint and completed from the batches, and producer state and the
   * aborted-transaction index are rebuilt by replaying the log. An empty storage starts at offset 0.
   */
  static open(storage: LogStorage, config: LogConfig, options: OpenLogOptions = {}): PartitionLog {
    return new PartitionLog(storage, config, options);
  }

  /** First offset of the log. */
  get logStartOffset(): bigint {
    return this.startOffset;
  }
  /** Offset the next appended record gets. */
  get logEndOffset(): bigint {
    return this.endOffset;
  }
  /** Offsets below it are replicated (set by the owner with `updateHighWatermark`). */
  get highWatermark(): bigint {
    return this.hw;
  }
  /**
   * How many times batches this log held were rewritten or removed from its end since it was opened: a
   * compaction pass that replaced segments, a truncation (`truncateTo` that removed batches,
   * `truncateFullyAndStartAt`). A reader that keeps what it read (the node's `__mirror_state` history)
   * reads again when it changed; appends and a log start moving up (retention, DeleteRecords) leave it as it
   * is (`logStartOffset` says what those removed). {@link truncationCount} tells the two kinds apart.
   */
  get rewriteCount(): number {
    return this.rewrites;
  }
  /**
   * The truncations among {@link rewriteCount} (batches removed from the log's end, or the log emptied):
   * offsets read before may hold other records since. When `rewriteCount` changed and this did not, only
   * compaction passes ran: they remove records and keep the offsets, timestamps, keys and values of the
   * others (Kafka's LogCleaner), so what was read is still right but for the records removed.
   */
  get truncationCount(): number {
    return this.truncations;
  }
  /**
   * min(high watermark, first offset of the earliest unstable transaction), never below the log start:
   * READ_COMMITTED reads stop here.
   */
  get lastStableOffset(): bigint {
    const unstable = this.producers.firstUnstableOffset();
    if (unstable === undefined || unstable >= this.hw) return this.hw;
    return unstable > this.startOffset ? unstable : this.startOffset;
  }
  /** Latest leader epoch in the cache, if any. */
  get latestEpoch(): number | undefined {
    return this.epochs.latestEpoch;
  }

  /**
   * The epoch of the log's last offset: the latest cache entry starting below the log end, skipping epochs
   * a leader recorded at the log end and never wrote in. When every entry starts at the log end (no
   * offsets left: retention moved the log start to its end), the cache's latest epoch; undefined for none.
   * O(1) in practice: no batch is read.
   */
  get lastWrittenEpoch(): number | undefined {
    return this.epochs.latestEpochBefore(this.endOffset) ?? this.epochs.latestEpoch;
  }

  /** Batches the log holds (its in-memory index has one entry per batch: memory that grows with it). */
  get batchCount(): number {
    return this.index.length;
  }

  /**
   * The control type (`ControlRecordType`: ABORT, COMMIT, MIRROR_PID_RESET...) of the last batch stored,
   * or undefined when that batch holds data or the log has no batch. O(1): tracked on append, rebuilt on
   * recovery, truncation, compaction and deletion.
   */
  get lastBatchControlType(): number | undefined {
    return this.lastControlType;
  }

  /**
   * True when the last batch stored is a MIRROR_PID_RESET: a failover that resumes half way through
   * (KIP-1279 STOPPING) must not write a second one.
   */
  endsWithPidReset(): boolean {
    return this.lastControlType === ControlRecordType.MIRROR_PID_RESET;
  }

  /** The partition leader epoch of the last stored batch (reads its header), or undefined for an empty log. */
  lastBatchLeaderEpoch(): number | undefined {
    return this.index.length > 0 ? this.batchAt(this.index.length - 1).partitionLeaderEpoch : undefined;
  }

  /**
   * True if the log holds a data batch (not a control batch) written at a leader epoch above `epoch`. Reads
   * the batches above it from the log end back (epochs never go down along a log) and stops at the first
   * data batch: after a KIP-1279 failover bumped the leader epoch above its LME, only local producers write
   * data there (the failover itself writes control batches: ABORT markers and the PID reset).
   */
  hasDataBatchAbove(epoch: number): boolean {
    for (let i = this.index.length - 1; i >= 0; i--) {
      const batch = this.batchAt(i);
      if (batch.partitionLeaderEpoch <= epoch) return false;
      if (!batch.isControl) return true;
    }
    return false;
  }

  /**
   * Appends one produced batch as the leader: checks the CRC, that the batch is well formed, the leader
   * epoch and the producer's epoch and sequence; then assigns baseOffset = log end offset and stamps
   * `leaderEpoch` (both fields are outside the CRC) into the bytes the log keeps: `batchBytes` itself when
   * handed over (`transferOwnership`), otherwise a copy, so the caller's buffer is never written to
   * (bytes shared with another log or a fetch response stay as they are). A retry of one of the
   * producer's last five batches appends nothing and returns the original offsets (`duplicate: true`).
   *
   * Throws `CorruptRecordError` (2), `InvalidRecordError` (87: not exactly one batch, record count not
   * matching the offset range, a control batch from a client, a client batch with a producer id and no
   * sequence), `FencedLeaderEpochError` (74: epoch below the cache's latest), `InvalidProducerEpochError`
   * (47), `OutOfOrderSequenceError` (45), `InvalidTxnStateError` (48).
   */
  appendAsLeader(
    batchBytes: Buffer,
    leaderEpoch: number,
    options: AppendAsLeaderOptions = {},
  ): LogAppendInfo {
    const origin = options.origin ?? "client";
    const batch = singleBatch(batchBytes);
    batch.validate();
    const latest = this.epochs.latestEpoch;
    if (latest !== undefined && leaderEpoch < latest) {
      throw new FencedLeaderEpochError(
        `append with leader epoch ${leaderEpoch} but the log already has epoch ${latest}; this leader is stale`,
      );
    }
    if (batch.isControl) {
      if (origin === "client") {
        throw new InvalidRecordError(
          "clients may not write control batches; markers are appended with origin coordinator",
        );
      }
    } else if (batch.recordCount < 1 || batch.recordCount !== batch.lastOffsetDelta + 1) {
      throw new InvalidRecordError(
        `batch holds ${batch.recordCount} records but spans ${batch.lastOffsetDelta + 1} offsets; a produced batch must be dense and non-empty`,
      );
    } else if (origin === "client" && batch.producerId >= 0n && batch.baseSequence < 0) {
      // Kafka's LogValidator: taken, it would pass the producer's sequence and duplicate checks by.
      throw new InvalidRecordError(
        `batch of producer ${batch.producerId} has sequence ${batch.baseSequence}; an idempotent or transactional batch must carry its sequence (from 0), a plain one producer id -1`,
      );
    }
    if (!batch.isControl && batch.producerId >= 0n) {
      const dup = this.producers.findDuplicate(batch);
      if (dup) {
        return {
          firstOffset: dup.firstOffset,
          lastOffset: dup.lastOffset,
          duplicate: true,
          batchCount: 0,
          validBytes: 0,
        };
      }
    }
    this.producers.checkAppend(batch, origin);
    // Offsets and the epoch are stamped into the bytes the log keeps: the caller's buffer when it was
    // handed over, otherwise a copy (the caller's buffer is never written to, so bytes it shares with
    // another log, a fetch response say, stay as they are).
    const stored = options.transferOwnership === true ? batch : new RecordBatch(Buffer.from(batch.buffer));
    stored.setBaseOffset(this.endOffset);
    stored.setPartitionLeaderEpoch(leaderEpoch);
    if (options.logAppendTimeMs !== undefined) {
      stored.setMaxTimestamp(TimestampType.LOG_APPEND_TIME, options.logAppendTimeMs);
    }
    this.appendValidated([stored], [stored.baseOffset], stored.buffer, stored.sizeInBytes, true);
    return {
      firstOffset: stored.baseOffset,
      lastOffset: stored.lastOffset,
      duplicate: false,
      batchCount: 1,
      validBytes: stored.sizeInBytes,
      ...(options.logAppendTimeMs === undefined ? {} : { logAppendTimeMs: options.logAppendTimeMs }),
    };
  }

  /**
   * Appends fetched batches exactly as they are (followers, and the mirror's append-as-is): offsets,
   * epochs, producer fields and CRC unchanged. `batchesBytes` is one buffer or slices (a fetch's
   * `recordSlices`) that each hold whole batches, except that the last may end with a partial batch.
   * Every batch's CRC and header is checked before anything is appended (all or nothing); a trailing
   * partial batch (a fetch cut at its byte limit) is ignored.
   * Offsets must increase and the first must be >= the log end offset; gaps are allowed (compacted
   * sources). The leader-epoch cache, producer state (MIRROR_PID_RESET included) and aborted-transaction
   * index are updated from the headers and control records.
   *
   * Throws `CorruptRecordError` (nothing appended: fetch again), or `UnexpectedAppendOffsetError` when the
   * first offset is below the log end offset or offsets go backwards (fetch from `logEndOffset`, or
   * `truncateTo` the diverging offset first).
   */
  appendAsFollower(batchesBytes: Buffer | readonly Buffer[], options: AppendAsIsOptions = {}): LogAppendInfo {
    // The mirror's hot path, one call per fetch: one walk over the headers, validating everything before
    // anything is appended (all or nothing), with offsets as numbers and no object per batch. Bytes the
    // caller keeps are copied once, each chunk's CRCs checked on the copy while it is in cache.
    const transfer = options.transferOwnership === true;
    const copy = !transfer && this.storage.keepsAppendedBuffers === true;
    const slices = Buffer.isBuffer(batchesBytes) ? [batchesBytes] : batchesBytes;
    const plan = this.plan;
    try {
      if (
        this.index.compact &&
        this.endOffset <= MAX_EXACT_OFFSET &&
        walkFetchedBatches(slices, Number(this.endOffset), copy, plan) &&
        // More offsets than one segment can index: the general path splits the append between segments.
        (plan.count === 0 ||
          BigInt(plan.last[plan.count - 1]!) - BigInt(plan.base[0]!) <= MAX_RELATIVE_OFFSET)
      ) {
        return this.commitPlan(plan, transfer || plan.copied);
      }
    } finally {
      plan.release(); // do not keep the caller's buffers alive through the reused plan
    }
    return this.appendAsFollowerGeneral(batchesBytes, options);
  }

  /** Stores what `walkFetchedBatches` validated and indexes it: epochs, producer state, offsets. */
  private commitPlan(plan: FollowerAppendPlan, owned: boolean): LogAppendInfo {
    const count = plan.count;
    if (count === 0) {
      return {
        firstOffset: undefined,
        lastOffset: undefined,
        duplicate: false,
        batchCount: 0,
        validBytes: 0,
      };
    }
    const firstOffset = BigInt(plan.base[0]!);
    // Control batches are among the producer batches. Every one's type is read before anything is
    // stored (the producer state reads it again once the bytes are in), so a control record too corrupt
    // to type, anywhere in the append, does not half-append; the last batch's is kept.
    let lastControlType: number | undefined;
    for (let j = 0; j < plan.producerControl.length; j++) {
      if (!plan.producerControl[j]) continue;
      const type = controlTypeOf(plan.producerBatch(j));
      if (plan.producerOrdinals[j] === count - 1) lastControlType = type;
    }
    // Record timestamps matter to the roll only while the active segment is one the log reopened.
    this.loadActiveFirstTimestamp();
    const maxTimestamp = this.activeFirstTimestamp === undefined ? -1 : maxTimestampOf(plan.bytes);
    const appendLast = BigInt(plan.last[count - 1]!);
    this.rollAndAppend(plan.validBytes, firstOffset, appendLast, plan.bytes, owned, maxTimestamp);
    const segment = Number(this.activeBase);
    let position = this.activeSize;
    let epochsChanged = false;
    let latest = this.epochs.latestEpoch ?? -1;
    const ordinals = plan.producerOrdinals;
    let p = 0;
    let nextProducer = ordinals.length > 0 ? ordinals[0]! : -1;
    for (let i = 0; i < count; i++) {
      const size = plan.size[i]!;
      this.index.pushNumbers(plan.base[i]!, plan.last[i]!, segment, position, size);
      position += size;
      const epoch = plan.epoch[i]!;
      if (epoch > latest) {
        if (this.epochs.assign(epoch, BigInt(plan.base[i]!))) epochsChanged = true;
        latest = this.epochs.latestEpoch ?? -1;
      }
      if (i === nextProducer) {
        // A plain idempotent batch followed by five more of its producer leaves no trace in the state.
        if (!plan.producerSuperseded(p)) this.recordCompleted(this.producers.update(plan.producerBatch(p)));
        p++;
        nextProducer = p < ordinals.length ? ordinals[p]! : -1;
      }
    }
    const lastOffset = BigInt(plan.last[count - 1]!);
    this.endOffset = lastOffset + 1n;
    this.activeSize = position;
    this.lastControlType = lastControlType;
    if (epochsChanged) this.saveEpochs();
    return { firstOffset, lastOffset, duplicate: false, batchCount: count, validBytes: plan.validBytes };
  }

  /** `appendAsFollower` with bigint offsets and a view per batch: for offsets beyond 2^53. */
  private appendAsFollowerGeneral(
    batchesBytes: Buffer | readonly Buffer[],
    options: AppendAsIsOptions,
  ): LogAppendInfo {
    const batches = this.scratchBatches;
    const bases = this.scratchBases;
    batches.length = 0;
    bases.length = 0;
    const slices = Buffer.isBuffer(batchesBytes) ? undefined : batchesBytes;
    const sliceCount = slices ? slices.length : 1;
    let previousLast: bigint | undefined;
    let validBytes = 0;
    /** Bytes of the last slice that hold whole batches (a partial trailing batch is left out). */
    let lastSliceBytes = 0;
    for (let k = 0; k < sliceCount; k++) {
      const bytes = slices ? slices[k]! : (batchesBytes as Buffer);
      const end = bytes.length;
      let position = 0;
      while (position + LOG_OVERHEAD <= end) {
        const length = bytes.readInt32BE(position + BATCH_LENGTH_OFFSET);
        if (length + LOG_OVERHEAD < RECORD_BATCH_OVERHEAD) {
          throw new CorruptRecordError(
            `record batch at byte ${validBytes + position} declares length ${length}, less than the v2 header needs`,
          );
        }
        const next = position + LOG_OVERHEAD + length;
        if (next > end) break; // a partial trailing batch: the fetch hit its byte limit
        const batch = new RecordBatch(bytes.subarray(position, next));
        batch.validate();
        const base = batch.baseOffset;
        if (previousLast === undefined && base < this.endOffset) {
          throw new UnexpectedAppendOffsetError(
            `first offset ${base} is below the log end offset ${this.endOffset}; fetch from ${this.endOffset}, or truncate to ${base} first if the logs diverged`,
            base,
            this.endOffset,
            base + BigInt(batch.lastOffsetDelta),
          );
        }
        if (previousLast !== undefined && base <= previousLast) {
          throw new UnexpectedAppendOffsetError(
            `batch at offset ${base} does not follow the previous batch ending at ${previousLast}; the fetched data is out of order`,
            base,
            this.endOffset,
          );
        }
        previousLast = base + BigInt(batch.lastOffsetDelta);
        batches.push(batch);
        bases.push(base);
        position = next;
      }
      validBytes += position;
      if (k < sliceCount - 1 && position !== end) {
        throw new CorruptRecordError(
          `slice ${k} of the fetched records ends inside a batch (byte ${validBytes}); only the last slice may end with a partial batch`,
        );
      }
      lastSliceBytes = position;
    }
    const count = batches.length;
    const first = bases[0];
    if (first === undefined) {
      return {
        firstOffset: undefined,
        lastOffset: undefined,
        duplicate: false,
        batchCount: 0,
        validBytes: 0,
      };
    }
    let bytes: Buffer | readonly Buffer[];
    if (!slices) {
      bytes =
        lastSliceBytes === batchesBytes.length
          ? batchesBytes
          : (batchesBytes as Buffer).subarray(0, lastSliceBytes);
    } else {
      const last = slices[sliceCount - 1]!;
      bytes =
        lastSliceBytes === last.length ? slices : [...slices.slice(0, -1), last.subarray(0, lastSliceBytes)];
    }
    this.appendValidated(batches, bases, bytes, validBytes, options.transferOwnership === true);
    batches.length = 0; // do not keep the caller's buffer alive through the scratch array
    bases.length = 0;
    return {
      firstOffset: first,
      lastOffset: previousLast,
      duplicate: false,
      batchCount: count,
      validBytes,
    };
  }

  /** The same as `appendAsFollower`: the mirror's name for appending fetched batches unchanged. */
  appendAsIs(batchesBytes: Buffer | readonly Buffer[], options: AppendAsIsOptions = {}): LogAppendInfo {
    return this.appendAsFollower(batchesBytes, options);
  }

  /**
   * Reads whole batches from `fetchOffset` (a batch holding it is returned whole, as Kafka does) up to
   * `maxBytes`, never past the upper bound: the high watermark (read_uncommitted), the LSO
   * (read_committed) or the log end (`fetchUpTo: "log_end"`). At least one batch is returned if there is
   * one below the bound, even if larger than `maxBytes` (unless `minOneBatch: false`). The batches come
   * from one segment, so the result is a view of the stored bytes when storage allows.
   *
   * Throws `OffsetOutOfRangeError` (1) if `fetchOffset` is below the log start or above the log end.
   */
  read(
    fetchOffset: bigint,
    maxBytes: number,
    isolation: IsolationLevel,
    options: ReadOptions = {},
  ): FetchDataInfo {
    if (fetchOffset < this.startOffset || fetchOffset > this.endOffset) {
      throw new OffsetOutOfRangeError(
        `fetch offset ${fetchOffset} is outside the log [${this.startOffset}, ${this.endOffset}]; reset the position to the log start or end`,
      );
    }
    const lso = this.lastStableOffset;
    const upper =
      options.fetchUpTo === "log_end" ? this.endOffset : isolation === "read_committed" ? lso : this.hw;
    const minOne = options.minOneBatch ?? true;
    const index = this.index;
    let i = index.search(fetchOffset);
    let size = 0;
    let lastOffset: bigint | undefined;
    let slices: Buffer[] = [];
    if (index.compact) {
      // Numbers straight from the index's columns: no object per batch on the fetch path.
      const n = index.length;
      if (i < n) {
        const first = i;
        const segment = index.segmentAt(i);
        const bound = Number(upper);
        let last = -1;
        for (; i < n && index.segmentAt(i) === segment; i++) {
          const batchLast = index.lastOffsetAt(i);
          if (batchLast >= bound) break;
          const batchSize = index.sizeAt(i);
          if (size + batchSize > maxBytes && !(size === 0 && minOne)) break;
          size += batchSize;
          last = batchLast;
        }
        if (size > 0) {
          lastOffset = BigInt(last);
          slices = this.storage.readSlices(BigInt(segment), index.positionAt(first), size);
        }
      }
    } else {
      const first = index.at(i);
      for (let e = first; e !== undefined && e.segment === first?.segment; e = index.at(++i)) {
        if (e.lastOffset >= upper) break;
        if (size + e.size > maxBytes && !(size === 0 && minOne)) break;
        size += e.size;
        lastOffset = e.lastOffset;
      }
      if (first && size > 0) slices = this.storage.readSlices(first.segment, first.position, size);
    }
    const aborted =
      isolation === "read_committed" && lastOffset !== undefined
        ? this.txnIndex.collect(fetchOffset, lastOffset + 1n)
        : [];
    return fetchDataInfo(slices, size, {
      highWatermark: this.hw,
      lastStableOffset: lso,
      logStartOffset: this.startOffset,
      logEndOffset: this.endOffset,
      abortedTransactions: aborted,
    });
  }

  /**
   * Every stored batch, in order (a reading aid for tools and tests; not the fetch path), including any
   * batch below the log start still held by the first segment.
   */
  *batches(): Generator<RecordBatch, void, undefined> {
    for (const seg of this.storage.segments()) {
      if (seg.sizeInBytes === 0) continue;
      for (const slice of this.storage.readSlices(seg.baseOffset, 0, seg.sizeInBytes)) {
        yield* recordBatches(slice);
      }
    }
  }

  /** Kafka's `endOffsetForEpoch`: see `LeaderEpochCache.endOffsetFor` for the cases. */
  endOffsetForEpoch(epoch: number): EpochEndOffset {
    return this.epochs.endOffsetFor(epoch, this.endOffset);
  }

  /**
   * Kafka's `maybeAssignEpochStartOffset`, called by a new leader (Partition.makeLeader): records that
   * `epoch` starts at `startOffset` (the log end) before any batch of it exists, so the leader can answer
   * OffsetsForLeaderEpoch and diverging-epoch checks for every epoch a follower or mirror may have seen.
   * An epoch below the latest one is ignored (history is never rewritten). True if the cache changed.
   */
  assignEpochStartOffset(epoch: number, startOffset: bigint): boolean {
    const latest = this.epochs.latestEpoch;
    if (latest !== undefined && epoch < latest) return false;
    const changed = this.epochs.assign(epoch, startOffset);
    if (changed) this.saveEpochs();
    return changed;
  }

  /** The leader-epoch cache entries, oldest first. */
  epochEntries(): EpochEntry[] {
    return this.epochs.entries();
  }

  /**
   * Takes a topic's changed configs (Kafka applies a topic's dynamic configs to its open logs): the next
   * roll, compaction or retention pass uses them. Nothing stored changes.
   */
  updateConfig(config: LogConfig): void {
    this.config = resolveLogConfig(config);
  }

  /**
   * Kafka's removeExpiredProducers (a broker runs it every producer.id.expiration.check.interval.ms): forgets
   * every producer with no open transaction whose last batch is producer.id.expiration.ms old
   * (`LogConfig.producerIdExpirationMs`) by the log's clock, also from the state a truncation restores and
   * a replay starts from (Kafka filters them out of a snapshot it reloads), so none comes back from there.
   * Returns how many producers went.
   */
  removeExpiredProducers(): number {
    const now = this.config.clock.now();
    const ms = this.config.producerIdExpirationMs;
    const removed = this.producers.removeExpiredProducers(now, ms);
    for (const cp of this.checkpoints) {
      cp.state = ProducerStateManager.withoutExpired(cp.state, now, ms);
      cp.entries = cp.state.producers.length;
    }
    const saved = this.logStartProducers;
    const kept = saved && ProducerStateManager.withoutExpired(saved, now, ms);
    if (kept !== saved) this.setLogStartProducers(kept, this.storage.segments()[0]!.baseOffset);
    return removed;
  }

  /** Producer state, one entry per producer id, by ascending id. */
  producerStateSnapshot(): ProducerStateEntry[] {
    return this.producers.snapshot();
  }

  /** Open transactions (producer id, first offset), earliest first. */
  ongoingTransactions(): { producerId: bigint; firstOffset: bigint }[] {
    return this.producers.ongoingTransactions();
  }

  /** The whole aborted-transaction index. */
  abortedTransactions(): AbortedTxn[] {
    return this.txnIndex.all();
  }

  /** The segments, oldest first. */
  segments(): readonly SegmentInfo[] {
    return this.storage.segments();
  }

  /**
   * Sets the high watermark, bounded to [log start, log end]; returns the value set. Closed transactions
   * whose marker falls below it stop holding the LSO back.
   */
  updateHighWatermark(offset: bigint): bigint {
    this.hw =
      offset < this.startOffset ? this.startOffset : offset > this.endOffset ? this.endOffset : offset;
    const applied = this.producers.highWatermarkApplied;
    if (this.hw < applied && this.hasTxnMarkerIn(this.hw, applied)) {
      // The high watermark went back (a follower of a new leader) below control batches it had passed:
      // the transactions they closed were forgotten as replicated, and a replay counts them unstable again
      // (LSO at their first offset). Rebuild what a replay builds: from a checkpoint taken before the
      // high watermark passed them, else by a replay of the whole log.
      if (!this.truncateStateFrom(this.index.length)) this.rebuild();
    }
    this.producers.onHighWatermarkUpdated(this.hw);
    return this.hw;
  }

  /**
   * Whether a control batch lies at an offset in [from, to): a COMMIT or ABORT marker, or a
   * MIRROR_PID_RESET (which closes every open transaction), any of which may close a transaction.
   */
  private hasTxnMarkerIn(from: bigint, to: bigint): boolean {
    for (let i = this.index.search(from); i < this.index.length; i++) {
      const e = this.index.at(i)!;
      if (e.baseOffset >= to) break;
      // Only the attributes of each batch are read, not the batch.
      const attributes = this.storage.read(e.segment, e.position + ATTRIBUTES_OFFSET, 2).readInt16BE(0);
      if (attributes & CONTROL_FLAG_MASK) return true;
    }
    return false;
  }

  /**
   * Removes every batch at or above `offset`; returns false if there was nothing to remove. Truncation is
   * at batch boundaries: a batch holding `offset` is removed whole, so the log end offset becomes the end
   * of the last remaining batch (Kafka would set it to `offset` itself, leaving a hole inside a batch).
   * An `offset` below the log start truncates fully and starts at `offset`; so does a truncation that
   * removes the batch holding the log start (nothing readable would be left). Afterwards the epoch cache
   * drops entries at or above the new end, the high watermark is bounded by it, and producer state and
   * the aborted-transaction index become what a replay of the remaining batches builds: from the producer
   * state checkpointed at the last segment roll below the new end, replaying only the batches after it
   * (as Kafka restores its producer snapshot), or by a replay of the whole log when no checkpoint serves.
   */
  truncateTo(offset: bigint): boolean {
    if (offset >= this.endOffset) {
      // Nothing to remove, but the epoch cache may end with an entry no batch has reached: this replica
      // led that epoch and appended nothing in it. Kafka drops it here too, so the next fetch's
      // `lastFetchedEpoch` names an epoch whose batches this log really holds.
      if (this.epochs.truncateFromEnd(this.endOffset)) this.saveEpochs();
      return false;
    }
    if (offset < this.startOffset) {
      this.truncateFullyAndStartAt(offset);
      return true;
    }
    this.rewrites++;
    this.truncations++;
    const first = this.index.search(offset);
    const entry = this.index.at(first);
    if (entry) {
      const segs = this.storage.segments();
      const segIndex = segs.findIndex((s) => s.baseOffset === entry.segment);
      const previous = segs[segIndex - 1];
      if (entry.position === 0 && previous) this.storage.truncate(previous.baseOffset, previous.sizeInBytes);
      else this.storage.truncate(entry.segment, entry.position);
    } else {
      // No batch at or above `offset`, yet the log end is: an empty active segment based above it (a roll
      // to a follower's gap, then a crash before its append). Kafka deletes every segment based above the
      // target; kept, it would hold the log end above the target.
      const segs = this.storage.segments();
      const above = segs.findIndex((s) => s.baseOffset > offset);
      const kept = segs[above - 1];
      if (kept) this.storage.truncate(kept.baseOffset, kept.sizeInBytes);
    }
    if (!this.truncateStateFrom(first)) this.rebuild();
    if (this.endOffset < this.startOffset) {
      // The removed batches held the log start (it can sit inside a batch, or after a compaction gap):
      // nothing readable is left, so the log starts anew at `offset`, as Kafka's offset-exact truncation.
      this.truncateFullyAndStartAt(offset);
      return true;
    }
    if (this.epochs.truncateFromEnd(this.endOffset)) this.saveEpochs();
    this.updateHighWatermark(this.hw);
    return true;
  }

  /** Empties the log: log start = log end = high watermark = `offset`; epochs and producer state cleared. */
  truncateFullyAndStartAt(offset: bigint): void {
    this.rewrites++;
    this.truncations++;
    // The log start first: a crash in between leaves a log start the reopened log can honour.
    this.storage.writeLogStartOffset(offset);
    this.startOffset = offset;
    this.storage.reset(offset);
    this.index.clear();
    this.checkpoints = [];
    this.lastControlType = undefined;
    this.setLogStartProducers(undefined);
    this.producers.clear();
    this.txnIndex.clear();
    this.abortedForStorage = [];
    this.epochs.clear();
    this.saveEpochs();
    this.activeCreatedMs = undefined;
    this.activeFirstTimestamp = undefined;
    this.activeFirstTimestampUnread = false;
    this.refreshSegments();
    this.hw = offset;
  }

  /**
   * Kafka's DeleteRecords: moves the log start offset up to `offset` and deletes every segment wholly
   * below it; returns the new log start offset (Kafka's low watermark). The log start may land inside a
   * segment, even inside a batch: the bytes below it stay on disk until their segment goes, but reads
   * below it fail with OFFSET_OUT_OF_RANGE. The new log start is persisted (`writeLogStartOffset`) before
   * any segment is deleted, so a reopened log keeps it. The leader-epoch cache is truncated from the start
   * (the epoch holding the new start is kept, moved to it); the aborted-transaction index keeps what the
   * remaining batches hold. Producers stay, those whose batches are all gone included (Kafka's
   * onLogStartOffsetIncremented forgets only closed transactions below the new log start).
   *
   * An `offset` at or below the log start changes nothing. Throws `OffsetOutOfRangeError` (1) if `offset`
   * is above the high watermark: only replicated records may be deleted.
   */
  deleteRecordsBefore(offset: bigint): bigint {
    if (offset > this.hw) {
      throw new OffsetOutOfRangeError(
        `cannot delete records before ${offset}: it is above the high watermark ${this.hw}; delete up to the high watermark at most`,
      );
    }
    if (offset <= this.startOffset) return this.startOffset;
    this.storage.writeLogStartOffset(offset);
    this.startOffset = offset;
    if (this.epochs.truncateFromStart(offset)) this.saveEpochs();
    this.deleteSegments(this.segmentsBreachingLogStart());
    return this.startOffset;
  }

  /**
   * Kafka's time and size based retention (`deleteOldSegments`): deletes whole non-active segments, oldest
   * first, each wholly below the high watermark, that breach
   * - `retentionMs` (retention.ms): the segment's largest record timestamp is more than `retentionMs` older
   *   than the injected clock's now (a segment without any timestamp is never deleted by time, as Kafka
   *   would fall back to the file's modification time, which this log does not have);
   * - `retentionBytes` (retention.bytes): while the log (active segment included) is larger than
   *   `retentionBytes` by at least the oldest segment's size;
   * and then any segment wholly below the log start offset. -1 (the default) disables a limit. As in
   * Kafka, time and size retention apply only to logs whose cleanup policy is `delete` or `compact,delete`;
   * a log that is only compacted loses segments below its log start alone. The log start moves to the first remaining segment and is
   * persisted; epochs and producer state follow as for `deleteRecordsBefore`.
   */
  applyRetention(options: RetentionOptions = {}): RetentionResult {
    const retentionMs = options.retentionMs ?? -1;
    const retentionBytes = options.retentionBytes ?? -1;
    const segs = this.storage.segments();
    const deletable = this.segmentsBelowHighWatermark(segs);
    let count = 0;
    if (deletesByRetention(this.config.cleanupPolicy)) {
      if (retentionMs >= 0) {
        const now = this.config.clock.now();
        // A segment compaction emptied (compact,delete) has no timestamp, and holds nothing to keep: Kafka
        // dates it by its file's mtime (its records' time, kept by the cleaner), so it goes with the older
        // segments around it. It must not stop time retention for good.
        for (let scan = count; scan < deletable.length; ) {
          if (deletable[scan]!.sizeInBytes === 0) {
            scan++;
            continue;
          }
          const largest = this.largestTimestampOf(deletable[scan]!);
          if (largest < 0 || now - largest <= retentionMs) break;
          count = ++scan;
        }
      }
      if (retentionBytes >= 0) {
        let excess = segs.reduce((n, seg) => n + seg.sizeInBytes, 0) - retentionBytes;
        for (let i = 0; i < count; i++) excess -= deletable[i]!.sizeInBytes;
        while (count < deletable.length && excess - deletable[count]!.sizeInBytes >= 0) {
          excess -= deletable[count]!.sizeInBytes;
          count++;
        }
      }
    }
    const below = this.segmentsBreachingLogStart();
    const chosen = below.length > count ? below : deletable.slice(0, count);
    const bytes = chosen.reduce((n, seg) => n + seg.sizeInBytes, 0);
    this.deleteSegments(chosen);
    return { segmentsDeleted: chosen.length, bytesDeleted: bytes, logStartOffset: this.startOffset };
  }

  /**
   * One compaction pass (Kafka's LogCleaner, see `compactSegments` for the rules) over the segments wholly
   * below min(active segment base, LSO, first segment holding a record younger than min.compaction.lag.ms):
   * the active segment, anything not yet stable and records within the lag are never touched (Kafka's
   * LogCleanerManager.cleanableOffsets). Producer state and the aborted-transaction index are rebuilt from
   * the result, so they equal what a reopened log would rebuild. A log whose cleanup policy is not
   * `compact` is left alone.
   */
  compact(): CompactionStats {
    let cleanableEnd = minOffset(this.lastStableOffset, this.activeBase);
    const none = { segmentsCleaned: 0, batchesRemoved: 0, recordsRemoved: 0, bytesBefore: 0, bytesAfter: 0 };
    if (!compacts(this.config.cleanupPolicy)) return { ...none, cleanableEndOffset: cleanableEnd };
    const lag = this.config.minCompactionLagMs;
    const youngerThan = this.config.clock.now() - lag;
    const segs = this.storage.segments();
    const cleanable: CleanableSegment[] = [];
    for (let i = 0; i + 1 < segs.length; i++) {
      const seg = segs[i]!;
      if (segs[i + 1]!.baseOffset > cleanableEnd) break;
      const bytes = this.storage.read(seg.baseOffset, 0, seg.sizeInBytes);
      const batches = [...recordBatches(bytes)];
      if (lag > 0 && batches.length > 0) {
        // Kafka compares the segment's largest timestamp (its file's mtime when it has none: a segment
        // without any timestamp here counts as young, so it is kept rather than compacted too early).
        let largest = -1n;
        for (const b of batches) if (b.maxTimestamp > largest) largest = b.maxTimestamp;
        if (largest < 0n || Number(largest) > youngerThan) {
          cleanableEnd = seg.baseOffset;
          break;
        }
      }
      cleanable.push({ baseOffset: seg.baseOffset, batches });
    }
    if (cleanable.length === 0) return { ...none, cleanableEndOffset: cleanableEnd };
    const lastData = new Map<bigint, bigint>();
    for (const e of this.producers.snapshot()) {
      const last = e.batchMetadata[e.batchMetadata.length - 1];
      if (last) lastData.set(e.producerId, last.lastOffset);
    }
    const { cleaned, stats } = compactSegments(cleanable, {
      isAborted: (b) => this.txnIndex.isAborted(b.producerId, b.baseOffset),
      lastDataOffsetOf: (pid) => lastData.get(pid),
      nowMs: this.config.clock.now(),
      deleteRetentionMs: this.config.deleteRetentionMs,
    });
    let replaced = 0;
    try {
      for (const seg of cleaned) {
        this.storage.replaceSegment(seg.baseOffset, seg.bytes);
        replaced++;
      }
    } finally {
      // Also when a later rewrite failed (a disk filling up): the index must name the bytes the segments
      // already rewritten hold now, or reads of them fail (or, in files, return other batches).
      if (replaced > 0) {
        this.rewrites++;
        this.rebuild();
        this.updateHighWatermark(this.hw);
      }
    }
    return { ...stats, cleanableEndOffset: cleanableEnd };
  }

  /** Closes the storage, after a producer state snapshot at the log end (when any producer has state). */
  close(): void {
    if (this.producers.size > 0)
      this.storage.writeProducerSnapshot?.(this.endOffset, this.producers.snapshot());
    this.storage.close();
  }

  private appendValidated(
    batches: readonly RecordBatch[],
    bases: readonly bigint[],
    bytes: Buffer | readonly Buffer[],
    size: number,
    transferOwnership: boolean,
  ): void {
    let end = segmentRunEnd(batches, bases, 0);
    if (end === batches.length) {
      this.appendToSegment(batches, bases, bytes, size, transferOwnership);
      return;
    }
    // The batches span more offsets than a segment can index (2^31; only a source segment Kafka itself
    // never writes holds such a run): each run that fits goes to a segment of its own. Every control
    // record is typed first, so a corrupt one fails the whole append; a storage error in a later run leaves
    // the earlier ones appended, a prefix of the batches that the next fetch continues from.
    for (const batch of batches) controlTypeOfStored(batch);
    for (let start = 0; start < batches.length; start = end) {
      end = segmentRunEnd(batches, bases, start);
      const run = batches.slice(start, end);
      const runBytes = run.map((b) => b.buffer);
      const runSize = run.reduce((sum, b) => sum + b.sizeInBytes, 0);
      this.appendToSegment(run, bases.slice(start, end), runBytes, runSize, transferOwnership);
    }
  }

  /** Appends validated batches whose offsets one segment can index (see `segmentRunEnd`). */
  private appendToSegment(
    batches: readonly RecordBatch[],
    bases: readonly bigint[],
    bytes: Buffer | readonly Buffer[],
    size: number,
    transferOwnership: boolean,
  ): void {
    // Read before anything is stored: a control record too corrupt to type, anywhere in the append,
    // must not half-append (the producer state reads each one after the bytes are in).
    let lastControlType: number | undefined;
    let maxTimestamp = -1;
    for (const batch of batches) {
      lastControlType = controlTypeOfStored(batch);
      const ts = Number(batch.maxTimestamp);
      if (ts > maxTimestamp) maxTimestamp = ts;
    }
    const lastBatch = batches[batches.length - 1]!;
    const appendLast = bases[bases.length - 1]! + BigInt(lastBatch.lastOffsetDelta);
    this.rollAndAppend(size, bases[0]!, appendLast, bytes, transferOwnership, maxTimestamp);
    const segment = this.activeBase;
    let position = this.activeSize;
    let epochsChanged = false;
    let last = this.endOffset - 1n;
    for (let i = 0; i < batches.length; i++) {
      const batch = batches[i]!;
      const base = bases[i]!;
      const size = batch.sizeInBytes;
      last = base + BigInt(batch.lastOffsetDelta);
      this.index.push({ baseOffset: base, lastOffset: last, segment, position, size });
      position += size;
      const epoch = batch.partitionLeaderEpoch;
      if (this.maybeAssignEpoch(epoch, base)) epochsChanged = true;
      if (batch.isControl || batch.producerId >= 0n) this.recordCompleted(this.producers.update(batch));
    }
    this.endOffset = last + 1n;
    this.activeSize = position;
    this.lastControlType = lastControlType;
    if (epochsChanged) this.saveEpochs();
  }

  /**
   * Rolls when the append needs it, then stores `bytes` in the active segment. A storage error undoes the
   * roll: the new segment starts at the append's first offset, which may lie above the log end (a
   * follower of a compacted log), and a later append at the log end must not land below its segment's
   * base (recovery would cut it, with everything after it). Kafka takes the log directory offline instead.
   */
  private rollAndAppend(
    appendSize: number,
    firstOffset: bigint,
    lastOffset: bigint,
    bytes: Buffer | readonly Buffer[],
    transferOwnership: boolean,
    appendMaxTimestamp: number,
  ): void {
    // A stale leader epoch checkpoint is brought up to date before any bytes go in (see `saveEpochs`).
    if (this.epochCheckpointStale) this.writeEpochCheckpoint();
    this.loadActiveFirstTimestamp();
    const before = {
      base: this.activeBase,
      size: this.activeSize,
      createdMs: this.activeCreatedMs,
      firstTimestamp: this.activeFirstTimestamp,
    };
    const rolled = this.maybeRoll(appendSize, firstOffset, lastOffset, appendMaxTimestamp);
    try {
      this.storage.append(bytes, transferOwnership ? TRANSFER : undefined);
    } catch (error) {
      if (rolled) {
        try {
          this.storage.truncate(before.base, before.size); // deletes the new, empty segment
          this.activeBase = before.base;
          this.activeSize = before.size;
          this.activeCreatedMs = before.createdMs;
          this.activeFirstTimestamp = before.firstTimestamp;
          // The roll's checkpoint holds the state before `firstOffset`; appends below it come first now.
          // (Its producer snapshot file is left: only Kafka's tools read those, and a roll there rewrites it.)
          this.checkpoints = this.checkpoints.filter((c) => c.offset < firstOffset);
        } catch {
          // The disk is failing: keep Kafka's rule that the log end is at least the active segment's base.
          this.refreshSegments();
        }
      }
      throw error;
    }
  }

  /**
   * Kafka's shouldRoll: the append would overflow segment.bytes, or the segment is older than segment.ms:
   * by the clock since it was created (or reopened), or, for a reopened segment, by the appended records'
   * max timestamp against its first batch's (Kafka's timeWaitedForRoll); or the append's last offset is too
   * far above the segment's base for its 4-byte relative offsets (Kafka's canConvertToRelativeOffset: a
   * follower of a compacted log can be handed batches more than 2^31 offsets apart). That last rule rolls
   * an empty segment too, which then stays, empty, below the new one (as in Kafka). True when it rolled.
   */
  private maybeRoll(
    appendSize: number,
    firstOffset: bigint,
    lastOffset: bigint,
    appendMaxTimestamp: number,
  ): boolean {
    const offsetOverflow =
      lastOffset - this.activeBase > MAX_RELATIVE_OFFSET && firstOffset > this.activeBase;
    if (this.activeSize === 0 && !offsetOverflow) return false;
    const now = this.config.clock.now();
    let age = now - (this.activeCreatedMs ?? now);
    if (this.activeFirstTimestamp !== undefined && appendMaxTimestamp >= 0)
      age = Math.max(age, appendMaxTimestamp - this.activeFirstTimestamp);
    if (
      offsetOverflow ||
      this.activeSize + appendSize > this.config.segmentBytes ||
      age >= this.config.segmentMs
    ) {
      // Kafka snapshots the producer state on every roll, named by the new segment.
      this.storage.writeProducerSnapshot?.(firstOffset, this.producers.snapshot());
      // Checkpoints are in memory (Kafka writes them to disk): a log of very many producers takes none.
      if (this.producers.size <= MAX_CHECKPOINT_PRODUCERS) this.takeCheckpoint(firstOffset);
      this.storage.roll(firstOffset);
      this.activeBase = firstOffset;
      this.activeSize = 0;
      this.activeCreatedMs = now;
      this.activeFirstTimestamp = undefined;
      this.activeFirstTimestampUnread = false;
      return true;
    }
    return false;
  }

  /** Reads the first batch's max timestamp of an older segment a truncation made active again. */
  private loadActiveFirstTimestamp(): void {
    if (!this.activeFirstTimestampUnread) return;
    this.activeFirstTimestampUnread = false;
    this.activeFirstTimestamp = this.activeSize === 0 ? undefined : this.activeSegmentFirstTimestamp();
  }

  /** Checkpoints the producer state at segment start `offset`, dropping older checkpoints as retention says. */
  private takeCheckpoint(offset: bigint): void {
    const state = this.producers.checkpoint();
    retainCheckpoint(this.checkpoints, { offset, state, entries: state.producers.length });
  }

  private maybeAssignEpoch(epoch: number, startOffset: bigint): boolean {
    const latest = this.epochs.latestEpoch;
    if (epoch < 0 || (latest !== undefined && epoch <= latest)) return false;
    return this.epochs.assign(epoch, startOffset);
  }

  private recordCompleted(done: CompletedTxn[]): void {
    for (const t of done) {
      if (!t.isAborted) continue;
      this.txnIndex.add({ producerId: t.producerId, firstOffset: t.firstOffset, lastOffset: t.lastOffset });
      // Kafka's ProducerStateManager.lastStableOffset(completedTxn): the earliest other open transaction.
      const open = this.producers.ongoingTransactions()[0];
      const indexed = {
        producerId: t.producerId,
        firstOffset: t.firstOffset,
        lastOffset: t.lastOffset,
        lastStableOffset: open ? open.firstOffset : t.lastOffset + 1n,
      };
      this.abortedForStorage.push(indexed);
      if (!this.replaying) this.storage.appendAbortedTxn?.(indexed);
    }
  }

  /**
   * Replays the whole log into a fresh index, producer state and transaction index, checkpointing the
   * producer state where the segments begin that rolls would have kept checkpoints of (the last ones, and
   * some spread over the rest): so a truncation right after a log is opened (or rebuilt) restores a
   * checkpoint too.
   */
  private replay(validateCrc: boolean, onBatch?: (batch: RecordBatch) => void): TornTail | undefined {
    this.checkpoints = [];
    this.index.clear();
    this.lastControlType = undefined;
    this.producers.clear();
    if (this.logStartProducers) this.producers.restore(this.logStartProducers);
    this.txnIndex.clear();
    this.abortedForStorage = [];
    this.replaying = true;
    const checkpointAt = checkpointOffsets(this.storage.segments().map((s) => s.baseOffset));
    let segment: bigint | undefined;
    try {
      return scanLog(this.storage, validateCrc, (batch, entry) => {
        if (entry.segment !== segment) {
          segment = entry.segment;
          if (checkpointAt.has(segment) && this.producers.size <= MAX_CHECKPOINT_PRODUCERS)
            this.takeCheckpoint(segment);
        }
        this.index.push(entry);
        this.lastControlType = controlTypeOfStored(batch);
        onBatch?.(batch);
        if (batch.producerId >= 0n || batch.isControl) this.recordCompleted(this.producers.update(batch));
      });
    } finally {
      this.replaying = false;
    }
  }

  private rebuild(): void {
    this.replay(false);
    this.refreshSegments();
    this.storage.writeAbortedTxns?.(this.abortedForStorage);
  }

  /** Non-active segments, oldest first, whose every offset is below the high watermark. */
  private segmentsBelowHighWatermark(segs: readonly SegmentInfo[]): SegmentInfo[] {
    const out: SegmentInfo[] = [];
    for (let i = 0; i + 1 < segs.length && segs[i + 1]!.baseOffset <= this.hw; i++) out.push(segs[i]!);
    return out;
  }

  /** Kafka's deleteLogStartOffsetBreachedSegments: segments whose next segment starts at or below the log start. */
  private segmentsBreachingLogStart(): SegmentInfo[] {
    const segs = this.storage.segments();
    const out: SegmentInfo[] = [];
    for (let i = 0; i + 1 < segs.length && segs[i + 1]!.baseOffset <= this.startOffset; i++)
      out.push(segs[i]!);
    return out;
  }

  /**
   * Kafka's LogSegment.rollingBasedTimestamp of a reopened log's active segment: the max timestamp of its
   * first batch (undefined when empty or without a timestamp). A restart does not make an old segment new
   * again: it rolls once the records appended to it are segment.ms younger than its first (a node restarted
   * more often than segment.ms would otherwise never roll it, and retention, which deletes only closed
   * segments, would never delete its records). Data time against data time, as Kafka: records stamped long
   * ago (a mirror of an old topic, a backfill) do not roll at every restart, nor do records stamped ahead
   * of this clock stop rolling.
   */
  private activeSegmentFirstTimestamp(): number | undefined {
    if (this.activeSize === 0) return undefined;
    const i = this.index.search(this.activeBase);
    if (i >= this.index.length) return undefined;
    const ts = this.batchAt(i).maxTimestamp;
    return ts < 0n ? undefined : Number(ts);
  }

  /** Largest record timestamp in a segment (-1 if it has none), from its batches' maxTimestamp. */
  private largestTimestampOf(seg: SegmentInfo): number {
    let largest = -1n;
    if (seg.sizeInBytes > 0) {
      for (const batch of recordBatches(this.storage.read(seg.baseOffset, 0, seg.sizeInBytes))) {
        const ts = batch.maxTimestamp;
        if (ts > largest) largest = ts;
      }
    }
    return Number(largest);
  }

  /**
   * Deletes a prefix of the non-active segments; the log start moves up to the first remaining segment
   * (persisted first), the epoch cache is truncated from the start, and the index and aborted
   * transactions become what a replay of the remaining segments would build, from the producer state
   * the deleted ones leave (`logStartProducers`, kept as Kafka keeps producers when the log start moves):
   * by dropping what the deleted ones held, without reading the rest (a replay reads the whole log:
   * 0.6-0.9 s per GiB left, on every deletion), or by that replay when a transaction spans the cut (see
   * `dropStateBelow`).
   */
  private deleteSegments(oldest: readonly SegmentInfo[]): void {
    if (oldest.length === 0) return;
    const segs = this.storage.segments();
    const next = segs[oldest.length]!;
    if (next.baseOffset > this.startOffset) {
      this.storage.writeLogStartOffset(next.baseOffset);
      this.startOffset = next.baseOffset;
    }
    this.setLogStartProducers(this.producerStateAt(next.baseOffset), next.baseOffset);
    for (const seg of oldest) this.storage.deleteSegment(seg.baseOffset);
    if (this.dropStateBelow(next.baseOffset)) {
      this.refreshSegments();
      this.storage.writeAbortedTxns?.(this.abortedForStorage);
    } else {
      this.rebuild();
    }
    this.epochs.truncateFromStart(this.startOffset);
    this.saveEpochs();
    this.updateHighWatermark(this.hw);
  }

  /**
   * The batches from index entry `first` on were cut from storage: truncates the index and rebuilds the
   * producer state and aborted transactions from the latest checkpoint at or below the new log end,
   * replaying only the batches after it; the result is what a replay of the whole log builds. Checkpoints
   * taken after the high watermark passed closed transactions a replay would still count as unreplicated
   * are passed over. Returns false, having changed only the index, when no checkpoint serves.
   */
  private truncateStateFrom(first: number): boolean {
    this.index.truncate(first);
    this.refreshSegments();
    const end = this.endOffset;
    const hw = this.hw < this.startOffset ? this.startOffset : this.hw > end ? end : this.hw;
    // The latest checkpoint below the end taken before the high watermark passed `hw` (a later one may
    // have forgotten closed transactions a replay with `hw` still counts unstable).
    let c = this.checkpoints.length - 1;
    while (
      c >= 0 &&
      (this.checkpoints[c]!.offset > end || this.checkpoints[c]!.state.highWatermarkFloor > hw)
    )
      c--;
    const cp = this.checkpoints[c];
    if (!cp) return false;
    this.checkpoints.length = c + 1;
    this.producers.restore(cp.state);
    this.txnIndex.dropFrom(cp.offset);
    this.abortedForStorage = this.abortedForStorage.filter((t) => t.lastOffset < cp.offset);
    this.replaying = true;
    try {
      for (let i = this.index.search(cp.offset); i < this.index.length; i++) {
        const batch = this.batchAt(i);
        if (batch.producerId >= 0n || batch.isControl) this.recordCompleted(this.producers.update(batch));
      }
    } finally {
      this.replaying = false;
    }
    this.lastControlType =
      this.index.length > 0 ? controlTypeOfStored(this.batchAt(this.index.length - 1)) : undefined;
    this.storage.writeAbortedTxns?.(this.abortedForStorage);
    return true;
  }

  /**
   * The producer state of the batches below segment base `offset` (still stored), with no closed
   * transaction left unreplicated: from the latest checkpoint at or below it, replaying the batches from
   * there (only the segments about to be deleted are read, none when a checkpoint sits at `offset`).
   */
  private producerStateAt(offset: bigint): ProducerStateCheckpoint {
    let c = this.checkpoints.length - 1;
    while (c >= 0 && this.checkpoints[c]!.offset > offset) c--;
    const cp = this.checkpoints[c];
    const m = new ProducerStateManager();
    const base = cp?.state ?? this.logStartProducers;
    if (base) m.restore(base);
    for (let i = cp ? this.index.search(cp.offset) : 0; i < this.index.length; i++) {
      const e = this.index.at(i)!;
      if (e.baseOffset >= offset) break;
      const batch = this.batchAt(i);
      if (batch.producerId >= 0n || batch.isControl) m.update(batch);
    }
    m.onHighWatermarkUpdated(offset);
    const state = m.checkpoint();
    return { ...state, unreplicated: [], highWatermarkFloor: -1n };
  }

  /** Sets the producer state of the deleted batches below segment `offset`, and has storage keep it. */
  private setLogStartProducers(state: ProducerStateCheckpoint | undefined, offset = 0n): void {
    this.logStartProducers = state;
    this.storage.writeLogStartProducerState?.(state && { offset, state });
  }

  /** The stored batch of index entry `i`. */
  private batchAt(i: number): RecordBatch {
    const e = this.index.at(i)!;
    return new RecordBatch(this.storage.read(e.segment, e.position, e.size));
  }

  /**
   * Drops the state of the batches below `cut` (the base of the first segment left), leaving what a
   * replay of the batches from `cut` on, from `logStartProducers`, builds: producers stay as they are;
   * returns false, changing nothing, when an aborted transaction spans `cut` (or was filed while one
   * did), which that replay then files again.
   */
  private dropStateBelow(cut: bigint): boolean {
    if (
      this.txnIndex.straddles(cut) ||
      this.abortedForStorage.some((t) => t.lastOffset >= cut && t.lastStableOffset < cut)
    )
      return false;
    // Producer state stays (Kafka's onLogStartOffsetIncremented), and so do the checkpoints above `cut`.
    this.checkpoints = this.checkpoints
      .filter((cp) => cp.offset >= cut)
      .map((cp) => ({ ...cp, state: ProducerStateManager.onLogStartOffsetIncremented(cp.state, cut) }));
    this.producers.onLogStartOffsetIncremented(cut);
    this.txnIndex.dropBelow(cut);
    this.abortedForStorage = this.abortedForStorage.filter((t) => t.lastOffset >= cut);
    this.index.dropBefore(this.index.search(cut));
    if (this.index.length === 0) this.lastControlType = undefined;
    return true;
  }

  /** Cuts a torn tail: the bad segment from the bad byte on, and every later segment. */
  private cutTornTail(torn: TornTail): void {
    const segs = this.storage.segments();
    const i = segs.findIndex((s) => s.baseOffset === torn.segment);
    const previous = segs[i - 1];
    if (torn.position === 0 && previous) this.storage.truncate(previous.baseOffset, previous.sizeInBytes);
    else this.storage.truncate(torn.segment, torn.position);
  }

  /** Re-reads segment bounds after a structural change; the end offset follows the last batch. */
  private refreshSegments(): void {
    const segs = this.storage.segments();
    const first = segs[0];
    const active = segs[segs.length - 1];
    // The log start is the stored one (DeleteRecords may put it inside the first segment), or the first
    // segment's base once segments below it are gone.
    const firstBase = first?.baseOffset ?? 0n;
    if (firstBase > this.startOffset) this.startOffset = firstBase;
    const lastBatch = this.index.last();
    const afterLast = lastBatch ? lastBatch.lastOffset + 1n : this.startOffset;
    const activeBase = active?.baseOffset ?? 0n;
    this.endOffset = afterLast > activeBase ? afterLast : activeBase;
    const activeChanged = this.activeCreatedMs === undefined || activeBase !== this.activeBase;
    if (activeChanged) this.activeCreatedMs = this.config.clock.now();
    this.activeBase = activeBase;
    this.activeSize = active?.sizeInBytes ?? 0;
    // A truncation that empties the active segment: its first batch is gone (Kafka resets it too).
    if (this.activeSize === 0) {
      this.activeFirstTimestamp = undefined;
      this.activeFirstTimestampUnread = false;
    }
    // An older segment active again (a truncation removed the ones after it) is not new: as a reopened
    // one, it rolls by its first batch's timestamp (Kafka loads rollingBasedTimestamp from the segment).
    // Read at the next append (Kafka's loadFirstBatchTimestamp), so a truncation reads nothing more.
    else if (activeChanged) this.activeFirstTimestampUnread = true;
  }

  /**
   * Writes the leader epoch checkpoint after the cache changed. A storage error (a full disk) does not
   * undo the change or fail the operation that made it (a leader change, a truncation, an append whose
   * bytes are in): the checkpoint stays stale until `retryEpochCheckpoint` writes it whole, and the next
   * append writes it before storing anything (it fails if that write does). So a stale checkpoint only
   * lacks entries above everything it holds (an append's new epochs, which opening rebuilds from the
   * batches; a new leader's epoch with no batch yet) or holds extra ones past the log end or below its
   * start (a truncation's), which opening drops. Kafka takes the log directory offline instead.
   */
  private saveEpochs(): void {
    try {
      this.writeEpochCheckpoint();
    } catch (error) {
      if (!(error instanceof KafkaStorageError)) throw error;
    }
  }

  /** Rewrites the leader epoch checkpoint if its last write failed; throws `KafkaStorageError` if it fails again. */
  retryEpochCheckpoint(): void {
    if (this.epochCheckpointStale) this.writeEpochCheckpoint();
  }

  private writeEpochCheckpoint(): void {
    this.epochCheckpointStale = true;
    this.storage.writeLeaderEpochCheckpoint(this.epochs.entries());
    this.epochCheckpointStale = false;
  }
}

const { ATTRIBUTES_OFFSET, BATCH_LENGTH_OFFSET, CONTROL_FLAG_MASK, LOG_OVERHEAD } = RecordBatchLayout;
/** The largest offset a double holds exactly (2^53 - 1): the fast paths keep offsets as numbers below it. */
const MAX_EXACT_OFFSET = BigInt(Number.MAX_SAFE_INTEGER);
/** True when both lists hold the same epochs at the same start offsets. */
function sameEpochs(a: readonly EpochEntry[], b: readonly EpochEntry[]): boolean {
  return (
    a.length === b.length && a.every((e, i) => e.epoch === b[i]!.epoch && e.startOffset === b[i]!.startOffset)
  );
}

/** A producer-state checkpoint at a segment start, with its size in producer entries (for retention). */
interface ProducerCheckpoint {
  offset: bigint;
  state: ProducerStateCheckpoint;
  entries: number;
}
/** Producer ids above which a roll takes no checkpoint (see `MAX_CHECKPOINT_ENTRIES` for all of them). */
const MAX_CHECKPOINT_PRODUCERS = 1_000;
/** Storage append option for a buffer the caller handed over. */
const TRANSFER = { transferOwnership: true } as const;

/** The smaller of two offsets (Math.min does not take bigints). */
function minOffset(a: bigint, b: bigint): bigint {
  if (a < b) return a;
  return b;
}

/** A batch's control type, undefined for a data batch (decoded only for the rare control batch). */
function controlTypeOfStored(batch: RecordBatch): number | undefined {
  return batch.isControl ? controlTypeOf(batch) : undefined;
}

function singleBatch(bytes: Buffer): RecordBatch {
  const batches = [...recordBatches(bytes)];
  const batch = batches[0];
  if (batches.length !== 1 || !batch || batch.sizeInBytes !== bytes.length) {
    throw new InvalidRecordError(
      `a produce must carry exactly one whole batch per partition; got ${batches.length} batch(es) in ${bytes.length} bytes`,
    );
  }
  return batch;
}

/**
 * A `FetchDataInfo` over `slices`: `records` joins them on first use only (one slice is returned as it is),
 * so readers that take slices never pay for a copy.
 */
export function fetchDataInfo(
  slices: readonly Buffer[],
  sizeInBytes: number,
  offsets: Omit<FetchDataInfo, "recordSlices" | "sizeInBytes" | "records">,
): FetchDataInfo {
  return new SlicedFetchDataInfo(slices, sizeInBytes, offsets);
}

/**
 * `FetchDataInfo` as a class: every follower and consumer fetch builds one, and an object literal with a
 * getter (and a spread) is built on V8's slow path, several times the cost of a class instance.
 */
class SlicedFetchDataInfo implements FetchDataInfo {
  private joined: Buffer | undefined;
  readonly highWatermark: bigint;
  readonly lastStableOffset: bigint;
  readonly logStartOffset: bigint;
  readonly logEndOffset: bigint;
  readonly abortedTransactions: AbortedTxn[];

  constructor(
    readonly recordSlices: readonly Buffer[],
    readonly sizeInBytes: number,
    offsets: Omit<FetchDataInfo, "recordSlices" | "sizeInBytes" | "records">,
  ) {
    this.highWatermark = offsets.highWatermark;
    this.lastStableOffset = offsets.lastStableOffset;
    this.logStartOffset = offsets.logStartOffset;
    this.logEndOffset = offsets.logEndOffset;
    this.abortedTransactions = offsets.abortedTransactions;
  }

  get records(): Buffer {
    if (this.joined === undefined) {
      const slices = this.recordSlices;
      this.joined = slices.length === 1 ? slices[0]! : Buffer.concat(slices as Buffer[], this.sizeInBytes);
    }
    return this.joined;
  }
}

/**
 * The end (exclusive) of the run of batches from `start` whose last offsets lie at most 2^31 - 1 above
 * the base offset of batch `start`: what one segment rolled at that base can index. At least one batch.
 */
function segmentRunEnd(batches: readonly RecordBatch[], bases: readonly bigint[], start: number): number {
  const base = bases[start]!;
  let end = start + 1;
  while (
    end < batches.length &&
    bases[end]! + BigInt(batches[end]!.lastOffsetDelta) - base <= MAX_RELATIVE_OFFSET
  )
    end++;
  return end;
}
