import * as fs from "#platform/fs";
import * as path from "#platform/path";
import { KafkaStorageError } from "./errors";
import { CachedFile, type FileHandleCache, processFileHandleCache } from "./file-handle-cache";
import type { EpochEntry } from "./leader-epoch-cache";
import {
  formatLeaderEpochCheckpoint,
  LEADER_EPOCH_CHECKPOINT_FILE,
  parseLeaderEpochCheckpoint,
} from "./leader-epoch-checkpoint";
import {
  formatOffsetCheckpoint,
  LOG_START_OFFSET_CHECKPOINT_FILE,
  parseOffsetCheckpoint,
} from "./log-start-offset-checkpoint";
import {
  formatPartitionMetadata,
  PARTITION_METADATA_FILE,
  parsePartitionMetadata,
} from "./partition-metadata-file";
import type { ProducerStateEntry } from "./producer-state-entry";
import type { LogStartProducerState, LogStorage, SegmentInfo } from "./storage";
import { SegmentSidecars } from "./storage-sidecars";
import type { IndexedAbortedTxn } from "./storage-transaction-index";

/** Kafka's segment file name: the base offset, zero-padded to 20 digits, then `.log`. */
export function segmentFileName(baseOffset: bigint): string {
  return `${baseOffset.toString().padStart(20, "0")}.log`;
}

/** Options of `FileLogStorage.open`. */
export interface FileLogStorageOptions {
  /**
   * fsync after every write (default true): an append that returned is durable, which is what
   * "acknowledged" means. Turn off only for tests or benchmarks that do not care about crashes.
   */
  fsync?: boolean;
  /**
   * The partition the directory holds, written into `log-start-offset-checkpoint` entries. Default: parsed
   * from the directory name (Kafka's `topic-partition`); a name that does not parse uses the whole name
   * and partition 0.
   */
  topicPartition?: { topic: string; partition: number };
  /**
   * The topic id (canonical UUID) of the partition: written into Kafka's `partition.metadata`
   * (`version: 0`, `topic_id: <base64>`) when the file is missing or names another id, so Kafka's own
   * tools and brokers recognise the directory.
   */
  topicId?: string;
  /**
   * Where segment file descriptors are kept (`log.max.open.files`): default the process-wide cache, so
   * every file-backed log of the process shares one bound.
   */
  fileHandles?: FileHandleCache;
}

interface FileSegment {
  baseOffset: bigint;
  size: number;
  /** The segment file, opened on use by the handle cache. */
  file: CachedFile;
}

const SEGMENT_NAME = /^(\d{20})\.log$/;

/**
 * `LogStorage` as a directory in Kafka's layout: `00000000000000000000.log` segment files (raw batches,
 * named by base offset), a `leader-epoch-checkpoint` text file and, once the log start offset was moved
 * (DeleteRecords, retention, truncation), a `log-start-offset-checkpoint` in Kafka's offset checkpoint
 * format (Kafka keeps one per data directory; here each partition directory has its own, of one entry),
 * and, given the topic id, Kafka's `partition.metadata`. Synchronous I/O, fsynced on every
 * change unless `fsync: false`. Replacements (compaction, checkpoint) go through a temporary file and an
 * atomic rename, so a crash leaves either the old or the new file.
 *
 * Segment files are opened lazily and kept in a bounded LRU of descriptors (`FileHandleCache`), so the
 * number of partitions a process can host does not depend on `ulimit -n`.
 */
export class FileLogStorage implements LogStorage {
  private segs: FileSegment[] = [];
  /**
   * The text `leader-epoch-checkpoint` holds, as last read or written here: rewriting the same text is
   * skipped (every open and every leadership change saves the cache, and each rename costs a journal
   * commit, which dominated restarts with thousands of partitions).
   */
  private epochCheckpointText: string | undefined;
  /** Kafka's `.index`, `.timeindex`, `.txnindex` and `.snapshot` files next to the segments. */
  private readonly sidecars: SegmentSidecars;

