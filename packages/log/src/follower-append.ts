import {
  CorruptRecordError,
  crc32c,
  crc32cCombine,
  crc32cOfRange,
  RecordBatch,
  RecordBatchLayout,
} from "@cluster-mirror/protocol";
import { UnexpectedAppendOffsetError } from "./errors";
import { MAX_BATCHES_PER_PRODUCER } from "./producer-state-entry";

const {
  ATTRIBUTES_OFFSET,
  BASE_SEQUENCE_OFFSET,
  BATCH_LENGTH_OFFSET,
  CONTROL_FLAG_MASK,
  CRC_OFFSET,
  CURRENT_MAGIC,
  LAST_OFFSET_DELTA_OFFSET,
  LOG_OVERHEAD,
  MAGIC_OFFSET,
  MAX_TIMESTAMP_OFFSET,
  PARTITION_LEADER_EPOCH_OFFSET,
  PRODUCER_EPOCH_OFFSET,
  PRODUCER_ID_OFFSET,
  RECORD_BATCH_OVERHEAD,
  RECORDS_COUNT_OFFSET,
  TRANSACTIONAL_FLAG_MASK,
} = RecordBatchLayout;

/** Bytes copied at a time before their batches' CRCs are checked on the copy, while they are in cache. */
const COPY_CHUNK = 64 * 1024;
/** Batches up to this many bytes together have their CRCs checked by one native call (see `runCrcMatches`). */
const RUN_BYTES = 64 * 1024;
/** Offsets at or above 2^53 do not fit a double exactly: such an append takes the general path. */
const HI_LIMIT = 0x200000;

/**
 * The header facts of the batches of one follower append, as numbers in reusable columns (no object per
 * batch): filled by `walkFetchedBatches`, read by the log's commit, reused by the next append.
 */
export class FollowerAppendPlan {
  /** Number of whole batches. */
  count = 0;
  /** Bytes of the whole batches. */
  validBytes = 0;
  /** The bytes to store: the copy, or the caller's slices cut to the whole batches. */
  bytes: Buffer | readonly Buffer[] = [];
  /** True when `bytes` is a copy the log owns. */
  copied = false;
  base = new Float64Array(256);
  last = new Float64Array(256);
  size = new Float64Array(256);
  epoch = new Int32Array(256);
  /** Ordinal (in `base`...) of each batch that carries producer state (idempotent, transactional, control). */
  producerOrdinals: number[] = [];
  /** Where each of those batches lies (its view is made only when the producer state needs it). */
  readonly producerBuffers: Buffer[] = [];
  readonly producerStarts: number[] = [];
  /** Producer id (high and low halves) and epoch of each, and whether it is a plain idempotent batch. */
  readonly producerIdHi: number[] = [];
  readonly producerIdLo: number[] = [];
  readonly producerEpochs: number[] = [];
  /** Neither transactional nor control, with a sequence: its only effect is to be one of the last five. */
  readonly producerPlain: boolean[] = [];
  /** Whether each of those batches is a control batch (its type is read before anything is stored). */
  readonly producerControl: boolean[] = [];
  /** Scratch of the walk: where each slice ends, counting the slices' bytes one after another. */
  readonly sliceEnds: number[] = [];

  /** Forgets the caller's buffers (so a reused plan keeps nothing alive). */
  release(): void {
    this.bytes = [];
    this.producerOrdinals.length = 0;
    this.producerBuffers.length = 0;
    this.producerStarts.length = 0;
    this.producerIdHi.length = 0;
    this.producerIdLo.length = 0;
    this.producerEpochs.length = 0;
    this.producerPlain.length = 0;
    this.producerControl.length = 0;
  }

  /** Records batch `ordinal` (at `start` of `buffer`; header fields at `at` of `fields`) as a producer batch. */
  pushProducer(
    ordinal: number,
    buffer: Buffer,
    start: number,
    fields: DataView,
    at: number,
    control: boolean,
  ): void {
    this.producerOrdinals.push(ordinal);
    this.producerBuffers.push(buffer);
    this.producerStarts.push(start);
    this.producerIdHi.push(fields.getInt32(at + PRODUCER_ID_OFFSET));
    this.producerIdLo.push(fields.getInt32(at + PRODUCER_ID_OFFSET + 4));
    this.producerEpochs.push(fields.getInt16(at + PRODUCER_EPOCH_OFFSET));
    this.producerControl.push(control);
    this.producerPlain.push(
      !control &&
        (fields.getInt16(at + ATTRIBUTES_OFFSET) & TRANSACTIONAL_FLAG_MASK) === 0 &&
        fields.getInt32(at + BASE_SEQUENCE_OFFSET) >= 0,
    );
  }

