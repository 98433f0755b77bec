import { RecordBatch } from "@cluster-mirror/protocol";
import type { BatchEntry } from "./batch-index";
import type { LogStorage } from "./storage";

/** Header size of a RecordBatch v2. */
const HEADER = 61;
/** baseOffset + batchLength. */
const LOG_OVERHEAD = 12;

/** Where a scan found the first bad byte: everything from there on is to be cut. */
export interface TornTail {
  segment: bigint;
  position: number;
  reason: string;
}

/**
 * Walks every batch of every segment in order, calling `visit` for each good one (Kafka's LogLoader
 * recovery). A batch is good if its header is complete and sane, its CRC matches (when `validateCrc`),
 * and its offsets are above the previous batch's and not below its segment's base offset. The scan stops
 * at the first bad batch and returns where it is: a torn write (partial trailing batch) or corruption.
 */
export function scanLog(
  storage: LogStorage,
  validateCrc: boolean,
  visit: (batch: RecordBatch, entry: BatchEntry) => void,
): TornTail | undefined {
  let previousLast = -1n;
  for (const seg of storage.segments()) {
    const bytes = storage.read(seg.baseOffset, 0, seg.sizeInBytes);
    let pos = 0;
    while (pos < bytes.length) {
      const torn = (reason: string): TornTail => ({ segment: seg.baseOffset, position: pos, reason });
      if (bytes.length - pos < HEADER) return torn(`partial batch header (${bytes.length - pos} bytes)`);
      const size = bytes.readInt32BE(pos + 8) + LOG_OVERHEAD;
      if (size < HEADER) return torn(`batch length ${size} is below the header size`);
      if (pos + size > bytes.length) return torn(`partial batch: ${bytes.length - pos} of ${size} bytes`);
      let batch: RecordBatch;
      try {
        batch = new RecordBatch(bytes.subarray(pos, pos + size));
        if (validateCrc) batch.validate();
      } catch (err) {
        return torn(err instanceof Error ? err.message : String(err));
      }
      const base = batch.baseOffset;
      if (base <= previousLast || base < seg.baseOffset) {
        return torn(
          `batch at ${base} is not above the previous offset ${previousLast} / segment ${seg.baseOffset}`,
        );
      }
      const last = batch.lastOffset;
      visit(batch, { baseOffset: base, lastOffset: last, segment: seg.baseOffset, position: pos, size });
      previousLast = last;
      pos += size;
    }
  }
  return undefined;
}
