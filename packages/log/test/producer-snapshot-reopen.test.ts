import { afterEach, describe, expect, it } from "vitest";
import {
  FileLogStorage,
  fromSnapshotEntry,
  InvalidProducerEpochError,
  ManualClock,
  OutOfOrderSequenceError,
  PartitionLog,
} from "../src/index";
import { ABORT, controlBatch, dataBatch, PID_RESET, removeDir, tempDir } from "./helpers";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) removeDir(d);
});

/** A file log in a fresh directory of 100-byte segments (one small batch each); `reopen` opens it again. */
function fileLog(): { log: PartitionLog; reopen: (log: PartitionLog) => PartitionLog } {
  const dir = tempDir();
  dirs.push(dir);
  const clock = new ManualClock(1_000_000);
  const open = () =>
    PartitionLog.open(FileLogStorage.open(dir, { fsync: false }), { clock, segmentBytes: 100 });
  return {
    log: open(),
    reopen: (log) => {
      log.close();
      return open();
    },
  };
}

describe("a file log reopened after its producers' batches were deleted (Kafka's producer snapshot)", () => {
  it("still knows a producer whose every batch retention deleted: duplicates, gaps and its next send", () => {
    const { log: written, reopen } = fileLog();
    for (let seq = 0; seq < 5; seq++) written.appendAsLeader(dataBatch({ pid: 0n, seq }), 0);
    written.appendAsLeader(dataBatch({ pid: 1n, seq: 0 }), 0);
    written.updateHighWatermark(written.logEndOffset);
    expect(written.applyRetention({ retentionBytes: 0 }).logStartOffset).toBe(5n);
    const log = reopen(written);
    expect(log.logStartOffset).toBe(5n);
    expect(log.producerStateSnapshot().map((p) => p.producerId)).toEqual([0n, 1n]);
    // A retry of the last batch Kafka's snapshot keeps gets its original offset back, not a new one.
    expect(log.appendAsLeader(dataBatch({ pid: 0n, seq: 4 }), 0)).toMatchObject({
      duplicate: true,
      firstOffset: 4n,
    });
    expect(() => log.appendAsLeader(dataBatch({ pid: 0n, seq: 7 }), 0)).toThrow(OutOfOrderSequenceError);
    expect(log.appendAsLeader(dataBatch({ pid: 0n, seq: 5 }), 0)).toMatchObject({
      duplicate: false,
      firstOffset: 6n,
    });
    log.close();
  });

  it("keeps a producer fenced after DeleteRecords removed its batches, across a reopen", () => {
    const { log: written, reopen } = fileLog();
    written.appendAsLeader(dataBatch({ pid: 3n, epoch: 4, seq: 0, txn: true }), 0);
    written.appendAsLeader(controlBatch(ABORT, { pid: 3n, epoch: 4 }), 0, { origin: "coordinator" });
    written.appendAsLeader(dataBatch({ count: 1 }), 0);
    written.updateHighWatermark(written.logEndOffset);
    written.deleteRecordsBefore(2n);
    const log = reopen(written);
    expect(log.segments()[0]?.baseOffset).toBe(2n);
    expect(() => log.appendAsLeader(dataBatch({ pid: 3n, epoch: 3, seq: 1 }), 0)).toThrow(
      InvalidProducerEpochError,
    );
    log.close();
  });

  it("does not bring back mirrored producers a MIRROR_PID_RESET cleared, wherever retention cut", () => {
    for (const kept of ["reset", "after-reset"] as const) {
      const { log: written, reopen } = fileLog();
      // Batches replicated as the source wrote them (no sequence checks), then the failover's reset.
      written.appendAsFollower(dataBatch({ pid: 7n, epoch: 2, seq: 10, baseOffset: 0n }));
      written.appendAsFollower(dataBatch({ pid: 8n, epoch: 0, seq: 3, baseOffset: 1n }));
      written.appendAsLeader(controlBatch(PID_RESET), 0, { origin: "coordinator" });
      if (kept === "after-reset") written.appendAsLeader(dataBatch({ pid: 9n, seq: 0 }), 0);
      written.updateHighWatermark(written.logEndOffset);
      written.applyRetention({ retentionBytes: 0 });
      const live = written.producerStateSnapshot();
      const log = reopen(written);
      expect(log.producerStateSnapshot(), kept).toEqual(live);
      expect(
        log.producerStateSnapshot().map((p) => p.producerId),
        kept,
      ).toEqual(kept === "reset" ? [] : [9n]);
      // A mirrored producer is unknown again: any sequence is taken, as from a new producer.
      expect(log.appendAsLeader(dataBatch({ pid: 7n, epoch: 0, seq: 0 }), 0).duplicate, kept).toBe(false);
      log.close();
    }
  });

  it("loads a snapshot entry as Kafka's readSnapshot: its last batch, the first sequence counted back across the wrap", () => {
    const entry = {
      producerId: 4n,
      epoch: 1,
      lastSequence: 1,
      lastOffset: 20n,
      offsetDelta: 3,
      timestamp: 5000n,
      coordinatorEpoch: -1,
      currentTxnFirstOffset: 17n,
    };
    expect(fromSnapshotEntry(entry)).toEqual({
      producerId: 4n,
      producerEpoch: 1,
      batchMetadata: [{ firstSeq: 2147483646, lastSeq: 1, firstOffset: 17n, lastOffset: 20n }],
      currentTxnFirstOffset: 17n,
      lastTimestamp: 5000n,
    });
    // No batch (a producer known by its markers only), no open transaction.
    const bare = { ...entry, lastSequence: -1, lastOffset: -1n, offsetDelta: 0, currentTxnFirstOffset: -1n };
    expect(fromSnapshotEntry(bare)).toMatchObject({ batchMetadata: [], currentTxnFirstOffset: undefined });
  });
});
