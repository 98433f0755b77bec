import * as fs from "#platform/fs";
import * as path from "#platform/path";
import { CachedFile, type FileHandleCache } from "./file-handle-cache";
import type { ProducerStateEntry } from "./producer-state-entry";
import {
  formatProducerSnapshot,
  fromSnapshotEntry,
  PRODUCER_SNAPSHOT_SUFFIX,
  parseProducerSnapshot,
  toSnapshotEntry,
} from "./storage-producer-snapshot";
import { buildSegmentIndexes, indexedBatches, type SegmentIndexBuilder } from "./storage-segment-index";
import {
  formatTransactionIndex,
  type IndexedAbortedTxn,
  parseTransactionIndex,
  TXN_INDEX_ENTRY_SIZE,
  TXN_INDEX_SUFFIX,
} from "./storage-transaction-index";

/** Kafka's offset index suffix. */
export const OFFSET_INDEX_SUFFIX = ".index";
/** Kafka's time index suffix. */
export const TIME_INDEX_SUFFIX = ".timeindex";

/** Kafka's file name of a segment's file: the base offset, zero-padded to 20 digits, then the suffix. */
export function offsetFileName(offset: bigint, suffix: string): string {
  return `${offset.toString().padStart(20, "0")}${suffix}`;
}

/** What the sidecars need of their segment storage. */
export interface SidecarHost {
  readonly dir: string;
  readonly fsync: boolean;
  readonly handles: FileHandleCache;
  /** `length` bytes of segment `baseOffset` from `position`. */
  read(baseOffset: bigint, position: number, length: number): Buffer;
  /** Writes a whole file through a temporary file and a rename (fsynced when `fsync`). */
  writeAtomically(file: string, bytes: Buffer, suffix: string): void;
}

interface SegmentSidecarState {
  offsetIndex: CachedFile;
  timeIndex: CachedFile;
  /** The active segment's index builder, made from its bytes on first need (undefined: not yet). */
  builder: SegmentIndexBuilder | undefined;
  /**
   * True once the index files are known to be what the segment's bytes give (written or checked here).
   * Until then they are whatever the directory held: a crash between a compaction's rename of the `.log`
   * and of its `.index` leaves the old segment's index next to the new bytes.
   */
  checked: boolean;
  /** Entries of the segment's `.txnindex` as on disk; undefined: not read yet. */
  txns: IndexedAbortedTxn[] | undefined;
}

/**
 * The files Kafka keeps next to each segment, so Kafka's tools and brokers read our directories without
 * rebuilding anything: `.index` and `.timeindex` (see `SegmentIndexBuilder`), `.txnindex` (aborted
 * transactions whose ABORT marker is in the segment) and `<offset>.snapshot` (producer state at an offset:
 * at every roll, named by the new segment, and at close). All of them are derived from the segments and
 * the log's state: the log's recovery reads only the snapshot named by the first segment (the producers
 * of deleted batches), and a failure to write one never fails the append or truncation it follows (the
 * file is rebuilt on the next change instead). The active segment's
 * indexes are not fsynced on append (as in Kafka, which flushes them on roll); a rolled segment's are.
 */
export class SegmentSidecars {
  private readonly segments = new Map<bigint, SegmentSidecarState>();
  /** Offsets of the `.snapshot` files in the directory. */
  private readonly snapshots = new Set<bigint>();

  constructor(private readonly host: SidecarHost) {}

  /**
   * Registers a segment found on disk or just created. `names` are the directory's file names (to know
   * which sidecars exist without looking again); a rolled segment whose indexes are missing (a directory
   * written before they existed) gets them from its bytes.
   */
  register(baseOffset: bigint, names: ReadonlySet<string>, rolled: boolean): void {
    const file = (suffix: string) => path.join(this.host.dir, offsetFileName(baseOffset, suffix));
    this.segments.set(baseOffset, {
      offsetIndex: new CachedFile(file(OFFSET_INDEX_SUFFIX)),
      timeIndex: new CachedFile(file(TIME_INDEX_SUFFIX)),
      builder: undefined,
      checked: false,
      txns: names.has(offsetFileName(baseOffset, TXN_INDEX_SUFFIX)) ? undefined : [],
    });
    const missing =
      !names.has(offsetFileName(baseOffset, OFFSET_INDEX_SUFFIX)) ||
      !names.has(offsetFileName(baseOffset, TIME_INDEX_SUFFIX));
    if (rolled && missing) this.rebuild(baseOffset, undefined, false);
  }