  /** A view of producer batch `j` (the j-th of `producerOrdinals`). */
  producerBatch(j: number): RecordBatch {
    const start = this.producerStarts[j]!;
    const size = this.size[this.producerOrdinals[j]!]!;
    return new RecordBatch(this.producerBuffers[j]!.subarray(start, start + size));
  }

  /**
   * True when producer batch `j` changes nothing the producer state keeps: a plain idempotent batch whose
   * next five producer batches in this append are plain ones of the same producer id and epoch. The state
   * keeps the last five batches' sequences and the last one's timestamp, so theirs replace its own.
   */
  producerSuperseded(j: number): boolean {
    const plain = this.producerPlain;
    if (!plain[j] || j + MAX_BATCHES_PER_PRODUCER >= plain.length) return false;
    const hi = this.producerIdHi[j];
    const lo = this.producerIdLo[j];
    const epoch = this.producerEpochs[j];
    for (let k = j + 1; k <= j + MAX_BATCHES_PER_PRODUCER; k++) {
      if (
        !plain[k] ||
        this.producerIdHi[k] !== hi ||
        this.producerIdLo[k] !== lo ||
        this.producerEpochs[k] !== epoch
      )
        return false;
    }
    return true;
  }

  push(base: number, last: number, size: number, epoch: number): number {
    if (this.count === this.base.length) this.grow();
    const i = this.count++;
    this.base[i] = base;
    this.last[i] = last;
    this.size[i] = size;
    this.epoch[i] = epoch;
    return i;
  }

  private grow(): void {
    const n = this.base.length * 2;
    const f = (from: Float64Array) => {
      const to = new Float64Array(n);
      to.set(from);
      return to;
    };
    this.base = f(this.base);
    this.last = f(this.last);
    this.size = f(this.size);
    const epoch = new Int32Array(n);
    epoch.set(this.epoch);
    this.epoch = epoch;
  }
}

/**
 * One walk over the headers of fetched batches (a follower's or the mirror's append-as-is), validating
 * each the way `RecordBatch.validate` does (magic, CRC-32C, non-negative lastOffsetDelta and record count)
 * and checking that offsets increase from `endOffset` on, with offsets as numbers and no object per batch
 * (a view is made only to CRC a batch checked on its own, and for batches that carry producer state). The
 * whole batches' facts go to `plan`; a partial trailing batch (a fetch cut at its byte limit) is left out.
 * The CRCs of a run of whole batches (up to 64 KiB) are checked with one native call (`runCrcMatches`);
 * a run that fails is checked batch by batch, to name the corrupt one.
 *
 * Positions count bytes of the slices taken one after another; each check is written once, for both ways
 * of reading them:
 * - `copy`: the slices are copied one after another into one buffer the log will own, about 64 KiB ahead
 *   of the walk, which reads everything from the copy, so what is stored is what was checked. Runs may
 *   then span slices (the embedded source hands out one slice per stored batch) and each run is checked
 *   right after it was copied, while it is in cache.
 * - otherwise the walk reads each slice where it lies, and the caller's bytes are kept as they are; runs
 *   stay within a slice (one native call needs one buffer).
 * Either way only the last slice may end inside a batch.
 *
 * Returns false, having changed nothing the caller can see, when an offset does not fit a double exactly
 * (2^53 or more): the caller then takes its general path. Throws `CorruptRecordError` or
 * `UnexpectedAppendOffsetError` exactly as that path does, at the same batch.
 */
