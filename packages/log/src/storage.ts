import type { EpochEntry } from "./leader-epoch-cache";

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
 * Durability: when `append`, `roll`, `truncate`, `reset`, `replaceSegment` or
 * `writeLeaderEpochCheckpoint` returns, the change is durable (for file storage: written and fsynced).
 */
export interface LogStorage {
  /** The segments, by ascending base offset; empty for a brand new log. */
  segments(): readonly SegmentInfo[];
  /**
   * `length` bytes of segment `baseOffset` from `position`. The returned buffer must not be written to;
   * memory storage returns a view (zero-copy), file storage a fresh copy.
   */
  read(baseOffset: bigint, position: number, length: number): Buffer;
  /** Appends whole batches to the active (last) segment. */
  append(bytes: Buffer): void;
  /** Starts a new, empty active segment named `baseOffset` (above every offset stored so far). */
  roll(baseOffset: bigint): void;
  /** Cuts segment `baseOffset` to `position` bytes and deletes every later segment. */
  truncate(baseOffset: bigint, position: number): void;
  /** Deletes every segment and starts one empty segment named `baseOffset`. */
  reset(baseOffset: bigint): void;
  /** Replaces the contents of segment `baseOffset` atomically (compaction). */
  replaceSegment(baseOffset: bigint, bytes: Buffer): void;
  /** The stored leader-epoch checkpoint, or undefined if there is none. */
  readLeaderEpochCheckpoint(): EpochEntry[] | undefined;
  /** Replaces the leader-epoch checkpoint. */
  writeLeaderEpochCheckpoint(entries: readonly EpochEntry[]): void;
  /** Releases resources (file descriptors); the storage is not used afterwards. */
  close(): void;
}
