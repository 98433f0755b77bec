/** An aborted transaction as a READ_COMMITTED fetch reports it. */
export interface AbortedTxn {
  producerId: bigint;
  firstOffset: bigint;
  /** Offset of the ABORT marker (or MIRROR_PID_RESET) that closed it. */
  lastOffset: bigint;
}

/**
 * Kafka's TransactionIndex, for the whole log: aborted transactions in marker order. A READ_COMMITTED
 * consumer uses it to skip aborted records.
 */
export class TransactionIndex {
  private aborted: AbortedTxn[] = [];

  /** Records an aborted transaction (markers arrive in offset order). */
  add(txn: AbortedTxn): void {
    this.aborted.push({ ...txn });
  }

  /** Aborted transactions overlapping [fetchOffset, upperBoundOffset). */
  collect(fetchOffset: bigint, upperBoundOffset: bigint): AbortedTxn[] {
    return this.aborted
      .filter((t) => t.lastOffset >= fetchOffset && t.firstOffset < upperBoundOffset)
      .map((t) => ({ ...t }));
  }

  /** True if `offset` of `producerId` lies in an aborted transaction. */
  isAborted(producerId: bigint, offset: bigint): boolean {
    return this.aborted.some(
      (t) => t.producerId === producerId && t.firstOffset <= offset && offset <= t.lastOffset,
    );
  }

  /** Every entry, oldest first (copies). */
  all(): AbortedTxn[] {
    return this.aborted.map((t) => ({ ...t }));
  }

  /** True if an aborted transaction begins below `offset` and ends at or above it. */
  straddles(offset: bigint): boolean {
    return this.aborted.some((t) => t.firstOffset < offset && t.lastOffset >= offset);
  }

  /** Drops the transactions whose marker lies below `offset` (their segments were deleted). */
  dropBelow(offset: bigint): void {
    if (this.aborted.length > 0 && this.aborted[0]!.lastOffset < offset)
      this.aborted = this.aborted.filter((t) => t.lastOffset >= offset);
  }

  /** Drops the transactions whose marker lies at or above `offset` (truncated away). */
  dropFrom(offset: bigint): void {
    const last = this.aborted[this.aborted.length - 1];
    if (last && last.lastOffset >= offset) this.aborted = this.aborted.filter((t) => t.lastOffset < offset);
  }

  /** Removes every entry. */
  clear(): void {
    this.aborted = [];
  }
}