export function walkFetchedBatches(
  slices: readonly Buffer[],
  endOffset: number,
  copy: boolean,
  plan: FollowerAppendPlan,
): boolean {
  plan.count = 0;
  plan.validBytes = 0;
  plan.copied = false;
  plan.release();
  // Written over, not emptied: keeping its capacity spares a growing array per append. Entries past the
  // last slice are stale and never read (every slice search stops at the last slice, which ends at `total`).
  const ends = plan.sliceEnds;
  let total = 0;
  for (let k = 0; k < slices.length; k++) {
    total += slices[k]!.length;
    ends[k] = total;
  }
  if (total === 0) return true;
  const lastSlice = slices.length - 1;
  // The copy is sized for every byte given: callers pass whole batches (the mirror cuts its prefix first),
  // so at most a partial trailing batch's bytes are left unused at its end.
  const out = copy ? Buffer.allocUnsafe(total) : undefined;
  /** Slices copied so far, and the bytes they filled (every slice counts as copied when reading in place). */
  let copiedSlices = copy ? 0 : slices.length;
  let copied = copy ? 0 : total;
  // The buffer read (the copy, or the slice holding `position`) starts at `viewStart`. Header fields are
  // read through a DataView over its whole ArrayBuffer (V8 inlines its big-endian reads) at `o + position`;
  // consecutive slices of one buffer (small stored batches) share the view.
  let view = out ?? slices[0]!;
  let viewStart = 0;
  let fieldsOf = view.buffer;
  let fields = new DataView(fieldsOf);
  let o = view.byteOffset;
  /** The slice holding `position`, and where it ends. */
  let slice = 0;
  let sliceEnd = ends[0]!;
  /** Batches ending at or before this were checked as a run (CRCs all match). */
  let verifiedTo = 0;
  /** Batches ending at or before this belong to a run already planned (checked, or to check one by one). */
  let plannedTo = 0;
  let previousLast = -1;
  let position = 0;
  for (;;) {
    // Copy ahead of the walk: at least a run's worth (whole slices).
    const want = position + COPY_CHUNK;
    while (copiedSlices <= lastSlice && copied < want) {
      out!.set(slices[copiedSlices]!, copied);
      copied = ends[copiedSlices++]!;
    }
    if (position >= total) break;
    if (sliceEnd <= position) {
      // The next slice that is not empty; batches do not cross slice ends, so it starts at `position`.
      do sliceEnd = ends[++slice]!;
      while (sliceEnd <= position);
      if (!copy) {
        const next = slices[slice]!;
        if (next.buffer !== fieldsOf) {
          fieldsOf = next.buffer;
          fields = new DataView(fieldsOf);
        }
        view = next;
        viewStart = position;
        o = next.byteOffset - position;
      }
    }
    if (position + LOG_OVERHEAD > sliceEnd) {
      if (slice === lastSlice) break; // a partial trailing batch: the fetch hit its byte limit
      throw sliceEndsInsideBatch(slice, position);
    }
    const at = o + position;
    const length = fields.getInt32(at + BATCH_LENGTH_OFFSET);
    if (length + LOG_OVERHEAD < RECORD_BATCH_OVERHEAD) {
      throw new CorruptRecordError(
        `record batch at byte ${position} declares length ${length}, less than the v2 header needs`,
      );
    }
    const next = position + LOG_OVERHEAD + length;
    if (next > sliceEnd) {
      if (slice === lastSlice) break;
      throw sliceEndsInsideBatch(slice, position);
    }
    const hi = fields.getInt32(at);
    if (hi < 0 || hi >= HI_LIMIT) return false;
    const base = hi * 0x100000000 + fields.getUint32(at + 4);
    const magic = fields.getInt8(at + MAGIC_OFFSET);
    if (magic !== CURRENT_MAGIC) {
      throw new CorruptRecordError(
        `record batch has magic ${magic}; only magic 2 (RecordBatch v2, Kafka 0.11+) is supported`,
      );
    }
    if (next > plannedTo) {
      // A run of whole batches from here, up to RUN_BYTES, within what is copied (in place: within this
      // slice), none crossing a slice end.
      const runLimit = copy ? copied : sliceEnd;
      let runEnd = next;
      let count = 1;
      let runSlice = slice;
      while (runEnd + LOG_OVERHEAD <= runLimit) {
        while (ends[runSlice]! <= runEnd) runSlice++;
        const following = fields.getInt32(o + runEnd + BATCH_LENGTH_OFFSET);
        const followingEnd = runEnd + LOG_OVERHEAD + following;
        if (following + LOG_OVERHEAD < RECORD_BATCH_OVERHEAD || followingEnd > ends[runSlice]!) break;
        if (followingEnd - position > RUN_BYTES) break;
        runEnd = followingEnd;
        count++;
      }
      plannedTo = runEnd;
      if (count > 1 && runCrcMatches(view, fields, view.byteOffset, position - viewStart, runEnd - viewStart))
        verifiedTo = runEnd;
    }
    const stored = fields.getUint32(at + CRC_OFFSET);
    // A run whose combined CRC did not match: each batch is checked on its own, to name the bad one.
    const computed =
      next <= verifiedTo
        ? stored
        : crc32c(view.subarray(position - viewStart + ATTRIBUTES_OFFSET, next - viewStart));
    if (stored !== computed) {
      throw new CorruptRecordError(
        `record batch at offset ${base} is corrupt: stored CRC ${hex(stored)}, computed ${hex(computed)}; fetch it again from the leader`,
      );
    }
    const delta = fields.getInt32(at + LAST_OFFSET_DELTA_OFFSET);
    if (delta < 0) {
      throw new CorruptRecordError(`record batch at offset ${base} has a negative lastOffsetDelta ${delta}`);
    }
    const records = fields.getInt32(at + RECORDS_COUNT_OFFSET);
    if (records < 0) {
      throw new CorruptRecordError(`record batch at offset ${base} has a negative record count ${records}`);
    }
    if (previousLast < 0 && base < endOffset) {
      throw new UnexpectedAppendOffsetError(
        `first offset ${base} is below the log end offset ${endOffset}; fetch from ${endOffset}, or truncate to ${base} first if the logs diverged`,
        BigInt(base),
        BigInt(endOffset),
        BigInt(base + delta),
      );
    }
    if (previousLast >= 0 && base <= previousLast) {
      throw new UnexpectedAppendOffsetError(
        `batch at offset ${base} does not follow the previous batch ending at ${previousLast}; the fetched data is out of order`,
        BigInt(base),
        BigInt(endOffset),
      );
    }
    const lastOffset = base + delta;
    if (lastOffset > Number.MAX_SAFE_INTEGER) return false;
    previousLast = lastOffset;
    const ordinal = plan.push(
      base,
      lastOffset,
      next - position,
      fields.getInt32(at + PARTITION_LEADER_EPOCH_OFFSET),
    );
    // Producer state needs the batch itself: only idempotent, transactional and control batches.
    const control = (fields.getInt16(at + ATTRIBUTES_OFFSET) & CONTROL_FLAG_MASK) !== 0;
    if (control || fields.getInt32(at + PRODUCER_ID_OFFSET) >= 0)
      plan.pushProducer(ordinal, view, position - viewStart, fields, at, control);
    position = next;
  }
  plan.validBytes = position;
  if (plan.count === 0) return true;
  if (out !== undefined) {
    plan.bytes = out.length === position ? out : out.subarray(0, position);
    plan.copied = true;
  } else {
    // In place: the slices cut to the whole batches (a partial batch lies only at the end of the last).
    plan.bytes =
      position === total
        ? slices
        : [...slices.slice(0, lastSlice), slices[lastSlice]!.subarray(0, position - viewStart)];
  }
  return true;
}

