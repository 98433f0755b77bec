import { CorruptRecordError, type RecordBatch, readVarint, readVarlong } from "@cluster-mirror/protocol";

/**
 * Control record types (the `type` field of a control record's key). Private stand-in until the protocol
 * package exports its own; the values are the protocol's (spec §10).
 */
export const ControlRecordType = { ABORT: 0, COMMIT: 1, MIRROR_PID_RESET: 7 } as const;

/** Size of the record-batch header: the first record starts here. */
const RECORDS_START = 61;

/**
 * Reads the control type of a control batch from its first record's key (int16 version, int16 type),
 * without decoding anything else. Control batches are never compressed in Kafka; a compressed or empty
 * one is reported as corrupt.
 */
export function readControlType(batch: RecordBatch): number {
  const buf = batch.buffer;
  if (batch.compression !== 0) {
    throw new CorruptRecordError(
      `control batch at offset ${batch.baseOffset} is compressed; Kafka never compresses markers`,
    );
  }
  if (batch.recordCount < 1) {
    throw new CorruptRecordError(`control batch at offset ${batch.baseOffset} holds no control record`);
  }
  const end = buf.length;
  let o = readVarint(buf, RECORDS_START, end).next; // record length
  o += 1; // record attributes
  o = readVarlong(buf, o, end).next; // timestamp delta
  o = readVarint(buf, o, end).next; // offset delta
  const keyLength = readVarint(buf, o, end);
  o = keyLength.next;
  if (keyLength.value < 4 || o + 4 > end) {
    throw new CorruptRecordError(
      `control batch at offset ${batch.baseOffset} has a ${keyLength.value}-byte key; a control key is at least 4 bytes`,
    );
  }
  return buf.readInt16BE(o + 2);
}
