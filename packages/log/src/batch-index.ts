/** Where one batch of the log is stored: its offsets and its byte range in a segment. */
export interface BatchEntry {
  baseOffset: bigint;
  lastOffset: bigint;
  /** Base offset of the segment holding it. */
  segment: bigint;
  /** Byte position inside the segment. */
  position: number;
  size: number;
}

/** Offsets up to this fit a double exactly (2^53 - 1); Kafka offsets stay far below it in practice. */
const MAX_COMPACT = Number.MAX_SAFE_INTEGER;

/**
 * The in-memory offset index of a log: every batch in offset order (Kafka keeps a sparse index per
 * segment; a dense one is simpler and small: one entry per batch).
 *
 * It is on the append and fetch path of every batch, so it stores numbers in typed-array columns (no
 * object and no bigint per batch) as long as every offset fits a double exactly (below 2^53, i.e. always
 * in practice). An offset beyond that switches the index to one `BatchEntry` object per batch, which
 * holds any int64; the answers are the same either way.
 */
export class BatchIndex {
  private count = 0;
  private baseCol = new Float64Array(64);
  private lastCol = new Float64Array(64);
  private segCol = new Float64Array(64);
  private posCol = new Float64Array(64);
  private lenCol = new Float64Array(64);
  /** Set once an offset does not fit a double: the entries as objects from then on (until `clear`). */
  private wide: BatchEntry[] | undefined;

  /** Number of batches. */
  get length(): number {
    return this.wide ? this.wide.length : this.count;
  }

  /** True while the entries are held as numbers (`lastOffsetAt` and friends may be used). */
  get compact(): boolean {
    return this.wide === undefined;
  }

  /** The entry at `i`. */
  at(i: number): BatchEntry | undefined {
    if (this.wide) return this.wide[i];
    if (i < 0 || i >= this.count) return undefined;
    return {
      baseOffset: BigInt(this.baseCol[i]!),
      lastOffset: BigInt(this.lastCol[i]!),
      segment: BigInt(this.segCol[i]!),
      position: this.posCol[i]!,
      size: this.lenCol[i]!,
    };
  }

  /** The last entry. */
  last(): BatchEntry | undefined {
    return this.at(this.length - 1);
  }

  /** Last offset of entry `i`, as a number (only while `compact`). */
  lastOffsetAt(i: number): number {
    return this.lastCol[i]!;
  }

  /** Segment base offset of entry `i`, as a number (only while `compact`). */
  segmentAt(i: number): number {
    return this.segCol[i]!;
  }

  /** Byte size of entry `i` (only while `compact`). */
  sizeAt(i: number): number {
    return this.lenCol[i]!;
  }

  /** Byte position of entry `i` in its segment (only while `compact`). */
  positionAt(i: number): number {
    return this.posCol[i]!;
  }

  /** Adds an entry above every existing one. */
  push(entry: BatchEntry): void {
    if (!this.wide && entry.lastOffset <= BigInt(MAX_COMPACT) && entry.baseOffset >= 0n) {
      this.pushNumbers(
        Number(entry.baseOffset),
        Number(entry.lastOffset),
        Number(entry.segment),
        entry.position,
        entry.size,
      );
      return;
    }
    this.widen().push(entry);
  }

  /**
   * Adds an entry given as numbers (the append path). The caller guarantees the offsets are exact, i.e.
   * safe integers; `compact` must be true.
   */
  pushNumbers(baseOffset: number, lastOffset: number, segment: number, position: number, size: number): void {
    if (this.wide) {
      this.wide.push({
        baseOffset: BigInt(baseOffset),
        lastOffset: BigInt(lastOffset),
        segment: BigInt(segment),
        position,
        size,
      });
      return;
    }
    if (this.count === this.baseCol.length) this.grow();
    const i = this.count++;
    this.baseCol[i] = baseOffset;
    this.lastCol[i] = lastOffset;
    this.segCol[i] = segment;
    this.posCol[i] = position;
    this.lenCol[i] = size;
  }

  /** Index of the first batch whose last offset is >= `offset` (the batch holding it, or the next one). */
  search(offset: bigint): number {
    if (this.wide) {
      const entries = this.wide;
      let lo = 0;
      let hi = entries.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (entries[mid]!.lastOffset < offset) lo = mid + 1;
        else hi = mid;
      }
      return lo;
    }
    // Every stored offset is a safe integer: an offset beyond them all compares the same as a double.
    const target = offset > BigInt(MAX_COMPACT) ? Number.POSITIVE_INFINITY : Number(offset);
    const lastCol = this.lastCol;
    let lo = 0;
    let hi = this.count;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (lastCol[mid]! < target) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Drops entries from index `i` on. */
  truncate(i: number): void {
    if (this.wide) this.wide.length = Math.min(this.wide.length, i);
    else this.count = Math.max(0, Math.min(this.count, i));
  }

  /** Drops entries below index `i` (the oldest segments were deleted). */
  dropBefore(i: number): void {
    if (i <= 0) return;
    if (this.wide) {
      this.wide.splice(0, i);
      return;
    }
    const n = Math.min(i, this.count);
    for (const col of [this.baseCol, this.lastCol, this.segCol, this.posCol, this.lenCol])
      col.copyWithin(0, n, this.count);
    this.count -= n;
  }

  /** Drops every entry. */
  clear(): void {
    this.wide = undefined;
    this.count = 0;
    if (this.baseCol.length > 64) {
      this.baseCol = new Float64Array(64);
      this.lastCol = new Float64Array(64);
      this.segCol = new Float64Array(64);
      this.posCol = new Float64Array(64);
      this.lenCol = new Float64Array(64);
    }
  }

  /** Entries of segment `segment`. */
  ofSegment(segment: bigint): BatchEntry[] {
    const out: BatchEntry[] = [];
    for (let i = 0; i < this.length; i++) {
      const e = this.at(i)!;
      if (e.segment === segment) out.push(e);
    }
    return out;
  }

  /** Switches to one object per entry (an offset beyond 2^53); returns the entries. */
  private widen(): BatchEntry[] {
    if (!this.wide) {
      const entries: BatchEntry[] = [];
      for (let i = 0; i < this.count; i++) entries.push(this.at(i)!);
      this.wide = entries;
      this.count = 0;
    }
    return this.wide;
  }

  private grow(): void {
    const size = this.baseCol.length * 2;
    const bigger = (from: Float64Array) => {
      const to = new Float64Array(size);
      to.set(from);
      return to;
    };
    this.baseCol = bigger(this.baseCol);
    this.lastCol = bigger(this.lastCol);
    this.segCol = bigger(this.segCol);
    this.posCol = bigger(this.posCol);
    this.lenCol = bigger(this.lenCol);
  }
}
