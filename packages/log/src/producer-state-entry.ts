/** Where one idempotent batch landed: what a retried produce of the same sequences gets back. */
export interface BatchMetadata {
  firstSeq: number;
  lastSeq: number;
  firstOffset: bigint;
  lastOffset: bigint;
}

/** Kafka's ProducerStateEntry: what the partition remembers about one producer id. */
export interface ProducerStateEntry {
  producerId: bigint;
  producerEpoch: number;
  /** The last (at most `MAX_BATCHES_PER_PRODUCER`) idempotent batches of this epoch, oldest first. */
  batchMetadata: BatchMetadata[];
  /** First offset of the producer's open transaction, if one is open. */
  currentTxnFirstOffset: bigint | undefined;
  /** maxTimestamp of the producer's last batch (from the header, so replay gives the same value). */
  lastTimestamp: bigint;
}

/** A transaction closed by a marker (or by MIRROR_PID_RESET, which closes it as aborted). */
export interface CompletedTxn {
  producerId: bigint;
  firstOffset: bigint;
  /** Offset of the marker that closed it. */
  lastOffset: bigint;
  isAborted: boolean;
}

/** Kafka keeps the last five batches per producer for duplicate detection. */
export const MAX_BATCHES_PER_PRODUCER = 5;
