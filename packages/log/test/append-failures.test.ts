import * as fs from "node:fs";
import * as path from "node:path";
import { CorruptRecordError, encodeRecordBatch } from "@cluster-mirror/protocol";
import { afterEach, describe, expect, it } from "vitest";
import {
  FileLogStorage,
  KafkaStorageError,
  ManualClock,
  MemoryLogStorage,
  PartitionLog,
  segmentFileName,
} from "../src/index";
import { dataBatch, removeDir, tempDir } from "./helpers";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) removeDir(d);
});

function dir(): string {
  const d = tempDir();
  dirs.push(d);
  return d;
}

function openFileLog(at: string, segmentBytes = 1 << 20): PartitionLog {
  return PartitionLog.open(FileLogStorage.open(at), { clock: new ManualClock(0), segmentBytes });
}

/** A control batch with a valid CRC whose record key is 2 bytes: too short to name a control type. */
function untypeableControlBatch(baseOffset: bigint): Buffer {
  return encodeRecordBatch({
    baseOffset,
    partitionLeaderEpoch: 0,
    isControl: true,
    producerId: 7n,
    producerEpoch: 0,
    baseSequence: -1,
    baseTimestamp: 1000n,
    records: [
      {
        attributes: 0,
        offsetDelta: 0,
        timestampDelta: 0n,
        key: Buffer.from([0, 0]),
        value: null,
        headers: [],
      },
    ],
  });
}

/** Memory storage whose next append fails, once, as a full or failing disk does. */
class FailingOnceStorage extends MemoryLogStorage {
  failNextAppend = false;
  failTruncate = false;
  override append(bytes: Buffer | readonly Buffer[], options?: { transferOwnership?: boolean }): void {
    if (this.failNextAppend) {
      this.failNextAppend = false;
      throw new KafkaStorageError("write failed: ENOSPC");
    }
    super.append(bytes, options);
  }
  override truncate(baseOffset: bigint, position: number): void {
    if (this.failTruncate) throw new KafkaStorageError("truncate failed: EIO");
    super.truncate(baseOffset, position);
  }
}

describe("a follower append with a control batch too corrupt to type", () => {
  it("stores nothing when the batch is not the last one (offsets as numbers)", () => {
    const at = dir();
    const log = openFileLog(at);
    log.appendAsFollower(dataBatch({ baseOffset: 0n, leaderEpoch: 0 }));
    const size = log.segments()[0]!.sizeInBytes;
    const fetched = Buffer.concat([
      untypeableControlBatch(1n),
      dataBatch({ baseOffset: 2n, leaderEpoch: 0 }),
    ]);
    expect(() => log.appendAsFollower(fetched)).toThrow(CorruptRecordError);
    expect(log.logEndOffset).toBe(1n);
    expect(log.segments()[0]!.sizeInBytes).toBe(size);
    // The log goes on: a good fetch appends where the bad one would have.
    log.appendAsFollower(dataBatch({ baseOffset: 1n, leaderEpoch: 0 }));
    log.close();
    const reopened = openFileLog(at);
    expect(reopened.logEndOffset).toBe(2n);
    expect(reopened.recovery.truncatedTail).toBeUndefined();
    reopened.close();
  });

  it("stores nothing on the general path either (offsets beyond 2^53)", () => {
    const log = PartitionLog.open(new MemoryLogStorage(), { clock: new ManualClock(0) });
    const base = 2n ** 53n;
    log.truncateFullyAndStartAt(base);
    const fetched = Buffer.concat([
      untypeableControlBatch(base),
      dataBatch({ baseOffset: base + 1n, leaderEpoch: 0 }),
    ]);
    expect(() => log.appendAsFollower(fetched)).toThrow(CorruptRecordError);
    expect(log.logEndOffset).toBe(base);
    expect(log.segments()[0]!.sizeInBytes).toBe(0);
  });

  it("stores nothing when the append spans more offsets than one segment indexes (split between segments)", () => {
    const log = PartitionLog.open(new MemoryLogStorage(), { clock: new ManualClock(0) });
    const fetched = Buffer.concat([
      dataBatch({ baseOffset: 10n, leaderEpoch: 0 }),
      untypeableControlBatch(3_000_000_000n),
    ]);
    expect(() => log.appendAsFollower(fetched)).toThrow(CorruptRecordError);
    expect(log.logEndOffset).toBe(0n);
    expect(log.segments().map((s) => s.sizeInBytes)).toEqual([0]);
  });

  it("is cut by recovery when a segment already holds one, and the log opens", () => {
    const at = dir();
    const good = dataBatch({ baseOffset: 0n, leaderEpoch: 0 });
    fs.mkdirSync(at, { recursive: true });
    fs.writeFileSync(
      path.join(at, segmentFileName(0n)),
      Buffer.concat([good, untypeableControlBatch(1n), dataBatch({ baseOffset: 2n, leaderEpoch: 0 })]),
    );
    const log = openFileLog(at);
    expect(log.logEndOffset).toBe(1n);
    expect(log.recovery.truncatedTail?.position).toBe(good.length);
    expect(log.recovery.truncatedTail?.reason).toMatch(/control record key/);
    log.close();
  });
});