  /** Notes the `.snapshot` files of a directory being opened. */
  registerSnapshots(names: Iterable<string>): void {
    for (const name of names) {
      const m = SNAPSHOT_NAME.exec(name);
      if (m) this.snapshots.add(BigInt(m[1]!));
    }
  }

  /**
   * A whole segment was just read (the log's recovery reads every segment as it opens): its indexes are
   * made from these bytes if they were not yet, so the first append after a restart reads nothing more,
   * and a rolled segment's index files left stale, torn or garbled by a crash are rewritten, as Kafka's
   * loader rebuilds a corrupt index (Kafka's tools and brokers look offsets up in them).
   */
  wholeRead(baseOffset: bigint, bytes: Buffer, active: boolean): void {
    const state = this.segments.get(baseOffset);
    if (!state || (active ? state.builder : state.checked)) return;
    this.guard(baseOffset, () => {
      const builder = this.writeIndexes(baseOffset, bytes, active);
      if (active) state.builder = builder;
    });
  }

  /** Before bytes are appended to active segment `baseOffset` of `size` bytes: its index is up to date. */
  beforeAppend(baseOffset: bigint, size: number): void {
    this.guard(baseOffset, () => this.builderOf(baseOffset, size));
  }

  /** Whole batches were appended to the active segment at `position`: adds their index entries. */
  appended(baseOffset: bigint, slices: readonly Buffer[], position: number): void {
    this.guard(baseOffset, () => {
      const state = this.state(baseOffset);
      const builder = state.builder;
      if (!builder) return; // rebuilt from the bytes on the next need
      const offsets: Buffer[] = [];
      const times: Buffer[] = [];
      let at = position;
      for (const slice of slices) {
        for (const batch of indexedBatches(slice, at)) {
          const added = builder.add(batch);
          if (added) {
            offsets.push(added.offsetIndex);
            times.push(added.timeIndex);
          }
        }
        at += slice.length;
      }
      this.appendTo(state.offsetIndex, Buffer.concat(offsets));
      this.appendTo(state.timeIndex, Buffer.concat(times));
    });
  }

  /**
   * Segment `baseOffset` (`size` bytes) stops being the active one: its time index gets its closing entry
   * and both indexes are fsynced, as Kafka's `onBecomeInactiveSegment` and flush on roll.
   */
  rolled(baseOffset: bigint, size: number): void {
    this.guard(baseOffset, () => {
      const state = this.state(baseOffset);
      const builder = this.builderOf(baseOffset, size);
      this.appendTo(state.timeIndex, builder.finish());
      for (const file of [state.offsetIndex, state.timeIndex]) {
        this.appendTo(file, Buffer.alloc(0), true);
        if (this.host.fsync) fs.fsyncSync(this.host.handles.fd(file, "a"));
      }
      state.builder = undefined;
      state.checked = true;
    });
  }

  /**
   * Segment `baseOffset` was cut to `size` bytes and is the active one now; `firstRemoved` is the first
   * offset cut (undefined: nothing was). Its indexes are rebuilt from the remaining bytes, its `.txnindex`
   * loses the transactions aborted at or after the cut, and snapshots above the cut go (Kafka's
   * `truncateTo` of the indexes and `truncateAndReload` of the producer state).
   */
  truncated(baseOffset: bigint, size: number, firstRemoved: bigint | undefined): void {
    this.guard(baseOffset, () => this.rebuild(baseOffset, size, true));
    if (firstRemoved === undefined) return;
    this.guard(baseOffset, () => {
      const kept = this.txnsOf(baseOffset).filter((t) => t.lastOffset < firstRemoved);
      this.writeTxns(baseOffset, kept);
    });
    for (const offset of [...this.snapshots]) if (offset > firstRemoved) this.deleteSnapshot(offset);
  }

  /** Segment `baseOffset` got new bytes (compaction): its indexes are rebuilt from them. */
  replaced(baseOffset: bigint): void {
    this.guard(baseOffset, () => this.rebuild(baseOffset, undefined, false));
  }

  /** Segment `baseOffset` is being deleted: so are its sidecars and the snapshot named after it. */
  removed(baseOffset: bigint): void {
    const state = this.segments.get(baseOffset);
    if (state) {
      for (const file of [state.offsetIndex, state.timeIndex]) {
        this.host.handles.close(file);
        fs.rmSync(file.path, { force: true });
      }
      fs.rmSync(this.txnIndexPath(baseOffset), { force: true });
      this.segments.delete(baseOffset);
    }
    if (this.snapshots.has(baseOffset)) this.deleteSnapshot(baseOffset);
  }

