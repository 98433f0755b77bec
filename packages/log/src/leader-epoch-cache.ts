/** One leader-epoch cache entry: the first offset written in `epoch`. */
export interface EpochEntry {
  epoch: number;
  startOffset: bigint;
}

/** The answer to OffsetsForLeaderEpoch: the largest known epoch <= the requested one and where it ends. */
export interface EpochEndOffset {
  epoch: number;
  endOffset: bigint;
}

/** Kafka's UNDEFINED_EPOCH. */
export const UNDEFINED_EPOCH = -1;
/** Kafka's UNDEFINED_EPOCH_OFFSET. */
export const UNDEFINED_EPOCH_OFFSET = -1n;

/**
 * Kafka's LeaderEpochFileCache without the file: an ordered list of (epoch, startOffset) with strictly
 * increasing epochs and start offsets. Persisting it is the owner's job (see `leader-epoch-checkpoint.ts`).
 */
export class LeaderEpochCache {
  private epochs: EpochEntry[] = [];

  /** Starts with `entries` (assumed ordered, as read from a checkpoint). */
  constructor(entries: readonly EpochEntry[] = []) {
    for (const e of entries) this.assign(e.epoch, e.startOffset);
  }

  /** A copy of the entries, oldest first. */
  entries(): EpochEntry[] {
    return this.epochs.map((e) => ({ ...e }));
  }

  /** The latest epoch, or undefined when the cache is empty. */
  get latestEpoch(): number | undefined {
    return this.epochs[this.epochs.length - 1]?.epoch;
  }

  /**
   * The latest epoch starting below `offset` (undefined: none). With the log end as `offset`, the epoch of
   * the log's last offset: entries starting at the log end are epochs a leader recorded and never wrote in.
   */
  latestEpochBefore(offset: bigint): number | undefined {
    for (let i = this.epochs.length - 1; i >= 0; i--) {
      const e = this.epochs[i]!;
      if (e.startOffset < offset) return e.epoch;
    }
    return undefined;
  }

  /** The earliest entry, if any. */
  get earliestEntry(): EpochEntry | undefined {
    const e = this.epochs[0];
    return e ? { ...e } : undefined;
  }

  /**
   * Records that `epoch` starts at `startOffset`, as Kafka's `assign`: a no-op when it is the latest epoch
   * already starting at or before that offset; otherwise entries with epoch >= `epoch` or start offset >=
   * `startOffset` are removed first, so the cache stays monotonic. Returns true if the cache changed.
   */
  assign(epoch: number, startOffset: bigint): boolean {
    if (epoch < 0 || startOffset < 0n) return false;
    const last = this.epochs[this.epochs.length - 1];
    if (last && last.epoch === epoch && startOffset >= last.startOffset) return false;
    this.epochs = this.epochs.filter((e) => e.epoch < epoch && e.startOffset < startOffset);
    this.epochs.push({ epoch, startOffset });
    return true;
  }

  /**
   * Kafka's `endOffsetFor` (KIP-101, KIP-279):
   * - `UNDEFINED_EPOCH` requested, or an epoch above every known one, or an empty cache: (-1, -1);
   * - the latest epoch: (that epoch, `logEndOffset`);
   * - an epoch below the first entry: (the requested epoch, start offset of the first entry), as Kafka
   *   answers so a follower truncates to where the leader's known history begins;
   * - otherwise: (the largest known epoch <= requested, start offset of the next higher known epoch).
   */
  endOffsetFor(requestedEpoch: number, logEndOffset: bigint): EpochEndOffset {
    const undefinedAnswer = { epoch: UNDEFINED_EPOCH, endOffset: UNDEFINED_EPOCH_OFFSET };
    if (requestedEpoch === UNDEFINED_EPOCH) return undefinedAnswer;
    if (this.latestEpoch === requestedEpoch) return { epoch: requestedEpoch, endOffset: logEndOffset };
    const higherIndex = this.epochs.findIndex((e) => e.epoch > requestedEpoch);
    const higher = this.epochs[higherIndex];
    if (higher === undefined) return undefinedAnswer;
    const floor = this.epochs[higherIndex - 1];
    if (floor === undefined) return { epoch: requestedEpoch, endOffset: higher.startOffset };
    return { epoch: floor.epoch, endOffset: higher.startOffset };
  }

  /** Removes entries starting at or after `endOffset` (the log was truncated to it). True if changed. */
  truncateFromEnd(endOffset: bigint): boolean {
    const before = this.epochs.length;
    if (endOffset < 0n) return false;
    this.epochs = this.epochs.filter((e) => e.startOffset < endOffset);
    return this.epochs.length !== before;
  }

  /**
   * Removes entries wholly below `startOffset` (the log start moved up): the last entry starting at or
   * before it is kept with its start moved to `startOffset`, as Kafka does. True if changed.
   */
  truncateFromStart(startOffset: bigint): boolean {
    let lastBefore = -1;
    for (let i = 0; i < this.epochs.length; i++)
      if (this.epochs[i]!.startOffset <= startOffset) lastBefore = i;
    if (lastBefore < 0) return false;
    const kept = this.epochs[lastBefore]!;
    const changed = lastBefore > 0 || kept.startOffset !== startOffset;
    this.epochs = [{ epoch: kept.epoch, startOffset }, ...this.epochs.slice(lastBefore + 1)];
    return changed;
  }

  /** Removes every entry. */
  clear(): void {
    this.epochs = [];
  }
}
