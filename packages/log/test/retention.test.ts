import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  FileLogStorage,
  LOG_START_OFFSET_CHECKPOINT_FILE,
  ManualClock,
  MemoryLogStorage,
  OffsetOutOfRangeError,
  PartitionLog,
  parseOffsetCheckpoint,
  segmentFileName,
} from "../src/index";
import { ABORT, baseOffsets, controlBatch, dataBatch, removeDir, tempDir } from "./helpers";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) removeDir(d);
});

/** Bytes of one `dataBatch({ count: 2, ... })` (every test batch below has this size). */
const BATCH = dataBatch({ count: 2 }).length;

/**
 * A log of five 2-record batches, one per segment (segments 0, 2, 4, 6, 8; 8 active), epochs 1, 1, 2, 2, 3,
 * producer 9 (sequences 0..7) writing offsets 0-7, and batch `i` stamped with timestamp 1000 * (i + 1).
 */
function fill(log: PartitionLog): void {
  const epochs = [1, 1, 2, 2, 3];
  for (let i = 0; i < 5; i++) {
    const spec = { count: 2, baseTimestamp: BigInt(1000 * (i + 1)) };
    log.appendAsLeader(dataBatch(i < 4 ? { ...spec, pid: 9n, seq: i * 2 } : spec), epochs[i]!);
  }
  log.updateHighWatermark(log.logEndOffset);
}

function memoryLog(storage = new MemoryLogStorage(), clock = new ManualClock(0)): PartitionLog {
  return PartitionLog.open(storage, { clock, segmentBytes: BATCH });
}

/** The observable state that replay rebuilds; a reopened log must agree with the live one. */
function stateOf(log: PartitionLog) {
  return {
    logStartOffset: log.logStartOffset,
    logEndOffset: log.logEndOffset,
    segments: log.segments().map((s) => s.baseOffset),
    epochs: log.epochEntries(),
    producers: log.producerStateSnapshot(),
    aborted: log.abortedTransactions(),
  };
}

/**
 * `stateOf` as a reopened file log can match it: file storage keeps the producers of deleted batches in
 * Kafka's producer snapshot, which keeps each one's epoch and last batch only, so that is what is compared.
 */
function reopenedFileState(state: ReturnType<typeof stateOf>) {
  return {
    ...state,
    producers: state.producers.map((p) => [p.producerId, p.producerEpoch, p.batchMetadata.at(-1)]),
  };
}

