import type { TopicPartition, TransactionMetadata } from "./transaction-coordinator";

/**
 * What a cluster's transactions need to survive a restart (Kafka keeps it in `__transaction_state`): each
 * transactional id's state, and the end markers held back from mirror partitions.
 */
export interface TransactionState {
  transactions: TransactionMetadata[];
  heldMarkers: HeldTxnMarker[];
}

/**
 * A transaction's end marker that could not go on its partition's log when its coordinator wrote it: the
 * partition had become a mirror partition again (a re-add or failback), whose log must stay a copy of its
 * source's. Written once the partition is writable again, if the transaction is still open there (the
 * re-add was cancelled before its truncation); dropped once the truncation cut the transaction.
 */
export interface HeldTxnMarker {
  partition: TopicPartition;
  /** The id of the partition's topic when it was held: a topic created again under the name is another. */
  topicId: string;
  producerId: bigint;
  producerEpoch: number;
  coordinatorEpoch: number;
  result: "COMMIT" | "ABORT";
  /** Where the transaction it ends starts on the partition's log (the open transaction it was held for). */
  firstOffset: bigint;
  /**
   * The controller's metadata log length when it was held: a cut of the partition recorded at or after
   * it (a `ReplicaTruncation` record, kept as a `logRewrites` id) dropped it, even one a restart replayed
   * before the marker was loaded.
   */
  heldAt?: number;
}

/** The markers a cluster holds back from read-only mirror partitions, one per open transaction. */
export class HeldTxnMarkers {
  private readonly held = new Map<string, HeldTxnMarker>();
  /** Hears every change (the whole list after it), e.g. to store it. */
  onChange: ((markers: HeldTxnMarker[]) => void) | undefined;

  hold(marker: HeldTxnMarker): void {
    this.held.set(keyOf(marker), marker);
    this.onChange?.(this.all());
  }

  release(marker: HeldTxnMarker): void {
    if (this.held.delete(keyOf(marker))) this.onChange?.(this.all());
  }

  /** Loads stored markers (after a restart), adding them to those held. */
  load(markers: readonly HeldTxnMarker[]): void {
    for (const m of markers) this.held.set(keyOf(m), { ...m, partition: { ...m.partition } });
  }

  /** Every held marker (a copy of the list). */
  all(): HeldTxnMarker[] {
    return [...this.held.values()];
  }

  /** The markers held for one partition. */
  on(tp: TopicPartition): HeldTxnMarker[] {
    return this.all().filter((m) => m.partition.topic === tp.topic && m.partition.partition === tp.partition);
  }
}

function keyOf(m: HeldTxnMarker): string {
  return `${m.partition.topic}\u0000${m.partition.partition}\u0000${m.producerId}\u0000${m.firstOffset}`;
}
