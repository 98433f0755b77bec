import { CorruptRecordError } from "./errors";
import { RecordBatch } from "./record-batch";
import { BATCH_LENGTH_OFFSET, LOG_OVERHEAD, RECORD_BATCH_OVERHEAD } from "./record-batch-layout";

/**
 * Iterates the batches in a buffer of concatenated RecordBatch v2 bytes (a fetch response's records, a log
 * segment). Each batch is a zero-copy view. A partial batch at the end (as a fetch that hit its byte limit
 * returns) ends the iteration cleanly; `partialTrailingBytes` tells how many bytes were left over.
 */
export function* recordBatches(buffer: Buffer): Generator<RecordBatch, void, undefined> {
  let position = 0;
  while (position + LOG_OVERHEAD <= buffer.length) {
    const length = buffer.readInt32BE(position + BATCH_LENGTH_OFFSET);
    if (length + LOG_OVERHEAD < RECORD_BATCH_OVERHEAD) {
      throw new CorruptRecordError(
        `record batch at byte ${position} declares length ${length}, less than the v2 header needs`,
      );
    }
    const end = position + LOG_OVERHEAD + length;
    if (end > buffer.length) return;
    yield new RecordBatch(buffer.subarray(position, end));
    position = end;
  }
}

/** Number of bytes at the end of `buffer` that do not form a whole batch (0 when it ends on a boundary). */
export function partialTrailingBytes(buffer: Buffer): number {
  let position = 0;
  while (position + LOG_OVERHEAD <= buffer.length) {
    const length = buffer.readInt32BE(position + BATCH_LENGTH_OFFSET);
    const end = position + LOG_OVERHEAD + length;
    if (length + LOG_OVERHEAD < RECORD_BATCH_OVERHEAD || end > buffer.length) break;
    position = end;
  }
  return buffer.length - position;
}
