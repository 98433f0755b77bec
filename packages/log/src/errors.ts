import { KafkaError } from "@cluster-mirror/protocol";

/** A fetch offset below the log start offset or above the log end offset (Kafka's OFFSET_OUT_OF_RANGE, 1). */
export class OffsetOutOfRangeError extends KafkaError {
  constructor(message: string) {
    super("OFFSET_OUT_OF_RANGE", 1, false, message);
  }
}

/** A produce whose sequence does not follow the producer's last one (OUT_OF_ORDER_SEQUENCE_NUMBER, 45). */
export class OutOfOrderSequenceError extends KafkaError {
  constructor(message: string) {
    super("OUT_OF_ORDER_SEQUENCE_NUMBER", 45, false, message);
  }
}

/** A produce or marker from a producer epoch older than the one on record (INVALID_PRODUCER_EPOCH, 47). */
export class InvalidProducerEpochError extends KafkaError {
  constructor(message: string) {
    super("INVALID_PRODUCER_EPOCH", 47, false, message);
  }
}

/** A transactional state violation, e.g. a plain write inside an open transaction (INVALID_TXN_STATE, 48). */
export class InvalidTxnStateError extends KafkaError {
  constructor(message: string) {
    super("INVALID_TXN_STATE", 48, false, message);
  }
}

/** A non-zero sequence from a producer id the partition has no state for (UNKNOWN_PRODUCER_ID, 59). */
export class UnknownProducerIdError extends KafkaError {
  constructor(message: string) {
    super("UNKNOWN_PRODUCER_ID", 59, false, message);
  }
}

/** A leader append stamped with an epoch older than the partition's latest epoch (FENCED_LEADER_EPOCH, 74). */
export class FencedLeaderEpochError extends KafkaError {
  constructor(message: string) {
    super("FENCED_LEADER_EPOCH", 74, true, message);
  }
}

/** A batch the leader refuses as a whole, e.g. a control batch from a client (INVALID_RECORD, 87). */
export class InvalidRecordError extends KafkaError {
  constructor(message: string) {
    super("INVALID_RECORD", 87, false, message);
  }
}

/**
 * An as-is append whose first offset is below the log end offset, or whose batches are not in increasing
 * offset order. Kafka has no wire code for it (UnexpectedAppendOffsetException / OffsetsOutOfOrderException
 * are internal), so the code is -1. The fix is on the caller's side: fetch from `logEndOffset`, or truncate
 * the log to `firstOffset` first if the data diverged.
 */
export class UnexpectedAppendOffsetError extends KafkaError {
  /** The first offset of the rejected append. */
  readonly firstOffset: bigint;
  /** The log end offset when the append was refused. */
  readonly logEndOffset: bigint;
  /**
   * When the first batch begins below the log end: that batch's last offset (undefined for batches out of
   * order, where `firstOffset` is a later batch's).
   */
  readonly firstBatchLastOffset: bigint | undefined;

  constructor(message: string, firstOffset: bigint, logEndOffset: bigint, firstBatchLastOffset?: bigint) {
    super("UNEXPECTED_APPEND_OFFSET", -1, false, message);
    this.firstOffset = firstOffset;
    this.logEndOffset = logEndOffset;
    this.firstBatchLastOffset = firstBatchLastOffset;
  }
}

/** A storage failure: a file could not be read, written or synced (KAFKA_STORAGE_ERROR, 56). */
export class KafkaStorageError extends KafkaError {
  constructor(message: string, options?: ErrorOptions) {
    super("KAFKA_STORAGE_ERROR", 56, true, message, options);
  }
}

/** A log setting out of range, e.g. `log.max.open.files` below 1 (INVALID_CONFIG, 40). */
export class InvalidConfigError extends KafkaError {
  constructor(message: string) {
    super("INVALID_CONFIG", 40, false, message);
  }
}
