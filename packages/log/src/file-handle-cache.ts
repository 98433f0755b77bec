import * as fs from "#platform/fs";
import { InvalidConfigError } from "./errors";

/**
 * Default of `log.max.open.files`: how many segment files a process keeps open at once. Well under the
 * usual `ulimit -n 1024`, which Node itself (stdio, the event loop, the thread pool), sockets and the
 * short-lived files of checkpoints also draw on.
 */
export const DEFAULT_MAX_OPEN_FILES = 256;

/**
 * A file that may or may not be open: the cache opens it on use and closes it when it is the least
 * recently used one and another file needs the slot. Owners never keep the descriptor beyond one
 * synchronous operation.
 */
export class CachedFile {
  /** The open descriptor, while the cache holds one. */
  fd: number | undefined = undefined;

  constructor(
    /** Path of the file. */
    readonly path: string,
  ) {}
}

/**
 * An LRU of open file descriptors with a cap (`log.max.open.files`). A broker with 10,000 partitions
 * cannot keep 10,000 segment files open under `ulimit -n 1024` (Kafka can, as it asks operators for a
 * limit of 100,000): here segments are opened lazily, on first read or write, and the least recently used
 * one is closed when the cap is reached. Everything is synchronous, so a descriptor returned by `fd()`
 * stays open until the caller's current operation returns. When opening fails with EMFILE/ENFILE anyway
 * (other parts of the process use descriptors too), idle files are closed and the open is tried again.
 */
export class FileHandleCache {
  /** Open files, least recently used first (a Map keeps insertion order). */
  private readonly open = new Map<CachedFile, number>();
  private peak = 0;

  constructor(
    /** The most files open at once; at least 1. */
    readonly maxOpenFiles: number = DEFAULT_MAX_OPEN_FILES,
  ) {
    if (!Number.isInteger(maxOpenFiles) || maxOpenFiles < 1) {
      throw new InvalidConfigError(
        `log.max.open.files must be a positive integer, got ${maxOpenFiles}; use e.g. ${DEFAULT_MAX_OPEN_FILES}`,
      );
    }
  }

  /** Number of files open now. */
  get openCount(): number {
    return this.open.size;
  }

  /** The most files that were open at once. */
  get peakOpenCount(): number {
    return this.peak;
  }

  /**
   * The descriptor of `file`, opened with `flags` (default read-write, `r+`) if it is not open, which may
   * close the least recently used file. Valid until the caller's synchronous operation ends. A file is
   * always used with the same flags.
   */
  fd(file: CachedFile, flags = "r+"): number {
    const fd = file.fd;
    if (fd !== undefined) {
      // Most recently used goes last.
      this.open.delete(file);
      this.open.set(file, fd);
      return fd;
    }
    return this.adopt(file, this.openWithRetry(file.path, flags));
  }

  /**
   * Creates (or empties) `file` with `flags` (e.g. `w+`) and keeps the new descriptor cached, as the
   * first use of a new segment.
   */
  create(file: CachedFile, flags: string): number {
    this.close(file);
    return this.adopt(file, this.openWithRetry(file.path, flags));
  }

  /** Closes `file` if it is open (before it is deleted or replaced, or when its log closes). */
  close(file: CachedFile): void {
    const fd = file.fd;
    if (fd === undefined) return;
    this.open.delete(file);
    file.fd = undefined;
    fs.closeSync(fd);
  }

  private adopt(file: CachedFile, fd: number): number {
    this.evictDownTo(this.maxOpenFiles - 1);
    file.fd = fd;
    this.open.set(file, fd);
    if (this.open.size > this.peak) this.peak = this.open.size;
    return fd;
  }

  /** Opens a file, making room first; when the process is out of descriptors, closes idle ones and retries. */
  private openWithRetry(file: string, flags: string): number {
    this.evictDownTo(this.maxOpenFiles - 1);
    return this.retrying(() => fs.openSync(file, flags));
  }

  /**
   * Runs `op` (file I/O that opens descriptors of its own: a checkpoint's temporary file, a directory
   * fsync); when it fails because the process is out of descriptors (EMFILE/ENFILE), closes half of the
   * idle cached files and runs it again, until it succeeds or nothing is left to close.
   */
  retrying<T>(op: () => T): T {
    for (;;) {
      try {
        return op();
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if ((code !== "EMFILE" && code !== "ENFILE") || this.open.size === 0) throw err;
        this.evictDownTo(Math.floor(this.open.size / 2));
      }
    }
  }

  private evictDownTo(count: number): void {
    for (const file of this.open.keys()) {
      if (this.open.size <= count) return;
      this.close(file);
    }
  }
}

/**
 * The cache every `FileLogStorage` of this process uses unless given its own: one bound for all
 * partitions of all file-backed clusters in the process.
 */
export const processFileHandleCache = new FileHandleCache();
