import { CorruptRecordError, RecordBatch, RecordBatchLayout } from "@cluster-mirror/protocol";

/** What `scanFetchedBatches` found in one partition's fetched bytes. */
export interface FetchedBatchScan {
  /** Bytes of the appendable prefix: whole, valid batches below the epoch limit, in offset order. */
  validBytes: number;
  batchCount: number;
  /** Base offset of the first batch of the prefix, and its last offset. */
  firstBaseOffset: bigint | undefined;
  firstLastOffset: bigint | undefined;
  /** Highest partition leader epoch among the prefix's batches and a held batch (-1 when none). */
  maxEpoch: number;
  /** Set when a whole batch's epoch is above the local leader epoch: it and what follows are not appended. */
  heldEpoch: number | undefined;
  /** Set when a batch failed validation: its base offset (or the byte position when unreadable) and why. */
  corrupt: { at: string; error: CorruptRecordError } | undefined;
  /** Where the prefix's last batch starts: its slice and its position in it (-1 when the prefix is empty). */
  lastSlice: number;
  lastPosition: number;
}

/** A scan that found nothing yet. */
function emptyScan(): FetchedBatchScan {
  return {
    validBytes: 0,
    batchCount: 0,
    firstBaseOffset: undefined,
    firstLastOffset: undefined,
    maxEpoch: -1,
    heldEpoch: undefined,
    corrupt: undefined,
    lastSlice: -1,
    lastPosition: -1,
  };
}

const {
  BASE_OFFSET_OFFSET,
  BATCH_LENGTH_OFFSET,
  CURRENT_MAGIC,
  LAST_OFFSET_DELTA_OFFSET,
  LOG_OVERHEAD,
  MAGIC_OFFSET,
  PARTITION_LEADER_EPOCH_OFFSET,
  RECORD_BATCH_OVERHEAD,
} = RecordBatchLayout;

/**
 * Walks the whole batches of a fetch response's record slices, zero-copy, and finds the prefix the mirror
 * may append as it is: a batch whose partition leader epoch is above `localLeaderEpoch` stops the prefix
 * (the epoch invariant, spec §4). A partial trailing batch in the last slice (the fetch hit its byte limit)
 * ends the walk; it is fetched again next time. A slice other than the last must end on a batch boundary.
 * Records are never decoded.
 *
 * Two depths. The full scan (default) validates each batch as the append would (CRC-32C, header, offsets
 * increasing) and stops at the first bad one, which it reports in `corrupt`. `verifyCrc: false` is the
 * hot path of a caller whose append validates everything itself, all or nothing: it reads only each
 * batch's length, magic and epoch (and the first batch's offsets), and the caller falls back to the full
 * scan when the append refuses the data.
 */
