import {
  type FileHandleCache,
  FileLogStorage,
  KafkaStorageError,
  type LogStorage,
  type MemoryLogStorage,
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
  /** Deletes the log of a partition (topic deleted). */
  deleteLog(topic: string, partition: number): void;
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
  }

  openLog(topic: string, partition: number, topicId?: string): LogStorage {
    return FileLogStorage.open(path.join(this.dir, `${topic}-${partition}`), {
      ...this.options,
      ...(topicId === undefined ? {} : { topicId }),
    });
  }

  deleteLog(topic: string, partition: number): void {
    fs.rmSync(path.join(this.dir, `${topic}-${partition}`), { recursive: true, force: true });
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
        fs.writeSync(fd, text);
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
