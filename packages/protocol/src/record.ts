/** One header of a record. Order and repeated keys are kept as written. */
export interface RecordHeader {
  key: string;
  value: Buffer | null;
}

/** One record inside a batch, as the full decoder returns it and the encoder takes it. */
export interface Record {
  /** Record-level attributes (unused by Kafka, always 0 when written by clients). */
  attributes: number;
  /** Offset relative to the batch's baseOffset. */
  offsetDelta: number;
  /** Timestamp relative to the batch's baseTimestamp. */
  timestampDelta: bigint;
  key: Buffer | null;
  value: Buffer | null;
  headers: RecordHeader[];
}
