import { describe, expect, it } from "vitest";
import { type EpochEntry, ManualClock, MemoryLogStorage, PartitionLog } from "../src/index";
import { dataBatch } from "./helpers";

/** A memory storage that counts the leader-epoch checkpoints written. */
class CountingStorage extends MemoryLogStorage {
  epochWrites = 0;
  override writeLeaderEpochCheckpoint(entries: readonly EpochEntry[]): void {
    this.epochWrites++;
    super.writeLeaderEpochCheckpoint(entries);
  }
}

const open = (storage: MemoryLogStorage) => PartitionLog.open(storage, { clock: new ManualClock(0) });

describe("opening a log writes its leader-epoch checkpoint only when recovery changed it", () => {
  it("a new log writes one; reopening an unchanged log writes none; a dropped entry is written", () => {
    const storage = new CountingStorage();
    const log = open(storage);
    expect(storage.epochWrites).toBe(1); // none existed
    log.appendAsLeader(dataBatch({ pid: 1n, seq: 0 }), 0);
    log.appendAsLeader(dataBatch({ pid: 1n, seq: 1 }), 1);
    storage.epochWrites = 0;

    const again = open(storage); // a restart: the same epochs are rebuilt
    expect(storage.epochWrites).toBe(0);
    expect(again.epochEntries()).toEqual(log.epochEntries());

    // A new leader epoch with no batch yet: recovery drops it (it names nothing stored), and says so.
    again.assignEpochStartOffset(2, again.logEndOffset);
    storage.epochWrites = 0;
    const third = open(storage);
    expect(storage.epochWrites).toBe(1);
    expect(third.epochEntries().map((e) => e.epoch)).toEqual([0, 1]);
    expect(storage.readLeaderEpochCheckpoint()).toEqual(third.epochEntries());
  });
});