export function scanFetchedBatches(
  slices: readonly Buffer[],
  localLeaderEpoch: number,
  options: { verifyCrc?: boolean } = {},
): FetchedBatchScan {
  const verifyCrc = options.verifyCrc ?? true;
  if (!verifyCrc) return lightScan(slices, localLeaderEpoch);
  const scan = emptyScan();
  let previousLast: bigint | undefined;
  let fieldsOf: ArrayBufferLike | undefined;
  let wholeFields: DataView | undefined;
  for (let k = 0; k < slices.length; k++) {
    const records = slices[k]!;
    // Header fields through a DataView over the slice's whole ArrayBuffer: V8 inlines its big-endian reads
    // (this runs once per batch), and consecutive slices of one buffer share it (small stored batches).
    if (records.buffer !== fieldsOf) {
      fieldsOf = records.buffer;
      wholeFields = new DataView(records.buffer);
    }
    const o = records.byteOffset;
    /** Bytes before this slice: positions in messages count from the start of the response. */
    const before = scan.validBytes;
    let position = 0;
    while (position + LOG_OVERHEAD <= records.length) {
      const length = wholeFields!.getInt32(o + position + BATCH_LENGTH_OFFSET);
      if (length + LOG_OVERHEAD < RECORD_BATCH_OVERHEAD) return tooShort(scan, before + position, length);
      const end = position + LOG_OVERHEAD + length;
      if (end > records.length) break;
      // Header fields are read in place (no view per batch): this runs once per batch of every fetch.
      const magic = wholeFields!.getInt8(o + position + MAGIC_OFFSET);
      let base: bigint | undefined;
      let last: bigint | undefined;
      try {
        if (magic !== CURRENT_MAGIC) {
          throw new CorruptRecordError(
            `record batch at offset ${records.readBigInt64BE(position)} has magic ${magic}; only magic 2 (RecordBatch v2, Kafka 0.11+) is supported`,
          );
        }
        if (verifyCrc) new RecordBatch(records.subarray(position, end)).validate();
      } catch (error) {
        // The base offset is outside the CRC: it names the batch even when the rest is damaged.
        scan.corrupt = { at: records.readBigInt64BE(position).toString(), error: asCorrupt(error) };
        return scan;
      }
      if (verifyCrc || scan.firstBaseOffset === undefined) {
        base = records.readBigInt64BE(position + BASE_OFFSET_OFFSET);
        last = base + BigInt(records.readInt32BE(position + LAST_OFFSET_DELTA_OFFSET));
      }
      if (verifyCrc && previousLast !== undefined && base !== undefined && base <= previousLast) {
        // Which of the two batches is misplaced is unknown (a gap before it was allowed, as on compacted
        // sources, so the prefix may already hold a batch from past a missing one): nothing from this
        // response is appended, as Kafka refuses a non-monotonic append whole.
        scan.validBytes = 0;
        scan.batchCount = 0;
        scan.firstBaseOffset = undefined;
        scan.firstLastOffset = undefined;
        scan.lastSlice = -1;
        scan.lastPosition = -1;
        scan.corrupt = {
          at: base.toString(),
          error: new CorruptRecordError(
            `record batch at offset ${base} does not follow the previous batch ending at ${previousLast}; the fetched data is out of order`,
          ),
        };
        return scan;
      }
      const epoch = wholeFields!.getInt32(o + position + PARTITION_LEADER_EPOCH_OFFSET);
      if (epoch > scan.maxEpoch) scan.maxEpoch = epoch;
      if (epoch > localLeaderEpoch) {
        scan.heldEpoch = epoch;
        return scan;
      }
      if (scan.firstBaseOffset === undefined) {
        scan.firstBaseOffset = base;
        scan.firstLastOffset = last;
      }
      if (last !== undefined) previousLast = last;
      scan.batchCount++;
      scan.lastSlice = k;
      scan.lastPosition = position;
      position = end;
      scan.validBytes = before + position;
    }
    if (position !== records.length) return sliceCut(scan, k, slices.length, before + position);
  }
  return scan;
}

/**
 * `scanFetchedBatches` with `verifyCrc: false`: each batch's length, magic and epoch read byte by byte from
 * the slice (no DataView or object per slice: the embedded source hands out one slice per stored batch),
 * and the first batch's offsets. Same answers as the general walk at that depth.
 */