describe("deleteRecordsBefore (Kafka's DeleteRecords)", () => {
  it("moves the log start inside a segment, deletes the segments wholly below it, reads below fail", () => {
    const storage = new MemoryLogStorage();
    const log = memoryLog(storage);
    fill(log);
    expect(log.deleteRecordsBefore(5n)).toBe(5n);
    expect(log.logStartOffset).toBe(5n);
    expect(log.segments().map((s) => s.baseOffset)).toEqual([4n, 6n, 8n]);
    expect(() => log.read(4n, 1 << 20, "read_uncommitted")).toThrow(OffsetOutOfRangeError);
    // The batch holding the log start is returned whole, as Kafka does.
    expect(baseOffsets(log.read(5n, 1 << 20, "read_uncommitted").records)).toEqual([4n]);
    expect(log.read(5n, 1 << 20, "read_uncommitted").logStartOffset).toBe(5n);
    expect(log.epochEntries()).toEqual([
      { epoch: 2, startOffset: 5n },
      { epoch: 3, startOffset: 8n },
    ]);
    expect(storage.readLogStartOffset()).toBe(5n);
    expect(stateOf(memoryLog(storage))).toEqual(stateOf(log));
  });

  it("is a no-op at or below the log start and refuses offsets above the high watermark", () => {
    const log = memoryLog();
    fill(log);
    log.updateHighWatermark(6n);
    expect(() => log.deleteRecordsBefore(7n)).toThrow(OffsetOutOfRangeError);
    expect(log.deleteRecordsBefore(6n)).toBe(6n);
    expect(log.deleteRecordsBefore(3n)).toBe(6n);
    expect(log.segments().map((s) => s.baseOffset)).toEqual([6n, 8n]);
    expect(log.highWatermark).toBe(6n);
  });

  it("never deletes the active segment; the log start can reach the log end", () => {
    const log = memoryLog();
    fill(log);
    expect(log.deleteRecordsBefore(10n)).toBe(10n);
    expect(log.segments().map((s) => s.baseOffset)).toEqual([8n]);
    expect([log.logStartOffset, log.logEndOffset, log.highWatermark]).toEqual([10n, 10n, 10n]);
    expect(log.read(10n, 100, "read_uncommitted").records.length).toBe(0);
    expect(log.appendAsLeader(dataBatch(), 3).firstOffset).toBe(10n);
  });

  it("keeps producer state, transactions and the LSO consistent with what a reopened log rebuilds", () => {
    const storage = new MemoryLogStorage();
    const log = memoryLog(storage);
    log.appendAsLeader(dataBatch({ pid: 1n, seq: 0, txn: true, count: 2 }), 0); // 0-1, open
    log.appendAsLeader(dataBatch({ pid: 2n, seq: 0, txn: true, count: 2 }), 0); // 2-3
    log.appendAsLeader(controlBatch(ABORT, { pid: 2n, epoch: 0 }), 0, { origin: "coordinator" }); // 4
    log.appendAsLeader(dataBatch({ count: 2 }), 0); // 5-6
    log.updateHighWatermark(log.logEndOffset);
    expect(log.lastStableOffset).toBe(0n);
    log.deleteRecordsBefore(1n);
    // Producer 1's transaction started below the new log start: the LSO does not go below the log start.
    expect(log.lastStableOffset).toBe(1n);
    expect(log.ongoingTransactions()).toEqual([{ producerId: 1n, firstOffset: 0n }]);
    expect(stateOf(memoryLog(storage))).toEqual(stateOf(log));
    log.deleteRecordsBefore(3n);
    // Its segment is gone, but the transaction stays open (Kafka's onLogStartOffsetIncremented keeps every
    // producer; the coordinator ends it): the LSO waits at the log start, for live and reopened log alike.
    expect(log.segments().map((s) => s.baseOffset)).toEqual([2n, 4n, 5n]);
    expect(log.ongoingTransactions()).toEqual([{ producerId: 1n, firstOffset: 0n }]);
    expect(log.lastStableOffset).toBe(3n);
    expect(log.abortedTransactions()).toEqual([{ producerId: 2n, firstOffset: 2n, lastOffset: 4n }]);
    expect(log.read(3n, 1 << 20, "read_committed").sizeInBytes).toBe(0);
    expect(stateOf(memoryLog(storage))).toEqual(stateOf(log));
    // Its coordinator aborts it: the LSO moves on, and read_committed skips both aborted transactions.
    log.appendAsLeader(controlBatch(ABORT, { pid: 1n, epoch: 0 }), 0, { origin: "coordinator" });
    log.updateHighWatermark(log.logEndOffset);
    expect(log.ongoingTransactions()).toEqual([]);
    expect(log.lastStableOffset).toBe(8n);
    expect(log.read(3n, 1 << 20, "read_committed").abortedTransactions).toEqual([
      { producerId: 2n, firstOffset: 2n, lastOffset: 4n },
      { producerId: 1n, firstOffset: 0n, lastOffset: 7n },
    ]);
    expect(stateOf(memoryLog(storage))).toEqual(stateOf(log));
  });

  it("truncateTo into the batch holding the log start empties the log at the truncation offset", () => {
    const log = memoryLog();
    fill(log);
    log.deleteRecordsBefore(5n);
    expect(log.truncateTo(7n)).toBe(true); // at the boundary of batch 6-7: the log start stays
    expect([log.logStartOffset, log.logEndOffset]).toEqual([5n, 6n]);
    expect(log.truncateTo(5n)).toBe(true); // batch 4-5 holds the log start 5: nothing readable is left
    expect([log.logStartOffset, log.logEndOffset, log.highWatermark]).toEqual([5n, 5n, 5n]);
    expect(log.read(5n, 1 << 20, "read_uncommitted", { fetchUpTo: "log_end" }).records.length).toBe(0);
    expect(log.appendAsLeader(dataBatch({ count: 2 }), 4).firstOffset).toBe(5n);
  });

  it("a file log reopened after deleteRecordsBefore keeps its log start, epochs and producer state", () => {
    const dir = path.join(tempDir(), "mirror.orders-3");
    dirs.push(path.dirname(dir));
    const clock = new ManualClock(0);
    const open = () => PartitionLog.open(FileLogStorage.open(dir), { clock, segmentBytes: BATCH });
    const log = open();
    fill(log);
    log.deleteRecordsBefore(3n);
    const before = stateOf(log);
    log.close();
    expect(fs.readFileSync(path.join(dir, LOG_START_OFFSET_CHECKPOINT_FILE), "utf8")).toBe(
      "0\n1\nmirror.orders 3 3\n",
    );
    expect(fs.existsSync(path.join(dir, segmentFileName(0n)))).toBe(false);
    expect(fs.existsSync(path.join(dir, segmentFileName(2n)))).toBe(true);
    const again = open();
    expect(reopenedFileState(stateOf(again))).toEqual(reopenedFileState(before));
    expect(before.logStartOffset).toBe(3n);
    expect(() => again.read(2n, 1 << 20, "read_uncommitted", { fetchUpTo: "log_end" })).toThrow(
      OffsetOutOfRangeError,
    );
    expect(again.highWatermark).toBe(3n); // no HW checkpoint given: starts at the log start
    again.close();
  });

  it("a log start checkpoint above the recovered log end starts the log empty there (lost tail)", () => {
    const storage = new MemoryLogStorage();
    const log = memoryLog(storage);
    fill(log);
    storage.writeLogStartOffset(50n);
    const again = memoryLog(storage);
    expect([again.logStartOffset, again.logEndOffset]).toEqual([50n, 50n]);
    expect(again.segments().map((s) => s.baseOffset)).toEqual([50n]);
    expect(again.epochEntries()).toEqual([]);
    expect(again.producerStateSnapshot()).toEqual([]);
  });
});