  private constructor(
    /** The partition directory. */
    readonly dir: string,
    private readonly fsync: boolean,
    private readonly topicPartition: { topic: string; partition: number },
    private readonly handles: FileHandleCache,
  ) {
    this.sidecars = new SegmentSidecars({
      dir,
      fsync,
      handles,
      read: (baseOffset, position, length) => this.read(baseOffset, position, length),
      writeAtomically: (file, bytes, suffix) => this.writeAtomically(file, bytes, suffix),
    });
  }

  /**
   * Opens (or creates) the directory and lists its segments. Leftover temporary files of an interrupted
   * replacement are deleted. Validating the contents is the log's job (`PartitionLog.open`).
   */
  static open(dir: string, options: FileLogStorageOptions = {}): FileLogStorage {
    const storage = new FileLogStorage(
      dir,
      options.fsync ?? true,
      options.topicPartition ?? topicPartitionOf(dir),
      options.fileHandles ?? processFileHandleCache,
    );
    try {
      const created = fs.mkdirSync(dir, { recursive: true });
      // A new partition directory is durable once its parent is: an acknowledged append in it must not
      // vanish with the directory on a power loss.
      if (created !== undefined && storage.fsync) syncDirectory(path.dirname(dir));
      const names = new Set<string>();
      for (const name of fs.readdirSync(dir).sort()) {
        if (name.endsWith(".cleaned") || name.endsWith(".tmp")) {
          fs.unlinkSync(path.join(dir, name));
          continue;
        }
        names.add(name);
        const m = SEGMENT_NAME.exec(name);
        if (!m) continue;
        // Only the size now: the file is opened when it is first read or written.
        const file = new CachedFile(path.join(dir, name));
        storage.segs.push({ baseOffset: BigInt(m[1]!), size: fs.statSync(file.path).size, file });
      }
      storage.segs.forEach((seg, i) => {
        storage.sidecars.register(seg.baseOffset, names, i < storage.segs.length - 1);
      });
      storage.sidecars.registerSnapshots(names);
    } catch (err) {
      storage.close();
      throw new KafkaStorageError(`cannot open log directory ${dir}: ${String(err)}`, { cause: err });
    }
    if (options.topicId !== undefined) {
      try {
        storage.writePartitionMetadata(options.topicId);
      } catch (err) {
        storage.close();
        throw err;
      }
    }
    return storage;
  }

  /** @inheritdoc */
  segments(): readonly SegmentInfo[] {
    return this.segs.map((s) => ({ baseOffset: s.baseOffset, sizeInBytes: s.size }));
  }

  /** @inheritdoc */
  read(baseOffset: bigint, position: number, length: number): Buffer {
    const seg = this.segment(baseOffset);
    const out = Buffer.allocUnsafe(length);
    let done = 0;
    while (done < length) {
      const n = this.io(
        () => fs.readSync(this.handles.fd(seg.file), out, done, length - done, position + done),
        "read",
        seg,
      );
      if (n === 0)
        throw new KafkaStorageError(
          `segment ${baseOffset} ended at ${position + done}, before ${position + length}`,
        );
      done += n;
    }
    if (position === 0 && length === seg.size) {
      this.sidecars.wholeRead(baseOffset, out, seg === this.segs[this.segs.length - 1]);
    }
    return out;
  }

  /** @inheritdoc */
  readSlices(baseOffset: bigint, position: number, length: number): Buffer[] {
    if (length > 0) return [this.read(baseOffset, position, length)];
    // A whole read of an empty segment (the log's recovery) checks its index files all the same.
    const seg = this.segs.find((s) => s.baseOffset === baseOffset);
    if (seg && position === 0 && seg.size === 0) {
      this.sidecars.wholeRead(baseOffset, Buffer.alloc(0), seg === this.segs[this.segs.length - 1]);
    }
    return [];
  }

