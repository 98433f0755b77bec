import { describe, expect, it } from "vitest";
import {
  type EpochEntry,
  KafkaStorageError,
  ManualClock,
  MemoryLogStorage,
  PartitionLog,
} from "../src/index";
import { dataBatch } from "./helpers";

/** Memory storage whose leader epoch checkpoint writes fail while `full`, as on a full disk. */
class FullDiskStorage extends MemoryLogStorage {
  full = false;
  writes = 0;
  override writeLeaderEpochCheckpoint(entries: readonly EpochEntry[]): void {
    if (this.full) throw new KafkaStorageError("leader-epoch-checkpoint write failed: ENOSPC");
    this.writes++;
    super.writeLeaderEpochCheckpoint(entries);
  }
}

const config = { clock: new ManualClock(0) };

describe("a leader epoch checkpoint write that fails", () => {
  it("does not fail the leader change; the next append writes it first, and fails while it cannot", () => {
    const storage = new FullDiskStorage();
    const log = PartitionLog.open(storage, config);
    log.appendAsLeader(dataBatch(), 1);
    storage.full = true;
    // A new leader epoch (a leader change) goes on; its checkpoint is stale.
    expect(log.assignEpochStartOffset(3, log.logEndOffset)).toBe(true);
    expect(log.latestEpoch).toBe(3);
    expect(storage.readLeaderEpochCheckpoint()).toEqual([{ epoch: 1, startOffset: 0n }]);
    // Nothing is stored while the checkpoint cannot be brought up to date.
    expect(() => log.appendAsLeader(dataBatch(), 3)).toThrow(KafkaStorageError);
    expect(() => log.retryEpochCheckpoint()).toThrow(KafkaStorageError);
    expect(log.logEndOffset).toBe(1n);
    storage.full = false;
    log.retryEpochCheckpoint();
    expect(storage.readLeaderEpochCheckpoint()).toEqual(log.epochEntries());
    // Nothing is rewritten when the checkpoint is current.
    const writes = storage.writes;
    log.retryEpochCheckpoint();
    expect(storage.writes).toBe(writes);
    expect(log.appendAsLeader(dataBatch(), 3).firstOffset).toBe(1n);
  });

  it("does not fail an append whose bytes are in; reopening rebuilds the missing entry from its batch", () => {
    const storage = new FullDiskStorage();
    const log = PartitionLog.open(storage, config);
    log.appendAsFollower(dataBatch({ baseOffset: 0n, leaderEpoch: 1 }));
    storage.full = true;
    expect(log.appendAsFollower(dataBatch({ baseOffset: 1n, leaderEpoch: 4 })).batchCount).toBe(1);
    expect(storage.readLeaderEpochCheckpoint()).toEqual([{ epoch: 1, startOffset: 0n }]);
    expect(PartitionLog.open(storage, config).epochEntries()).toEqual(log.epochEntries());
  });

  it("after a truncation it could not checkpoint, reopening gives the cache of the log in memory", () => {
    const storage = new FullDiskStorage();
    const log = PartitionLog.open(storage, config);
    for (const leaderEpoch of [1, 1, 5, 5]) {
      log.appendAsFollower(dataBatch({ baseOffset: log.logEndOffset, leaderEpoch }));
    }
    storage.full = true;
    // Divergence: the log is cut to 2, where a leader whose batches carry epoch 3 goes on. The checkpoint
    // still names epoch 5 at 2: stored, batches of epoch 3 there would be read as epoch 5 after a restart.
    log.truncateTo(2n);
    expect(storage.readLeaderEpochCheckpoint()).toEqual([
      { epoch: 1, startOffset: 0n },
      { epoch: 5, startOffset: 2n },
    ]);
    expect(() => log.appendAsFollower(dataBatch({ baseOffset: 2n, leaderEpoch: 3 }))).toThrow(
      KafkaStorageError,
    );
    expect(PartitionLog.open(storage, config).epochEntries()).toEqual(log.epochEntries());
    storage.full = false;
    for (let i = 0; i < 2; i++)
      log.appendAsFollower(dataBatch({ baseOffset: log.logEndOffset, leaderEpoch: 3 }));
    expect(log.epochEntries()).toEqual([
      { epoch: 1, startOffset: 0n },
      { epoch: 3, startOffset: 2n },
    ]);
    const reopened = PartitionLog.open(storage, config);
    expect(reopened.epochEntries()).toEqual(log.epochEntries());
    expect(reopened.endOffsetForEpoch(5)).toEqual(log.endOffsetForEpoch(5));
  });
});