function lightScan(slices: readonly Buffer[], localLeaderEpoch: number): FetchedBatchScan {
  const scan = emptyScan();
  for (let k = 0; k < slices.length; k++) {
    const b = slices[k]!;
    const before = scan.validBytes;
    const n = b.length;
    let p = 0;
    while (p + LOG_OVERHEAD <= n) {
      const q = p + BATCH_LENGTH_OFFSET;
      const length = (b[q]! << 24) | (b[q + 1]! << 16) | (b[q + 2]! << 8) | b[q + 3]!;
      if (length + LOG_OVERHEAD < RECORD_BATCH_OVERHEAD) return tooShort(scan, before + p, length);
      const end = p + LOG_OVERHEAD + length;
      if (end > n) break;
      const magic = (b[p + MAGIC_OFFSET]! << 24) >> 24;
      if (magic !== CURRENT_MAGIC) {
        const base = b.readBigInt64BE(p);
        scan.corrupt = {
          at: base.toString(),
          error: new CorruptRecordError(
            `record batch at offset ${base} has magic ${magic}; only magic 2 (RecordBatch v2, Kafka 0.11+) is supported`,
          ),
        };
        return scan;
      }
      const e = p + PARTITION_LEADER_EPOCH_OFFSET;
      const epoch = (b[e]! << 24) | (b[e + 1]! << 16) | (b[e + 2]! << 8) | b[e + 3]!;
      if (epoch > scan.maxEpoch) scan.maxEpoch = epoch;
      if (epoch > localLeaderEpoch) {
        scan.heldEpoch = epoch;
        return scan;
      }
      if (scan.firstBaseOffset === undefined) {
        const base = b.readBigInt64BE(p + BASE_OFFSET_OFFSET);
        scan.firstBaseOffset = base;
        scan.firstLastOffset = base + BigInt(b.readInt32BE(p + LAST_OFFSET_DELTA_OFFSET));
      }
      scan.batchCount++;
      scan.lastSlice = k;
      scan.lastPosition = p;
      p = end;
      scan.validBytes = before + p;
    }
    if (p !== n) return sliceCut(scan, k, slices.length, before + p);
  }
  return scan;
}

/** A batch declares a length shorter than the v2 header: the scan stops, corrupt at that byte. */
function tooShort(scan: FetchedBatchScan, at: number, length: number): FetchedBatchScan {
  scan.corrupt = {
    at: `byte ${at}`,
    error: new CorruptRecordError(
      `record batch at byte ${at} of the fetch response declares length ${length}, less than the v2 header needs`,
    ),
  };
  return scan;
}

/**
 * Slice `k` of `count` ends inside a batch, at response byte `at`: a partial trailing batch when it is the
 * last slice (the fetch hit its byte limit; fetched again next time), otherwise corrupt.
 */
function sliceCut(scan: FetchedBatchScan, k: number, count: number, at: number): FetchedBatchScan {
  if (k === count - 1) return scan;
  scan.corrupt = {
    at: `byte ${at}`,
    error: new CorruptRecordError(
      `slice ${k} of the fetch response ends inside a batch (byte ${at}); only the response's end may cut a batch`,
    ),
  };
  return scan;
}

/**
 * Where the log stands once the scan's prefix is appended: the offset after its last batch and that
 * batch's partition leader epoch (the next fetch's offset and last fetched epoch), or undefined when the
 * prefix is empty.
 */
export function prefixEnd(
  slices: readonly Buffer[],
  scan: FetchedBatchScan,
): { nextOffset: bigint; epoch: number } | undefined {
  if (scan.lastSlice < 0) return undefined;
  const b = slices[scan.lastSlice]!;
  const p = scan.lastPosition;
  const base = b.readBigInt64BE(p + BASE_OFFSET_OFFSET);
  return {
    nextOffset: base + BigInt(b.readInt32BE(p + LAST_OFFSET_DELTA_OFFSET)) + 1n,
    epoch: b.readInt32BE(p + PARTITION_LEADER_EPOCH_OFFSET),
  };
}

/** The first `bytes` bytes of `slices`, as slices (views, no copy). */
export function slicesPrefix(slices: readonly Buffer[], bytes: number): readonly Buffer[] {
  let total = 0;
  for (let k = 0; k < slices.length; k++) {
    const slice = slices[k]!;
    if (total + slice.length >= bytes) {
      if (total + slice.length === bytes && k === slices.length - 1) return slices;
      const out = slices.slice(0, k);
      if (bytes > total) out.push(slice.subarray(0, bytes - total));
      return out;
    }
    total += slice.length;
  }
  return slices;
}

function asCorrupt(error: unknown): CorruptRecordError {
  if (error instanceof CorruptRecordError) return error;
  return new CorruptRecordError(error instanceof Error ? error.message : String(error), { cause: error });
}
