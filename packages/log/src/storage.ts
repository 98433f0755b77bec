import type { EpochEntry } from "./leader-epoch-cache";
import type { ProducerStateEntry } from "./producer-state-entry";
import type { ProducerStateCheckpoint } from "./producer-state-manager";
import type { IndexedAbortedTxn } from "./storage-transaction-index";

/** The producer state of the batches deleted below segment `offset` (see `writeLogStartProducerState`). */
export interface LogStartProducerState {
  readonly offset: bigint;
  readonly state: ProducerStateCheckpoint;
}

/** One segment as storage knows it: where it starts and how many bytes it holds. */
export interface SegmentInfo {
  /** Offset the segment is named after: no batch in it starts below this. */
  readonly baseOffset: bigint;
  /** Bytes of raw batches in the segment. */
  readonly sizeInBytes: number;
}

/**
 * Where a partition log keeps its bytes: an ordered list of segments, each a concatenation of raw record
 * batches (Kafka's segment format), the last one being the active segment that appends go to. Storage
 * knows bytes and positions only; offsets, validation and recovery are the log's (`PartitionLog`).
 *
 * Durability: when `append`, `roll`, `truncate`, `reset`, `replaceSegment`, `deleteSegment`,
 * `writeLeaderEpochCheckpoint` or `writeLogStartOffset` returns, the change is durable (for file storage:
 * written and fsynced).
 */
export interface LogStorage {
  /** The segments, by ascending base offset; empty for a brand new log. */
  segments(): readonly SegmentInfo[];
  /**
   * `length` bytes of segment `baseOffset` from `position`. The returned buffer must not be written to;
   * memory storage returns a view (zero-copy), file storage a fresh copy.
   */
  read(baseOffset: bigint, position: number, length: number): Buffer;
  /**
   * The same bytes as `read`, as slices that concatenate to them, each starting at a batch boundary when
   * `position` is one: memory storage returns views of the stored chunks (no copy, whatever the length),
   * file storage one fresh buffer. Kafka sends a file range without copying it; this is the in-memory
   * equivalent for fetches that span many appends.
   */
  readSlices(baseOffset: bigint, position: number, length: number): Buffer[];
  /**
   * Appends whole batches to the active (last) segment: one buffer, or slices appended in order (each
   * holding whole batches). By default the bytes are copied (file storage writes them out, with one fsync;
   * memory storage copies them once), so the caller may reuse them. With `transferOwnership: true` the
   * caller hands the buffers over: it promises never to write to them again, and memory storage keeps
   * them as they are (views, no copy). File storage ignores the flag.
   */
  append(bytes: Buffer | readonly Buffer[], options?: { transferOwnership?: boolean }): void;
  /**
   * True when `append` keeps the buffers it is given (memory storage): a log that must copy fetched bytes
   * then makes the copy itself, fused with its CRC check, and hands the copy over. False or unset (file
   * storage writes the bytes out): the log checks the caller's bytes and never copies them.
   */
  readonly keepsAppendedBuffers?: boolean;
  /** Starts a new, empty active segment named `baseOffset` (above every offset stored so far). */
  roll(baseOffset: bigint): void;
  /** Cuts segment `baseOffset` to `position` bytes and deletes every later segment. */
  truncate(baseOffset: bigint, position: number): void;
  /** Deletes every segment and starts one empty segment named `baseOffset`. */
  reset(baseOffset: bigint): void;
  /** Replaces the contents of segment `baseOffset` atomically (compaction). */
  replaceSegment(baseOffset: bigint, bytes: Buffer): void;
  /** Deletes segment `baseOffset`, which must not be the active (last) one (retention, DeleteRecords). */
  deleteSegment(baseOffset: bigint): void;
  /** The stored leader-epoch checkpoint, or undefined if there is none. */
  readLeaderEpochCheckpoint(): EpochEntry[] | undefined;
  /** Replaces the leader-epoch checkpoint. */
  writeLeaderEpochCheckpoint(entries: readonly EpochEntry[]): void;
  /** The stored log start offset, or undefined if none was ever written (then the first segment's base). */
  readLogStartOffset(): bigint | undefined;
  /** Replaces the stored log start offset (file storage: Kafka's `log-start-offset-checkpoint`). */
  writeLogStartOffset(offset: bigint): void;
  /**
   * Kafka's producer state snapshot at `offset` (file storage: `<offset>.snapshot`), taken when a segment
   * is rolled (named by the new segment) and when the log closes. Optional, and a failure to write it is
   * not an error: the log reads back only the one named by its first segment
   * (`readLogStartProducerState`).
   */
  writeProducerSnapshot?(offset: bigint, producers: readonly ProducerStateEntry[]): void;
  /**
   * Keeps the producer state the deleted batches below segment `offset` left (Kafka's producer snapshot
   * at the log start, which carries the producers retention or DeleteRecords deleted every batch of);
   * undefined: none. Memory storage keeps it as it is; file storage as Kafka does, in the producer snapshot
   * named by that segment (each producer with its last batch only). Storage without it makes a reopened
   * log forget those producers.
   */
  writeLogStartProducerState?(saved: LogStartProducerState | undefined): void;
  /** What `writeLogStartProducerState` kept, if anything. */
  readLogStartProducerState?(): LogStartProducerState | undefined;
  /**
   * Every aborted transaction of the log, in marker order (file storage: each in the `.txnindex` of the
   * segment holding its marker). Called when the log rebuilt its state (open, truncation, retention,
   * compaction). Optional derived data, as `writeProducerSnapshot`.
   */
  writeAbortedTxns?(txns: readonly IndexedAbortedTxn[]): void;
  /** One more aborted transaction, whose marker was just appended. Optional derived data. */
  appendAbortedTxn?(txn: IndexedAbortedTxn): void;
  /** Releases resources (file descriptors); the storage is not used afterwards. */
  close(): void;
}