  /** Every snapshot goes (the log was emptied). */
  removeAllSnapshots(): void {
    for (const offset of [...this.snapshots]) this.deleteSnapshot(offset);
  }

  /** Files the aborted transactions in the `.txnindex` of the segment holding each marker. */
  writeAbortedTxns(txns: readonly IndexedAbortedTxn[]): void {
    const bases = [...this.segments.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const bySegment = new Map<bigint, IndexedAbortedTxn[]>(bases.map((b) => [b, []]));
    for (const t of txns) {
      const base = segmentOf(bases, t.lastOffset);
      if (base !== undefined) bySegment.get(base)!.push({ ...t });
    }
    for (const [base, list] of bySegment) this.guard(base, () => this.writeTxns(base, list));
  }

  /** Adds one aborted transaction (its marker just appended to the last segment) to its `.txnindex`. */
  appendAbortedTxn(txn: IndexedAbortedTxn): void {
    const bases = [...this.segments.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const base = segmentOf(bases, txn.lastOffset);
    if (base === undefined) return;
    this.guard(base, () => {
      const txns = this.txnsOf(base);
      const last = txns[txns.length - 1];
      if (last && last.lastOffset >= txn.lastOffset) return; // already filed
      fs.appendFileSync(this.txnIndexPath(base), formatTransactionIndex([txn]));
      txns.push({ ...txn });
    });
  }

  /**
   * Writes `<offset>.snapshot` unless it already holds these producers, then deletes the snapshots that
   * neither name a segment nor are this latest one (Kafka's `removeStraySnapshots`).
   */
  writeProducerSnapshot(offset: bigint, producers: readonly ProducerStateEntry[]): void {
    const bytes = formatProducerSnapshot(producers.map(toSnapshotEntry));
    const file = path.join(this.host.dir, offsetFileName(offset, PRODUCER_SNAPSHOT_SUFFIX));
    try {
      this.host.handles.retrying(() => this.replaceSnapshot(offset, file, bytes));
    } catch {
      // A snapshot is an optimisation for Kafka's own recovery; the log never needs it.
    }
  }

  /**
   * The producers of `<offset>.snapshot` as Kafka loads them (`readSnapshot`: each with its last batch),
   * or undefined when there is no such file or it is unreadable or corrupt (Kafka deletes a corrupt one
   * and rebuilds from the log).
   */
  readProducerSnapshot(offset: bigint): ProducerStateEntry[] | undefined {
    if (!this.snapshots.has(offset)) return undefined;
    const file = path.join(this.host.dir, offsetFileName(offset, PRODUCER_SNAPSHOT_SUFFIX));
    try {
      return parseProducerSnapshot(this.host.handles.retrying(() => fs.readFileSync(file))).map(
        fromSnapshotEntry,
      );
    } catch {
      return undefined;
    }
  }

  /** Deletes `<offset>.snapshot`, if there is one. */
  removeSnapshot(offset: bigint): void {
    if (this.snapshots.has(offset)) this.deleteSnapshot(offset);
  }

  private replaceSnapshot(offset: bigint, file: string, bytes: Buffer): void {
    if (!this.snapshots.has(offset) || !readOrEmpty(file).equals(bytes)) {
      this.host.writeAtomically(file, bytes, ".tmp");
      this.snapshots.add(offset);
    }
    for (const other of [...this.snapshots]) {
      if (other !== offset && !this.segments.has(other)) this.deleteSnapshot(other);
    }
  }

  /** Closes the cached index descriptors. */
  close(): void {
    for (const state of this.segments.values()) {
      this.host.handles.close(state.offsetIndex);
      this.host.handles.close(state.timeIndex);
      state.builder = undefined;
    }
  }

  private state(baseOffset: bigint): SegmentSidecarState {
    const state = this.segments.get(baseOffset);
    if (!state) throw new Error(`no sidecar state for segment ${baseOffset} in ${this.host.dir}`);
    return state;
  }

  /** The active segment's builder, rebuilding its indexes from its `size` bytes when there is none. */
  private builderOf(baseOffset: bigint, size: number): SegmentIndexBuilder {
    const state = this.state(baseOffset);
    if (state.builder) return state.builder;
    return this.rebuild(baseOffset, size, true);
  }

  /** Rebuilds a segment's indexes from its bytes (all of them when `size` is undefined). */
  private rebuild(baseOffset: bigint, size: number | undefined, active: boolean): SegmentIndexBuilder {
    const state = this.state(baseOffset);
    state.builder = undefined;
    const length = size ?? fs.statSync(path.join(this.host.dir, offsetFileName(baseOffset, ".log"))).size;
    const bytes = length > 0 ? this.host.read(baseOffset, 0, length) : Buffer.alloc(0);
    const builder = this.writeIndexes(baseOffset, bytes, active);
    if (active) state.builder = builder;
    return builder;
  }

  /** Makes a segment's index files what its bytes say; returns the builder to continue them. */
  private writeIndexes(baseOffset: bigint, bytes: Buffer, active: boolean): SegmentIndexBuilder {
    const state = this.state(baseOffset);
    const built = buildSegmentIndexes(baseOffset, bytes, active);
    state.checked = false; // unknown until both files are written
    this.replace(state.offsetIndex, built.offsetIndex, !active);
    this.replace(state.timeIndex, built.timeIndex, !active);
    state.checked = true;
    return built.builder;
  }

  /** Makes `file` hold `bytes`, writing only if it differs; a missing file counts as empty unless `create`. */
  private replace(file: CachedFile, bytes: Buffer, create: boolean): void {
    const exists = fs.existsSync(file.path);
    if (exists && readOrEmpty(file.path).equals(bytes)) return;
    if (!exists && bytes.length === 0 && !create) return;
    this.host.handles.close(file);
    this.host.writeAtomically(file.path, bytes, ".tmp");
  }

  /** Appends to an index file through the descriptor cache (`create`: also when there is nothing to add). */
  private appendTo(file: CachedFile, bytes: Buffer, create = false): void {
    if (bytes.length === 0 && !(create && !fs.existsSync(file.path))) return;
    const fd = this.host.handles.fd(file, "a");
    let done = 0;
    while (done < bytes.length) done += fs.writeSync(fd, bytes, done, bytes.length - done);
  }

  private txnIndexPath(baseOffset: bigint): string {
    return path.join(this.host.dir, offsetFileName(baseOffset, TXN_INDEX_SUFFIX));
  }

  private txnsOf(baseOffset: bigint): IndexedAbortedTxn[] {
    const state = this.state(baseOffset);
    if (state.txns === undefined) {
      const bytes = readOrEmpty(this.txnIndexPath(baseOffset));
      // A torn last entry (a crash while appending) is dropped; the next write replaces the file.
      const whole = bytes.subarray(0, bytes.length - (bytes.length % TXN_INDEX_ENTRY_SIZE));
      state.txns = parseTransactionIndex(whole);
    }
    return state.txns;
  }

  /** Makes segment `baseOffset`'s `.txnindex` hold `txns` (no file when there are none, as Kafka). */
  private writeTxns(baseOffset: bigint, txns: IndexedAbortedTxn[]): void {
    const state = this.state(baseOffset);
    const file = this.txnIndexPath(baseOffset);
    const bytes = formatTransactionIndex(txns);
    const current = state.txns === undefined ? readOrEmpty(file) : formatTransactionIndex(state.txns);
    if (current.equals(bytes) && (bytes.length > 0 || !fs.existsSync(file))) {
      state.txns = txns;
      return;
    }
    state.txns = undefined; // unknown until the write below succeeds
    if (bytes.length === 0) fs.rmSync(file, { force: true });
    else this.host.writeAtomically(file, bytes, ".tmp");
    state.txns = txns;
  }

  private deleteSnapshot(offset: bigint): void {
    fs.rmSync(path.join(this.host.dir, offsetFileName(offset, PRODUCER_SNAPSHOT_SUFFIX)), { force: true });
    this.snapshots.delete(offset);
  }

  /** Runs a sidecar update; on failure forgets what it knew of the segment, so the next need rebuilds it. */
  private guard(baseOffset: bigint, update: () => void): void {
    try {
      this.host.handles.retrying(update);
    } catch {
      const state = this.segments.get(baseOffset);
      if (state) {
        state.builder = undefined;
        state.checked = false;
        state.txns = undefined;
      }
    }
  }
}

const SNAPSHOT_NAME = /^(\d{20})\.snapshot$/;

/** The base offset of the segment holding `offset`: the largest base at or below it. */
function segmentOf(sortedBases: readonly bigint[], offset: bigint): bigint | undefined {
  let found: bigint | undefined;
  for (const base of sortedBases) {
    if (base > offset) break;
    found = base;
  }
  return found;
}

/** A file's bytes; a missing file reads as empty (any other failure is thrown). */
function readOrEmpty(file: string): Buffer {
  try {
    return fs.readFileSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return Buffer.alloc(0);
    throw err;
  }
}