describe("a storage error right after a segment roll", () => {
  const config = { clock: new ManualClock(0), segmentBytes: 100 };

  it("undoes the roll, so the next append at the log end survives a restart", () => {
    const storage = new FailingOnceStorage();
    const log = PartitionLog.open(storage, config);
    log.appendAsFollower(dataBatch({ baseOffset: 0n, leaderEpoch: 1, count: 2 }));
    // A follower of a compacted source: the next batch is at 20, and rolls a segment there.
    storage.failNextAppend = true;
    expect(() => log.appendAsFollower(dataBatch({ baseOffset: 20n, leaderEpoch: 1 }))).toThrow(
      KafkaStorageError,
    );
    expect(log.logEndOffset).toBe(2n);
    expect(log.segments().map((s) => s.baseOffset)).toEqual([0n]);
    // The replica is elected and acknowledges a produce at the log end.
    expect(log.appendAsLeader(dataBatch(), 2).firstOffset).toBe(2n);
    const reopened = PartitionLog.open(storage, config);
    expect(reopened.recovery.truncatedTail).toBeUndefined();
    expect(reopened.logEndOffset).toBe(3n);
  });

  it("drops the roll's producer-state checkpoint, which later appends below its offset would make stale", () => {
    const storage = new FailingOnceStorage();
    const roomy = { clock: new ManualClock(0), segmentBytes: 1000 };
    const log = PartitionLog.open(storage, roomy);
    log.appendAsFollower(dataBatch({ baseOffset: 0n, leaderEpoch: 1, count: 2 }));
    // A large batch at 20 rolls a segment there (state checkpointed "before 20"), and fails.
    storage.failNextAppend = true;
    const large = dataBatch({ baseOffset: 20n, leaderEpoch: 1, values: ["x".repeat(1000)] });
    expect(() => log.appendAsFollower(large)).toThrow(KafkaStorageError);
    // Smaller appends fit the old segment: producer 5 writes at 2, then 3-12, 13-22 and 23.
    log.appendAsLeader(dataBatch({ pid: 5n, seq: 0 }), 2);
    for (const count of [10, 10, 1]) log.appendAsLeader(dataBatch({ count }), 2);
    expect(log.segments().map((s) => s.baseOffset)).toEqual([0n]);
    // Restoring a checkpoint "before 20" and replaying from 20 would forget producer 5.
    log.truncateTo(23n);
    expect(log.logEndOffset).toBe(23n);
    expect(log.producerStateSnapshot().map((p) => p.producerId)).toContain(5n);
    expect(log.producerStateSnapshot()).toEqual(PartitionLog.open(storage, roomy).producerStateSnapshot());
  });

  it("keeps the log end at the new segment's base when the disk cannot undo the roll either", () => {
    const storage = new FailingOnceStorage();
    const log = PartitionLog.open(storage, config);
    log.appendAsFollower(dataBatch({ baseOffset: 0n, leaderEpoch: 1, count: 2 }));
    storage.failNextAppend = true;
    storage.failTruncate = true;
    expect(() => log.appendAsFollower(dataBatch({ baseOffset: 20n, leaderEpoch: 1 }))).toThrow(
      KafkaStorageError,
    );
    storage.failTruncate = false;
    // Kafka's rule: the log end is at least the active segment's base, so nothing lands below it.
    expect(log.logEndOffset).toBe(20n);
    expect(log.appendAsLeader(dataBatch(), 2).firstOffset).toBe(20n);
    expect(PartitionLog.open(storage, config).logEndOffset).toBe(21n);
  });
});

describe("truncateTo below an empty active segment based above the target", () => {
  it("deletes that segment, so the log end is not left above the target", () => {
    const at = dir();
    const log = openFileLog(at, 200);
    log.appendAsFollower(dataBatch({ baseOffset: 0n, leaderEpoch: 1, count: 2 }));
    log.close();
    // A crash right after a roll to 20 (a follower's gap), before the append: an empty segment at 20.
    fs.writeFileSync(path.join(at, segmentFileName(20n)), Buffer.alloc(0));
    const reopened = openFileLog(at, 200);
    expect(reopened.logEndOffset).toBe(20n);
    expect(reopened.truncateTo(15n)).toBe(true);
    expect(reopened.logEndOffset).toBe(2n);
    expect(reopened.segments().map((s) => s.baseOffset)).toEqual([0n]);
    reopened.close();
    expect(fs.existsSync(path.join(at, segmentFileName(20n)))).toBe(false);
  });
});