describe("applyRetention (retention.ms, retention.bytes)", () => {
  it("deletes whole non-active segments whose largest timestamp is older than retention.ms", () => {
    const clock = new ManualClock(0);
    const storage = new MemoryLogStorage();
    const log = memoryLog(storage, clock);
    fill(log); // segment i holds timestamps 1000(i+1) and 1000(i+1)+1
    clock.set(3001 + 500);
    expect(log.applyRetention({ retentionMs: 500 })).toEqual({
      segmentsDeleted: 2,
      bytesDeleted: 2 * BATCH,
      logStartOffset: 4n,
    });
    expect(log.segments().map((s) => s.baseOffset)).toEqual([4n, 6n, 8n]);
    expect(log.epochEntries()).toEqual([
      { epoch: 2, startOffset: 4n },
      { epoch: 3, startOffset: 8n },
    ]);
    expect(stateOf(memoryLog(storage, clock))).toEqual(stateOf(log));
    // -1 disables; the active segment is never deleted, however old.
    clock.set(1e9);
    expect(log.applyRetention({ retentionMs: -1 }).segmentsDeleted).toBe(0);
    expect(log.applyRetention({}).segmentsDeleted).toBe(0);
    expect(log.applyRetention({ retentionMs: 0 }).segmentsDeleted).toBe(2);
    expect(log.segments().map((s) => s.baseOffset)).toEqual([8n]);
    expect(log.logStartOffset).toBe(8n);
  });

  it("deletes the oldest segments while the log exceeds retention.bytes by a whole segment", () => {
    const log = memoryLog();
    fill(log); // 5 segments of BATCH bytes
    expect(log.applyRetention({ retentionBytes: 3 * BATCH + 1 }).segmentsDeleted).toBe(1);
    expect(log.applyRetention({ retentionBytes: 3 * BATCH + 1 }).segmentsDeleted).toBe(0);
    expect(log.applyRetention({ retentionBytes: 2 * BATCH }).segmentsDeleted).toBe(2);
    expect(log.segments().map((s) => s.baseOffset)).toEqual([6n, 8n]);
    expect(log.applyRetention({ retentionBytes: 0 }).segmentsDeleted).toBe(1); // not the active one
    expect(log.logStartOffset).toBe(8n);
  });

  it("only deletes segments wholly below the high watermark", () => {
    const clock = new ManualClock(1e9);
    const log = memoryLog(new MemoryLogStorage(), clock);
    fill(log);
    log.updateHighWatermark(5n);
    expect(log.applyRetention({ retentionMs: 0, retentionBytes: 0 }).segmentsDeleted).toBe(2);
    expect(log.segments().map((s) => s.baseOffset)).toEqual([4n, 6n, 8n]);
  });

  it("leaves a compacted log to the cleaner, except segments below its log start", () => {
    const clock = new ManualClock(1e9);
    const log = PartitionLog.open(new MemoryLogStorage(), {
      clock,
      segmentBytes: BATCH,
      cleanupPolicy: "compact",
    });
    fill(log);
    expect(log.applyRetention({ retentionMs: 0, retentionBytes: 0 }).segmentsDeleted).toBe(0);
    log.deleteRecordsBefore(4n);
    expect(log.segments().map((s) => s.baseOffset)).toEqual([4n, 6n, 8n]);
    expect(log.applyRetention({ retentionMs: 0 }).segmentsDeleted).toBe(0);
  });

  it("a file log reopened after retention starts at the first remaining segment", () => {
    const dir = path.join(tempDir(), "t-0");
    dirs.push(path.dirname(dir));
    const clock = new ManualClock(0);
    const open = () => PartitionLog.open(FileLogStorage.open(dir), { clock, segmentBytes: BATCH });
    const log = open();
    fill(log);
    log.applyRetention({ retentionBytes: 2 * BATCH });
    const before = stateOf(log);
    log.close();
    const text = fs.readFileSync(path.join(dir, LOG_START_OFFSET_CHECKPOINT_FILE), "utf8");
    expect(parseOffsetCheckpoint(text)).toEqual([{ topic: "t", partition: 0, offset: 6n }]);
    const again = open();
    expect(reopenedFileState(stateOf(again))).toEqual(reopenedFileState(before));
    expect(before.segments).toEqual([6n, 8n]);
    again.close();
  });
});
