import { controlTypeOf, RecordBatch } from "@cluster-mirror/protocol";
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
 * Segments are read as the storage's slices (memory storage: views of what was appended, no copy), joined
 * only where a batch spans two of them.
 */
export function scanLog(
  storage: LogStorage,
  validateCrc: boolean,
  visit: (batch: RecordBatch, entry: BatchEntry) => void,
): TornTail | undefined {
  let previousLast = -1n;
  for (const seg of storage.segments()) {
    const slices = storage.readSlices(seg.baseOffset, 0, seg.sizeInBytes);
    let next = 0;
    let bytes: Buffer = EMPTY;
    /** Position in the segment of `bytes[0]`. */
    let sliceStart = 0;
    let pos = 0;
    for (;;) {
      if (pos === bytes.length) {
        if (next === slices.length) break;
        sliceStart += bytes.length;
        bytes = slices[next++]!;
        pos = 0;
        continue;
      }
      const torn = (reason: string): TornTail => ({
        segment: seg.baseOffset,
        position: sliceStart + pos,
        reason,
      });
      const size = bytes.length - pos < HEADER ? -1 : bytes.readInt32BE(pos + 8) + LOG_OVERHEAD;
      if ((size < 0 || pos + size > bytes.length) && next < slices.length) {
        // The batch goes on in the next slice: join the rest of the segment (storage appended a batch in
        // parts; memory storage never does).
        sliceStart += pos;
        bytes = Buffer.concat([bytes.subarray(pos), ...slices.slice(next)]);
        next = slices.length;
        pos = 0;
        continue;
      }
      if (size < 0) return torn(`partial batch header (${bytes.length - pos} bytes)`);
      if (size < HEADER) return torn(`batch length ${size} is below the header size`);
      if (pos + size > bytes.length) return torn(`partial batch: ${bytes.length - pos} of ${size} bytes`);
      let batch: RecordBatch;
      try {
        batch = new RecordBatch(bytes.subarray(pos, pos + size));
        if (validateCrc) {
          batch.validate();
          // A control record too corrupt to type is cut here, as Kafka's LogSegment.recover cuts at an
          // InvalidRecordException, not thrown from the replay (the log could never be opened again).
          controlTypeOf(batch);
        }
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
      const entry = {
        baseOffset: base,
        lastOffset: last,
        segment: seg.baseOffset,
        position: sliceStart + pos,
        size,
      };
      visit(batch, entry);
      previousLast = last;
      pos += size;
    }
  }
  return undefined;
}

const EMPTY = Buffer.alloc(0);