  /** @inheritdoc */
  append(bytes: Buffer | readonly Buffer[], _options?: { transferOwnership?: boolean }): void {
    const seg = this.segs[this.segs.length - 1];
    if (!seg) throw new KafkaStorageError(`append to ${this.dir} with no segment; roll or reset it first`);
    const slices = Buffer.isBuffer(bytes) ? [bytes] : bytes;
    this.sidecars.beforeAppend(seg.baseOffset, seg.size);
    let written = 0;
    try {
      for (const slice of slices) {
        let done = 0;
        while (done < slice.length) {
          const at = seg.size + written + done;
          done += this.io(
            () => fs.writeSync(this.handles.fd(seg.file), slice, done, slice.length - done, at),
            "write",
            seg,
          );
        }
        written += slice.length;
      }
      if (this.fsync) this.io(() => fs.fsyncSync(this.handles.fd(seg.file)), "fsync", seg);
    } catch (error) {
      // All or nothing: bytes written before the failure would come back as valid batches on reopen.
      try {
        fs.truncateSync(seg.file.path, seg.size);
      } catch {
        // The disk is failing; recovery on reopen truncates a torn tail, and the error below says why.
      }
      throw error;
    }
    const position = seg.size;
    seg.size += written;
    this.sidecars.appended(seg.baseOffset, slices, position);
  }

  /** @inheritdoc */
  roll(baseOffset: bigint): void {
    const last = this.segs[this.segs.length - 1];
    if (last && this.fsync) this.io(() => fs.fsyncSync(this.handles.fd(last.file)), "fsync", last);
    if (last) this.sidecars.rolled(last.baseOffset, last.size);
    this.segs.push(this.createSegment(baseOffset));
    this.syncDir();
  }

  /** @inheritdoc */
  truncate(baseOffset: bigint, position: number): void {
    const index = this.segs.findIndex((s) => s.baseOffset === baseOffset);
    const seg = this.segs[index];
    if (!seg) throw new KafkaStorageError(`no segment ${baseOffset} in ${this.dir} to truncate`);
    // The first offset cut: the sidecars drop what refers to it and above.
    const firstRemoved =
      position + 8 <= seg.size
        ? this.read(baseOffset, position, 8).readBigInt64BE(0)
        : this.segs[index + 1]?.baseOffset;
    // Newest first, as a truncation cuts from the end: a crash part way leaves a prefix of the log, never
    // a log with a hole (older segments gone, newer ones that recovery would serve after the gap).
    for (const later of this.segs.splice(index + 1).reverse()) this.removeSegmentFile(later);
    if (position < seg.size) {
      this.io(() => fs.ftruncateSync(this.handles.fd(seg.file), position), "truncate", seg);
      if (this.fsync) this.io(() => fs.fsyncSync(this.handles.fd(seg.file)), "fsync", seg);
      seg.size = position;
    }
    this.sidecars.truncated(baseOffset, seg.size, firstRemoved);
    this.syncDir();
  }

  /** @inheritdoc */
  reset(baseOffset: bigint): void {
    for (const seg of this.segs.splice(0)) this.removeSegmentFile(seg);
    this.sidecars.removeAllSnapshots();
    this.segs.push(this.createSegment(baseOffset));
    this.syncDir();
  }

  /** @inheritdoc */
  replaceSegment(baseOffset: bigint, bytes: Buffer): void {
    const index = this.segs.findIndex((s) => s.baseOffset === baseOffset);
    const seg = this.segs[index];
    if (!seg) throw new KafkaStorageError(`no segment ${baseOffset} in ${this.dir} to replace`);
    const file = path.join(this.dir, segmentFileName(baseOffset));
    // The old descriptor would still read the replaced file's bytes: close it, the next use opens the new one.
    this.handles.close(seg.file);
    this.writeAtomically(file, bytes, ".cleaned");
    this.segs[index] = { baseOffset, size: bytes.length, file: seg.file };
    this.sidecars.replaced(baseOffset);
  }

