import { type EpochEntry, KafkaStorageError, MemoryLogStorage } from "@cluster-mirror/log";

/** A broker's disk in memory that can fill up (a fault for tests and the simulator). */
export interface MemoryDisk {
  /** While true, every write that stores bytes fails as ENOSPC does; reads, truncation and deletion work. */
  full: boolean;
}

/**
 * `MemoryLogStorage` on a `MemoryDisk`: while the disk is full, appends, compaction's segment rewrites and
 * the checkpoint files (leader epochs, log start offset) fail with `KafkaStorageError`, as they would on a
 * full disk; rolling a segment (an empty file) and cutting or deleting bytes still work.
 */
export class MemoryDiskLogStorage extends MemoryLogStorage {
  constructor(private readonly disk: MemoryDisk) {
    super();
  }

  override append(bytes: Buffer | readonly Buffer[], options?: { transferOwnership?: boolean }): void {
    this.requireSpace("append");
    super.append(bytes, options);
  }

  override replaceSegment(baseOffset: bigint, bytes: Buffer): void {
    this.requireSpace(`rewrite of segment ${baseOffset}`);
    super.replaceSegment(baseOffset, bytes);
  }

  override writeLeaderEpochCheckpoint(entries: readonly EpochEntry[]): void {
    this.requireSpace("leader-epoch-checkpoint write");
    super.writeLeaderEpochCheckpoint(entries);
  }

  override writeLogStartOffset(offset: bigint): void {
    this.requireSpace("log-start-offset-checkpoint write");
    super.writeLogStartOffset(offset);
  }

  private requireSpace(what: string): void {
    if (this.disk.full) throw new KafkaStorageError(`${what} failed: ENOSPC (no space left on device)`);
  }
}
