import {
  type FileHandleCache,
  FileLogStorage,
  KafkaStorageError,
  type LogStorage,
  type MemoryLogStorage,
  PARTITION_METADATA_FILE,
  parsePartitionMetadata,
  syncDirectory,
} from "@cluster-mirror/log";
import * as fs from "#platform/fs";
import * as path from "#platform/path";
import { type MemoryDisk, MemoryDiskLogStorage } from "./memory-disk";

/**
 * One broker's disk: partition logs (Kafka's `topic-partition` directories) and small checkpoint files
 * (high watermarks). What a broker finds here after a restart is what it had before the crash.
 */
export interface DataDir {
  /**
   * Opens (or creates) the log storage of one partition replica; `topicId` (canonical UUID) goes into
   * Kafka's `partition.metadata` where the storage has files.
   */
  openLog(topic: string, partition: number, topicId?: string): LogStorage;
  /**
   * Deletes the log of a partition (topic deleted; `topicId`: its id, canonical UUID). Once this returns,
   * nothing opens that log again, even if removing its files failed; throws KafkaStorageError otherwise.
   */
  deleteLog(topic: string, partition: number, topicId?: string): void;
  /** Partition directories present (`topic-partition`). */
  listLogs(): string[];
  readCheckpoint(name: string): string | undefined;
  writeCheckpoint(name: string, text: string): void;
}

/**
 * A disk in memory that outlives the broker process: a restarted broker sees the same logs, like a broker
 * restarted on the same disk. For tests and the simulator.
 */
export class MemoryDataDir implements DataDir {
  private readonly logs = new Map<string, MemoryLogStorage>();
  private readonly checkpoints = new Map<string, string>();
  /** Whether the disk is full (see `MemoryDisk`); the simulator fills and empties it. */
  readonly disk: MemoryDisk = { full: false };

  openLog(topic: string, partition: number): LogStorage {
    const key = `${topic}-${partition}`;
    let storage = this.logs.get(key);
    if (!storage) {
      storage = new MemoryDiskLogStorage(this.disk);
      this.logs.set(key, storage);
    }
    return storage;
  }

  deleteLog(topic: string, partition: number): void {
    this.logs.delete(`${topic}-${partition}`);
  }

  listLogs(): string[] {
    return [...this.logs.keys()].sort();
  }

  readCheckpoint(name: string): string | undefined {
    return this.checkpoints.get(name);
  }

  writeCheckpoint(name: string, text: string): void {
    if (this.disk.full) throw new KafkaStorageError(`${name} write failed: ENOSPC (no space left on device)`);
    this.checkpoints.set(name, text);
  }
}

/** Suffix of a log directory renamed for deletion (Kafka's `LogManager.DeleteDirSuffix`). */
const DELETE_SUFFIX = "-delete";
/** The longest file name most file systems take (ext4, xfs: 255 bytes). */
const MAX_NAME = 255;

/** Removes a directory tree; a failure leaves it for the next start of the data dir to remove. */
function removeQuietly(dir: string): void {
  try {
    fs.rmSync(dir, { recursive: true, force: true });
  } catch {
    // Renamed away already: nothing opens it; the next FileDataDir over this directory retries.
  }
}

/** The topic id a log directory's `partition.metadata` names, undefined when it has none readable. */
function topicIdIn(dir: string): string | undefined {
  try {
    return parsePartitionMetadata(fs.readFileSync(path.join(dir, PARTITION_METADATA_FILE), "utf8"));
  } catch {
    return undefined;
  }
}

