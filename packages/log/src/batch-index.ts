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

/**
 * The in-memory offset index of a log: every batch in offset order (Kafka keeps a sparse index per
 * segment; a dense one is simpler and small: one entry per batch).
 */
export class BatchIndex {
  private entries: BatchEntry[] = [];

  /** Number of batches. */
  get length(): number {
    return this.entries.length;
  }

  /** The entry at `i`. */
  at(i: number): BatchEntry | undefined {
    return this.entries[i];
  }

  /** The last entry. */
  last(): BatchEntry | undefined {
    return this.entries[this.entries.length - 1];
  }

  /** Adds an entry above every existing one. */
  push(entry: BatchEntry): void {
    this.entries.push(entry);
  }

  /** Index of the first batch whose last offset is >= `offset` (the batch holding it, or the next one). */
  search(offset: bigint): number {
    let lo = 0;
    let hi = this.entries.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.entries[mid]!.lastOffset < offset) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Drops entries from index `i` on. */
  truncate(i: number): void {
    this.entries.length = Math.min(this.entries.length, i);
  }

  /** Drops every entry. */
  clear(): void {
    this.entries = [];
  }

  /** Entries of segment `segment`. */
  ofSegment(segment: bigint): BatchEntry[] {
    return this.entries.filter((e) => e.segment === segment);
  }
}
