import * as fs from "#platform/fs";
import * as path from "#platform/path";
import { KafkaStorageError } from "./errors";
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
import type { LogStorage, SegmentInfo } from "./storage";

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
}

interface FileSegment {
  baseOffset: bigint;
  size: number;
  fd: number;
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
 */
export class FileLogStorage implements LogStorage {
  private segs: FileSegment[] = [];

  private constructor(
    /** The partition directory. */
    readonly dir: string,
    private readonly fsync: boolean,
    private readonly topicPartition: { topic: string; partition: number },
  ) {}

  /**
   * Opens (or creates) the directory and lists its segments. Leftover temporary files of an interrupted
   * replacement are deleted. Validating the contents is the log's job (`PartitionLog.open`).
   */
  static open(dir: string, options: FileLogStorageOptions = {}): FileLogStorage {
    const storage = new FileLogStorage(
      dir,
      options.fsync ?? true,
      options.topicPartition ?? topicPartitionOf(dir),
    );
    try {
      fs.mkdirSync(dir, { recursive: true });
      for (const name of fs.readdirSync(dir).sort()) {
        if (name.endsWith(".cleaned") || name.endsWith(".tmp")) {
          fs.unlinkSync(path.join(dir, name));
          continue;
        }
        const m = SEGMENT_NAME.exec(name);
        if (!m) continue;
        const fd = fs.openSync(path.join(dir, name), "r+");
        storage.segs.push({ baseOffset: BigInt(m[1]!), size: fs.fstatSync(fd).size, fd });
      }
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
      const n = this.io(() => fs.readSync(seg.fd, out, done, length - done, position + done), "read", seg);
      if (n === 0)
        throw new KafkaStorageError(
          `segment ${baseOffset} ended at ${position + done}, before ${position + length}`,
        );
      done += n;
    }
    return out;
  }

  /** @inheritdoc */
  readSlices(baseOffset: bigint, position: number, length: number): Buffer[] {
    return length === 0 ? [] : [this.read(baseOffset, position, length)];
  }

  /** @inheritdoc */
  append(bytes: Buffer | readonly Buffer[], _options?: { transferOwnership?: boolean }): void {
    const seg = this.segs[this.segs.length - 1];
    if (!seg) throw new KafkaStorageError(`append to ${this.dir} with no segment; roll or reset it first`);
    const slices = Buffer.isBuffer(bytes) ? [bytes] : bytes;
    let written = 0;
    try {
      for (const slice of slices) {
        let done = 0;
        while (done < slice.length) {
          const at = seg.size + written + done;
          done += this.io(() => fs.writeSync(seg.fd, slice, done, slice.length - done, at), "write", seg);
        }
        written += slice.length;
      }
      if (this.fsync) this.io(() => fs.fsyncSync(seg.fd), "fsync", seg);
    } catch (error) {
      // All or nothing: bytes written before the failure would come back as valid batches on reopen.
      try {
        fs.ftruncateSync(seg.fd, seg.size);
      } catch {
        // The disk is failing; recovery on reopen truncates a torn tail, and the error below says why.
      }
      throw error;
    }
    seg.size += written;
  }

  /** @inheritdoc */
  roll(baseOffset: bigint): void {
    const last = this.segs[this.segs.length - 1];
    if (last && this.fsync) this.io(() => fs.fsyncSync(last.fd), "fsync", last);
    this.segs.push(this.createSegment(baseOffset));
    this.syncDir();
  }

  /** @inheritdoc */
  truncate(baseOffset: bigint, position: number): void {
    const index = this.segs.findIndex((s) => s.baseOffset === baseOffset);
    const seg = this.segs[index];
    if (!seg) throw new KafkaStorageError(`no segment ${baseOffset} in ${this.dir} to truncate`);
    for (const later of this.segs.splice(index + 1)) this.removeSegmentFile(later);
    if (position < seg.size) {
      this.io(() => fs.ftruncateSync(seg.fd, position), "truncate", seg);
      if (this.fsync) this.io(() => fs.fsyncSync(seg.fd), "fsync", seg);
      seg.size = position;
    }
    this.syncDir();
  }

  /** @inheritdoc */
  reset(baseOffset: bigint): void {
    for (const seg of this.segs.splice(0)) this.removeSegmentFile(seg);
    this.segs.push(this.createSegment(baseOffset));
    this.syncDir();
  }

  /** @inheritdoc */
  replaceSegment(baseOffset: bigint, bytes: Buffer): void {
    const index = this.segs.findIndex((s) => s.baseOffset === baseOffset);
    const seg = this.segs[index];
    if (!seg) throw new KafkaStorageError(`no segment ${baseOffset} in ${this.dir} to replace`);
    const file = path.join(this.dir, segmentFileName(baseOffset));
    this.writeAtomically(file, bytes, ".cleaned");
    fs.closeSync(seg.fd);
    this.segs[index] = { baseOffset, size: bytes.length, fd: fs.openSync(file, "r+") };
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
      return parsePartitionMetadata(fs.readFileSync(file, "utf8"));
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
    const entries = parseOffsetCheckpoint(fs.readFileSync(file, "utf8"), LOG_START_OFFSET_CHECKPOINT_FILE);
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
    return parseLeaderEpochCheckpoint(fs.readFileSync(file, "utf8"));
  }

  /** @inheritdoc */
  writeLeaderEpochCheckpoint(entries: readonly EpochEntry[]): void {
    const file = path.join(this.dir, LEADER_EPOCH_CHECKPOINT_FILE);
    this.writeAtomically(file, Buffer.from(formatLeaderEpochCheckpoint(entries), "utf8"), ".tmp");
  }

  /** @inheritdoc */
  close(): void {
    for (const seg of this.segs) fs.closeSync(seg.fd);
    this.segs = [];
  }

  private segment(baseOffset: bigint): FileSegment {
    const seg = this.segs.find((s) => s.baseOffset === baseOffset);
    if (!seg) throw new KafkaStorageError(`no segment ${baseOffset} in ${this.dir}`);
    return seg;
  }

  private createSegment(baseOffset: bigint): FileSegment {
    const file = path.join(this.dir, segmentFileName(baseOffset));
    const fd = this.io(() => fs.openSync(file, "w+"), "create");
    return { baseOffset, size: 0, fd };
  }

  private removeSegmentFile(seg: FileSegment): void {
    fs.closeSync(seg.fd);
    this.io(() => fs.unlinkSync(path.join(this.dir, segmentFileName(seg.baseOffset))), "delete", seg);
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
    this.io(() => {
      const fd = fs.openSync(this.dir, "r");
      try {
        fs.fsyncSync(fd);
      } finally {
        fs.closeSync(fd);
      }
    }, "fsync directory");
  }

  private io<T>(op: () => T, what: string, seg?: FileSegment): T {
    try {
      return op();
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
