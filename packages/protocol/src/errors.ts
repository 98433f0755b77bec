/**
 * One error hierarchy for the whole project, with Kafka's error names and codes where Kafka has one.
 * `retriable` tells a caller whether trying the same call again can succeed.
 */
export class KafkaError extends Error {
  /** Kafka's error name, e.g. `CORRUPT_MESSAGE`, or ours for errors Kafka has no name for. */
  readonly errorName: string;
  /** Kafka's numeric error code, or -1 for errors Kafka has no code for. */
  readonly code: number;
  /** Whether the same call may succeed if tried again. */
  readonly retriable: boolean;

  constructor(errorName: string, code: number, retriable: boolean, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
    this.errorName = errorName;
    this.code = code;
    this.retriable = retriable;
  }
}

/** A batch or record whose bytes are not a valid Kafka record batch (Kafka's CORRUPT_MESSAGE, code 2). */
export class CorruptRecordError extends KafkaError {
  constructor(message: string, options?: ErrorOptions) {
    super("CORRUPT_MESSAGE", 2, false, message, options);
  }
}

/** A value that is well formed but not one this code knows how to read (e.g. an unknown record version). */
export class UnsupportedVersionError extends KafkaError {
  constructor(message: string, options?: ErrorOptions) {
    super("UNSUPPORTED_VERSION", 35, false, message, options);
  }
}

/** A compression codec id that Kafka does not define, or whose codec failed (Kafka's UNSUPPORTED_COMPRESSION_TYPE). */
export class UnsupportedCompressionError extends KafkaError {
  constructor(message: string, options?: ErrorOptions) {
    super("UNSUPPORTED_COMPRESSION_TYPE", 76, false, message, options);
  }
}