  /** @inheritdoc */
  deleteSegment(baseOffset: bigint): void {
    const index = this.segs.findIndex((s) => s.baseOffset === baseOffset);
    const seg = this.segs[index];
    if (!seg) throw new KafkaStorageError(`no segment ${baseOffset} in ${this.dir} to delete`);
    if (index === this.segs.length - 1) {
      throw new KafkaStorageError(
        `segment ${baseOffset} is the active segment of ${this.dir}; roll before deleting it`,
      );
    }
    this.segs.splice(index, 1);
    this.removeSegmentFile(seg);
    this.syncDir();
  }

  /** The topic id `partition.metadata` names, undefined when the file is missing or unreadable. */
  readPartitionMetadata(): string | undefined {
    const file = path.join(this.dir, PARTITION_METADATA_FILE);
    if (!fs.existsSync(file)) return undefined;
    try {
      return parsePartitionMetadata(this.readText(file));
    } catch {
      return undefined;
    }
  }

  /** Writes `partition.metadata` for `topicId` unless it already names it. */
  writePartitionMetadata(topicId: string): void {
    if (this.readPartitionMetadata() === topicId) return;
    const text = formatPartitionMetadata(topicId);
    this.writeAtomically(path.join(this.dir, PARTITION_METADATA_FILE), Buffer.from(text, "utf8"), ".tmp");
  }

  /** @inheritdoc */
  readLogStartOffset(): bigint | undefined {
    const file = path.join(this.dir, LOG_START_OFFSET_CHECKPOINT_FILE);
    if (!fs.existsSync(file)) return undefined;
    const entries = parseOffsetCheckpoint(this.readText(file), LOG_START_OFFSET_CHECKPOINT_FILE);
    const { topic, partition } = this.topicPartition;
    const entry =
      entries.find((e) => e.topic === topic && e.partition === partition) ??
      (entries.length === 1 ? entries[0] : undefined);
    return entry?.offset;
  }

  /** @inheritdoc */
  writeLogStartOffset(offset: bigint): void {
    const file = path.join(this.dir, LOG_START_OFFSET_CHECKPOINT_FILE);
    const text = formatOffsetCheckpoint([{ ...this.topicPartition, offset }]);
    this.writeAtomically(file, Buffer.from(text, "utf8"), ".tmp");
  }

  /** @inheritdoc */
  readLeaderEpochCheckpoint(): EpochEntry[] | undefined {
    const file = path.join(this.dir, LEADER_EPOCH_CHECKPOINT_FILE);
    if (!fs.existsSync(file)) return undefined;
    const text = this.readText(file);
    const entries = parseLeaderEpochCheckpoint(text);
    this.epochCheckpointText = text;
    return entries;
  }

  /** @inheritdoc */
  writeLeaderEpochCheckpoint(entries: readonly EpochEntry[]): void {
    const text = formatLeaderEpochCheckpoint(entries);
    if (text === this.epochCheckpointText) return;
    const file = path.join(this.dir, LEADER_EPOCH_CHECKPOINT_FILE);
    this.epochCheckpointText = undefined; // unknown if the write fails half way
    this.writeAtomically(file, Buffer.from(text, "utf8"), ".tmp");
    this.epochCheckpointText = text;
  }

  /** @inheritdoc */
  writeProducerSnapshot(offset: bigint, producers: readonly ProducerStateEntry[]): void {
    this.sidecars.writeProducerSnapshot(offset, producers);
  }

  /**
   * Kafka keeps the producers of deleted batches in the producer snapshot named by the first segment
   * left: this (re)writes that snapshot with them (undefined: none, the snapshot goes).
   */
  writeLogStartProducerState(saved: LogStartProducerState | undefined): void {
    if (saved) this.sidecars.writeProducerSnapshot(saved.offset, saved.state.producers);
    else if (this.segs[0]) this.sidecars.removeSnapshot(this.segs[0].baseOffset);
  }