/** A real directory in Kafka's layout: `<dir>/<topic>-<partition>/00000000000000000000.log` and checkpoints. */
export class FileDataDir implements DataDir {
  constructor(
    readonly dir: string,
    /** `fileHandles`: the bounded cache of open segment files (default: the process-wide one). */
    private readonly options: { fsync?: boolean; fileHandles?: FileHandleCache } = {},
  ) {
    const created = fs.mkdirSync(dir, { recursive: true });
    // The broker's directory is durable once its parent is (its partitions' directories once it is).
    if (created !== undefined && (options.fsync ?? true)) syncDirectory(path.dirname(dir));
    // Logs renamed for deletion whose files could not all be removed then (a crash, a failing disk).
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      if (e.isDirectory() && e.name.endsWith(DELETE_SUFFIX)) removeQuietly(path.join(dir, e.name));
    }
  }

  openLog(topic: string, partition: number, topicId?: string): LogStorage {
    const dir = path.join(this.dir, `${topic}-${partition}`);
    // A directory of another topic of the name (deleted while its files could not be renamed away) is
    // never this topic's log: Kafka refuses it (InconsistentTopicIdException); it is deleted here, as its
    // topic was.
    const found = topicId === undefined ? undefined : topicIdIn(dir);
    if (found !== undefined && found !== topicId) this.deleteDir(topic, partition, found);
    return FileLogStorage.open(dir, { ...this.options, ...(topicId === undefined ? {} : { topicId }) });
  }

  /**
   * As Kafka's LogManager: the directory is first renamed to `<topic>-<partition>.<topic id>-delete`, one
   * atomic step after which no partition directory of the name exists, then its files are removed. A
   * removal that fails is finished when the data dir is opened next.
   */
  deleteLog(topic: string, partition: number, topicId?: string): void {
    this.deleteDir(topic, partition, topicId ?? topicIdIn(path.join(this.dir, `${topic}-${partition}`)));
  }

  private deleteDir(topic: string, partition: number, topicId: string | undefined): void {
    const dir = path.join(this.dir, `${topic}-${partition}`);
    // `<topic>-<partition>.<id>-delete`, the topic cut short so the name fits a file name (255 bytes; topic
    // names are ASCII, up to 249 characters), as Kafka's LocalLog.logDeleteDirName does.
    const suffix = `-${partition}.${(topicId ?? "").replace(/-/g, "").padStart(32, "0")}${DELETE_SUFFIX}`;
    const aside = path.join(this.dir, topic.slice(0, MAX_NAME - suffix.length) + suffix);
    try {
      removeQuietly(aside);
      fs.renameSync(dir, aside);
      if (this.options.fsync ?? true) syncDirectory(this.dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
      throw new KafkaStorageError(`cannot delete the log directory ${dir}: ${String(error)}`, {
        cause: error,
      });
    }
    removeQuietly(aside);
  }

  listLogs(): string[] {
    return fs
      .readdirSync(this.dir, { withFileTypes: true })
      .filter((e) => e.isDirectory() && /-\d+$/.test(e.name))
      .map((e) => e.name)
      .sort();
  }

  readCheckpoint(name: string): string | undefined {
    try {
      return fs.readFileSync(path.join(this.dir, name), "utf8");
    } catch {
      return undefined;
    }
  }

  writeCheckpoint(name: string, text: string): void {
    const file = path.join(this.dir, name);
    const tmp = `${file}.tmp`;
    try {
      const fd = fs.openSync(tmp, "w");
      try {
        // write(2) may write less than asked: a short write renamed into place would be a torn checkpoint.
        const bytes = Buffer.from(text, "utf8");
        for (let done = 0; done < bytes.length; ) done += fs.writeSync(fd, bytes, done, bytes.length - done);
        if (this.options.fsync ?? true) fs.fsyncSync(fd);
      } finally {
        fs.closeSync(fd);
      }
      fs.renameSync(tmp, file);
      // The rename is durable once the directory is: a power loss could otherwise bring back the old file.
      if (this.options.fsync ?? true) syncDirectory(this.dir);
    } catch (error) {
      // A full or failing disk: the broker's callers retry a KAFKA_STORAGE_ERROR at their next interval.
      throw new KafkaStorageError(`${name} write failed in ${this.dir}: ${String(error)}`, { cause: error });
    }
  }
}