function sliceEndsInsideBatch(slice: number, position: number): CorruptRecordError {
  return new CorruptRecordError(
    `slice ${slice} of the fetched records ends inside a batch (byte ${position}); only the last slice may end with a partial batch`,
  );
}

/**
 * True when the CRC-32C of each whole batch in `view[from, to)` (at `o + from` in `fields`) matches the CRC stored in its header,
 * checked with one native CRC call over the whole run instead of one per batch: the run's CRC must equal
 * the combination (`crc32cCombine`) of each batch's 21 header bytes before the covered part (computed
 * here) and its stored CRC. A mismatch means at least one batch is corrupt; the caller then checks them one
 * by one. (Errors in two batches that cancel out in the combination are as unlikely, 2^-32, as an error
 * that keeps one batch's own CRC.)
 */
function runCrcMatches(view: Buffer, fields: DataView, o: number, from: number, to: number): boolean {
  let expected = crc32cOfRange(view, from, from + ATTRIBUTES_OFFSET);
  let p = from;
  for (;;) {
    const batchEnd = p + LOG_OVERHEAD + fields.getInt32(o + p + BATCH_LENGTH_OFFSET);
    expected = crc32cCombine(
      expected,
      fields.getUint32(o + p + CRC_OFFSET),
      batchEnd - p - ATTRIBUTES_OFFSET,
    );
    p = batchEnd;
    if (p >= to) break;
    expected = crc32cCombine(expected, crc32cOfRange(view, p, p + ATTRIBUTES_OFFSET), ATTRIBUTES_OFFSET);
  }
  return crc32c(view.subarray(from, to)) === expected;
}

function hex(n: number): string {
  return `0x${n.toString(16).padStart(8, "0")}`;
}

/**
 * The largest maxTimestamp of the batches in `bytes` (whole batches, one after another in each buffer), -1
 * if none has one: Kafka's RollParams for segment.ms. Read apart from the walk, and only while the log's
 * active segment is one it reopened (the hot walk stays as it was: reading it there halved the 1 KiB-batch
 * figure of `pnpm bench mirror-throughput`).
 */
export function maxTimestampOf(bytes: Buffer | readonly Buffer[]): number {
  let max = -1;
  for (const buf of Buffer.isBuffer(bytes) ? [bytes] : bytes) {
    for (let at = 0; at + RECORD_BATCH_OVERHEAD <= buf.length; ) {
      const ts =
        buf.readInt32BE(at + MAX_TIMESTAMP_OFFSET) * 0x100000000 +
        buf.readUInt32BE(at + MAX_TIMESTAMP_OFFSET + 4);
      if (ts > max) max = ts;
      at += LOG_OVERHEAD + buf.readInt32BE(at + BATCH_LENGTH_OFFSET);
    }
  }
  return max;
}
