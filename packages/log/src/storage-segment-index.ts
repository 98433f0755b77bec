import { RecordBatchLayout } from "@cluster-mirror/protocol";

const {
  BASE_OFFSET_OFFSET,
  BATCH_LENGTH_OFFSET,
  LAST_OFFSET_DELTA_OFFSET,
  LOG_OVERHEAD,
  MAX_TIMESTAMP_OFFSET,
} = RecordBatchLayout;

/** Kafka's index.interval.bytes default: an offset index entry at most every 4096 bytes of batches. */
export const INDEX_INTERVAL_BYTES = 4096;
/** Kafka's OffsetIndex entry: 4-byte offset relative to the segment base, 4-byte file position. */
export const OFFSET_INDEX_ENTRY_SIZE = 8;
/** Kafka's TimeIndex entry: 8-byte timestamp, 4-byte relative offset. */
export const TIME_INDEX_ENTRY_SIZE = 12;
/** Kafka's RecordBatch.NO_TIMESTAMP, the time index's "nothing yet". */
const NO_TIMESTAMP = -1n;
/**
 * Kafka's largest offset relative to a segment's base (the indexes store it in 4 bytes): the log rolls a
 * new segment before an append whose last offset lies further above the active segment's base.
 */
export const MAX_RELATIVE_OFFSET = 0x7fffffffn;
/** Bytes of a batch header the index needs: up to and including maxTimestamp. */
export const INDEX_HEADER_BYTES = MAX_TIMESTAMP_OFFSET + 8;

/** The header fields of one batch that its segment's indexes are built from. */
export interface IndexedBatch {
  /** Byte position of the batch in its segment. */
  position: number;
  baseOffset: bigint;
  lastOffset: bigint;
  maxTimestamp: bigint;
  sizeInBytes: number;
}

/** Reads the index fields of the batch at `position` of `bytes` (a whole batch, or at least its header). */
export function indexedBatchAt(bytes: Buffer, at: number, position: number): IndexedBatch {
  const baseOffset = bytes.readBigInt64BE(at + BASE_OFFSET_OFFSET);
  return {
    position,
    baseOffset,
    lastOffset: baseOffset + BigInt(bytes.readInt32BE(at + LAST_OFFSET_DELTA_OFFSET)),
    maxTimestamp: bytes.readBigInt64BE(at + MAX_TIMESTAMP_OFFSET),
    sizeInBytes: bytes.readInt32BE(at + BATCH_LENGTH_OFFSET) + LOG_OVERHEAD,
  };
}

/** Every whole batch of `bytes` (concatenated batches, starting at segment position `start`), in order. */
export function* indexedBatches(bytes: Buffer, start = 0): Generator<IndexedBatch> {
  let at = 0;
  while (at + INDEX_HEADER_BYTES <= bytes.length) {
    const batch = indexedBatchAt(bytes, at, start + at);
    if (batch.sizeInBytes < INDEX_HEADER_BYTES || at + batch.sizeInBytes > bytes.length) return;
    yield batch;
    at += batch.sizeInBytes;
  }
}

/** Bytes to add to a segment's `.index` and `.timeindex` files. */
export interface IndexAppend {
  offsetIndex: Buffer;
  timeIndex: Buffer;
}

/**
 * Builds one segment's offset and time index as Kafka's `LogSegment.recover` does, batch by batch: an
 * offset index entry (the batch's last offset, its position) for the first batch that starts more than
 * `index.interval.bytes` after the previous entry's batch, and with it a time index entry (the largest
 * timestamp so far, the last offset of the batch that holds it) when that timestamp grew. A segment that
 * stops being the active one gets a last time index entry for its largest timestamp (Kafka's
 * `onBecomeInactiveSegment`). Both indexes are thus a function of the segment's bytes (and of whether it is
 * still active), whatever way the bytes were appended: recovery, truncation and compaction rebuild them
 * with the same result, and Kafka's `DumpLogSegments --verify-index-only` accepts them.
 *
 * An offset too far above the segment base for a 4-byte relative offset ends the indexing of the segment
 * (the log rolls before such an append, as Kafka; a segment written before it did is indexed up to there,
 * and an index may always omit entries).
 */
export class SegmentIndexBuilder {
  /** Entries written so far. */
  offsetEntries = 0;
  timeEntries = 0;
  private lastIndexedPosition = 0;
  private maxTimestamp = NO_TIMESTAMP;
  private offsetOfMaxTimestamp: bigint;
  private lastTimeIndexTimestamp = NO_TIMESTAMP;
  private overflowed = false;

  constructor(
    /** The segment's base offset. */
    readonly baseOffset: bigint,
    private readonly intervalBytes: number = INDEX_INTERVAL_BYTES,
  ) {
    this.offsetOfMaxTimestamp = baseOffset;
  }

  /** Takes the next batch of the segment; returns the index entries it adds. */
  add(batch: IndexedBatch): IndexAppend | undefined {
    if (this.overflowed) return undefined;
    if (batch.lastOffset - this.baseOffset > MAX_RELATIVE_OFFSET) {
      this.overflowed = true;
      return undefined;
    }
    if (batch.maxTimestamp > this.maxTimestamp) {
      this.maxTimestamp = batch.maxTimestamp;
      this.offsetOfMaxTimestamp = batch.lastOffset;
    }
    if (batch.position - this.lastIndexedPosition <= this.intervalBytes) return undefined;
    this.lastIndexedPosition = batch.position;
    const offsetIndex = Buffer.alloc(OFFSET_INDEX_ENTRY_SIZE);
    offsetIndex.writeInt32BE(Number(batch.lastOffset - this.baseOffset), 0);
    offsetIndex.writeInt32BE(batch.position, 4);
    this.offsetEntries++;
    return { offsetIndex, timeIndex: this.maybeTimeEntry() };
  }

  /** The last time index entry of a segment that is no longer active (empty if it adds nothing). */
  finish(): Buffer {
    return this.overflowed ? Buffer.alloc(0) : this.maybeTimeEntry();
  }

  /** Kafka's TimeIndex.maybeAppend: an entry only when the largest timestamp grew. */
  private maybeTimeEntry(): Buffer {
    if (this.maxTimestamp <= this.lastTimeIndexTimestamp) return Buffer.alloc(0);
    this.lastTimeIndexTimestamp = this.maxTimestamp;
    const entry = Buffer.alloc(TIME_INDEX_ENTRY_SIZE);
    entry.writeBigInt64BE(this.maxTimestamp, 0);
    entry.writeInt32BE(Number(this.offsetOfMaxTimestamp - this.baseOffset), 8);
    this.timeEntries++;
    return entry;
  }
}

/** A segment's indexes, built from its bytes, and the builder to continue them when it stays active. */
export interface BuiltIndexes extends IndexAppend {
  builder: SegmentIndexBuilder;
}

/** Builds the indexes of a whole segment from its bytes (`active`: no closing time index entry). */
export function buildSegmentIndexes(baseOffset: bigint, bytes: Buffer, active: boolean): BuiltIndexes {
  const builder = new SegmentIndexBuilder(baseOffset);
  const offsets: Buffer[] = [];
  const times: Buffer[] = [];
  for (const batch of indexedBatches(bytes)) {
    const added = builder.add(batch);
    if (added) {
      offsets.push(added.offsetIndex);
      times.push(added.timeIndex);
    }
  }
  if (!active) times.push(builder.finish());
  return { offsetIndex: Buffer.concat(offsets), timeIndex: Buffer.concat(times), builder };
}