  /**
   * The producer snapshot named by the first segment, as Kafka's LogLoader loads it: the state of the
   * batches below that segment (deleted by retention or DeleteRecords), each producer with its last batch.
   */
  readLogStartProducerState(): LogStartProducerState | undefined {
    const first = this.segs[0];
    const producers = first && this.sidecars.readProducerSnapshot(first.baseOffset);
    if (!first || !producers) return undefined;
    return { offset: first.baseOffset, state: { producers, unreplicated: [], highWatermarkFloor: -1n } };
  }

  /** @inheritdoc */
  writeAbortedTxns(txns: readonly IndexedAbortedTxn[]): void {
    this.sidecars.writeAbortedTxns(txns);
  }

  /** @inheritdoc */
  appendAbortedTxn(txn: IndexedAbortedTxn): void {
    this.sidecars.appendAbortedTxn(txn);
  }

  /** @inheritdoc */
  close(): void {
    for (const seg of this.segs) this.handles.close(seg.file);
    this.sidecars.close();
    this.segs = [];
  }

  /** A small file's text; running out of descriptors closes idle segments instead of failing the read. */
  private readText(file: string): string {
    return this.handles.retrying(() => fs.readFileSync(file, "utf8"));
  }

  private segment(baseOffset: bigint): FileSegment {
    const seg = this.segs.find((s) => s.baseOffset === baseOffset);
    if (!seg) throw new KafkaStorageError(`no segment ${baseOffset} in ${this.dir}`);
    return seg;
  }

  private createSegment(baseOffset: bigint): FileSegment {
    const file = new CachedFile(path.join(this.dir, segmentFileName(baseOffset)));
    this.io(() => this.handles.create(file, "w+"), "create");
    this.sidecars.register(baseOffset, new Set(), false);
    return { baseOffset, size: 0, file };
  }

  private removeSegmentFile(seg: FileSegment): void {
    this.handles.close(seg.file);
    this.io(() => fs.unlinkSync(seg.file.path), "delete", seg);
    this.sidecars.removed(seg.baseOffset);
  }

  private writeAtomically(file: string, bytes: Buffer, suffix: string): void {
    const tmp = file + suffix;
    this.io(
      () => {
        const fd = fs.openSync(tmp, "w");
        try {
          fs.writeFileSync(fd, bytes);
          if (this.fsync) fs.fsyncSync(fd);
        } finally {
          fs.closeSync(fd);
        }
        fs.renameSync(tmp, file);
      },
      `replace ${path.basename(file)}`,
    );
    this.syncDir();
  }

  private syncDir(): void {
    if (!this.fsync) return;
    this.io(() => syncDirectory(this.dir), "fsync directory");
  }

  private io<T>(op: () => T, what: string, seg?: FileSegment): T {
    try {
      return this.handles.retrying(op);
    } catch (err) {
      const where = seg ? segmentFileName(seg.baseOffset) : this.dir;
      throw new KafkaStorageError(`${what} failed on ${where} in ${this.dir}: ${String(err)}`, {
        cause: err,
      });
    }
  }
}

/** Kafka's partition directory name `topic-partition`, split; anything else is taken whole, partition 0. */
function topicPartitionOf(dir: string): { topic: string; partition: number } {
  const name = path.basename(path.resolve(dir));
  const m = /^(\S+)-(\d+)$/.exec(name);
  return m ? { topic: m[1]!, partition: Number(m[2]) } : { topic: name.replace(/\s/g, "_"), partition: 0 };
}

/**
 * Fsyncs a directory, so the files created, renamed or deleted in it (and directories created in it) survive
 * a power loss, not only a process crash: a rename or a new file is durable only once its directory is.
 */
export function syncDirectory(dir: string): void {
  const fd = fs.openSync(dir, "r");
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}
