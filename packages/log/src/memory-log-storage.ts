import { KafkaStorageError } from "./errors";
import type { EpochEntry } from "./leader-epoch-cache";
import type { LogStartProducerState, LogStorage, SegmentInfo } from "./storage";

/** A segment in memory: the appended byte ranges (each copied once, or handed over), never written to again. */
interface MemorySegment {
  baseOffset: bigint;
  chunks: Buffer[];
  /** Byte position where each chunk starts. */
  starts: number[];
  size: number;
}

/**
 * `LogStorage` in memory. Each append is copied once into its own chunk (or, with `transferOwnership`,
 * kept as the caller's buffer); reads inside one chunk are zero-copy views. Chunks are never modified
 * after they are written (truncation drops or re-slices them), so a view handed to a reader stays valid.
 */
export class MemoryLogStorage implements LogStorage {
  private segs: MemorySegment[] = [];
  private checkpoint: EpochEntry[] | undefined;
  private logStart: bigint | undefined;
  private logStartProducers: LogStartProducerState | undefined;
  /** @inheritdoc */
  readonly keepsAppendedBuffers = true;

  /** @inheritdoc */
  segments(): readonly SegmentInfo[] {
    return this.segs.map((s) => ({ baseOffset: s.baseOffset, sizeInBytes: s.size }));
  }

  /** @inheritdoc */
  read(baseOffset: bigint, position: number, length: number): Buffer {
    const slices = this.readSlices(baseOffset, position, length);
    if (slices.length === 0) return Buffer.alloc(0);
    return slices.length === 1 ? slices[0]! : Buffer.concat(slices, length);
  }

  /** @inheritdoc */
  readSlices(baseOffset: bigint, position: number, length: number): Buffer[] {
    const seg = this.segment(baseOffset);
    if (length === 0) return [];
    const out: Buffer[] = [];
    let taken = 0;
    for (let j = chunkAt(seg, position); taken < length; j++) {
      const c = seg.chunks[j];
      if (!c) throw new KafkaStorageError(`segment ${baseOffset} ended before ${position + length}`);
      const from = taken === 0 ? position - seg.starts[j]! : 0;
      const to = Math.min(c.length, from + length - taken);
      out.push(from === 0 && to === c.length ? c : c.subarray(from, to));
      taken += to - from;
    }
    return out;
  }

  /** @inheritdoc */
  append(bytes: Buffer | readonly Buffer[], options?: { transferOwnership?: boolean }): void {
    const seg = this.segs[this.segs.length - 1];
    if (!seg) throw new KafkaStorageError("append to a log with no segment; roll or reset it first");
    const owned = options?.transferOwnership === true;
    if (Buffer.isBuffer(bytes)) this.appendChunk(seg, bytes, owned);
    else for (const slice of bytes) this.appendChunk(seg, slice, owned);
  }

  private appendChunk(seg: MemorySegment, bytes: Buffer, owned: boolean): void {
    if (bytes.length === 0) return;
    let chunk = bytes;
    if (!owned) {
      chunk = Buffer.allocUnsafe(bytes.length);
      bytes.copy(chunk);
    }
    seg.chunks.push(chunk);
    seg.starts.push(seg.size);
    seg.size += bytes.length;
  }

  /** @inheritdoc */
  roll(baseOffset: bigint): void {
    this.segs.push(emptySegment(baseOffset));
  }

  /** @inheritdoc */
  truncate(baseOffset: bigint, position: number): void {
    const index = this.segs.findIndex((s) => s.baseOffset === baseOffset);
    const seg = this.segs[index];
    if (!seg) throw new KafkaStorageError(`no segment ${baseOffset} to truncate`);
    this.segs.length = index + 1;
    if (position >= seg.size) return;
    if (position === 0) {
      this.segs[index] = emptySegment(baseOffset);
      return;
    }
    const i = chunkAt(seg, position);
    const keep = position - seg.starts[i]!;
    seg.chunks.length = i + 1;
    seg.starts.length = i + 1;
    if (keep === 0) {
      seg.chunks.pop();
      seg.starts.pop();
    } else {
      seg.chunks[i] = seg.chunks[i]!.subarray(0, keep);
    }
    seg.size = position;
  }

  /** @inheritdoc */
  reset(baseOffset: bigint): void {
    this.segs = [emptySegment(baseOffset)];
  }

  /** @inheritdoc */
  replaceSegment(baseOffset: bigint, bytes: Buffer): void {
    const index = this.segs.findIndex((s) => s.baseOffset === baseOffset);
    if (index < 0) throw new KafkaStorageError(`no segment ${baseOffset} to replace`);
    const seg = emptySegment(baseOffset);
    if (bytes.length > 0) {
      seg.chunks.push(Buffer.from(bytes));
      seg.starts.push(0);
      seg.size = bytes.length;
    }
    this.segs[index] = seg;
  }

  /** @inheritdoc */
  deleteSegment(baseOffset: bigint): void {
    const index = this.segs.findIndex((s) => s.baseOffset === baseOffset);
    if (index < 0) throw new KafkaStorageError(`no segment ${baseOffset} to delete`);
    if (index === this.segs.length - 1) {
      throw new KafkaStorageError(`segment ${baseOffset} is the active segment; roll before deleting it`);
    }
    this.segs.splice(index, 1);
  }

  /** @inheritdoc */
  readLogStartOffset(): bigint | undefined {
    return this.logStart;
  }

  /** @inheritdoc */
  writeLogStartOffset(offset: bigint): void {
    this.logStart = offset;
  }

  /** @inheritdoc */
  writeLogStartProducerState(saved: LogStartProducerState | undefined): void {
    this.logStartProducers = saved;
  }

  /** @inheritdoc */
  readLogStartProducerState(): LogStartProducerState | undefined {
    return this.logStartProducers;
  }

  /** @inheritdoc */
  readLeaderEpochCheckpoint(): EpochEntry[] | undefined {
    return this.checkpoint?.map((e) => ({ ...e }));
  }

  /** @inheritdoc */
  writeLeaderEpochCheckpoint(entries: readonly EpochEntry[]): void {
    this.checkpoint = entries.map((e) => ({ ...e }));
  }

  /** @inheritdoc */
  close(): void {}

  private segment(baseOffset: bigint): MemorySegment {
    const seg = this.segs.find((s) => s.baseOffset === baseOffset);
    if (!seg) throw new KafkaStorageError(`no segment ${baseOffset}`);
    return seg;
  }
}

function emptySegment(baseOffset: bigint): MemorySegment {
  return { baseOffset, chunks: [], starts: [], size: 0 };
}

/** Index of the chunk holding byte `position` (binary search). */
function chunkAt(seg: MemorySegment, position: number): number {
  let lo = 0;
  let hi = seg.starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (seg.starts[mid]! <= position) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}
