import * as fs from "node:fs";
import * as path from "node:path";
import { RecordBatch } from "@cluster-mirror/protocol";
import { afterEach, describe, expect, it } from "vitest";
import { FileLogStorage, ManualClock, PartitionLog, segmentFileName } from "../src/index";
import { ABORT, controlBatch, dataBatch, removeDir, tempDir } from "./helpers";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) removeDir(d);
});

function openLog(dir: string, segmentBytes = 1 << 20): PartitionLog {
  return PartitionLog.open(FileLogStorage.open(dir), { clock: new ManualClock(0), segmentBytes });
}

describe("FileLogStorage", () => {
  it("writes Kafka's layout: 20-digit segment files of raw batches and a leader-epoch-checkpoint", () => {
    const dir = tempDir();
    dirs.push(dir);
    const a = dataBatch({ count: 2 });
    const log = openLog(dir, a.length + 1);
    log.appendAsLeader(a, 3);
    log.appendAsLeader(dataBatch({ count: 2 }), 4);
    log.close();
    const files = fs.readdirSync(dir).sort();
    expect(files).toEqual([
      "00000000000000000000.index",
      "00000000000000000000.log",
      "00000000000000000000.timeindex",
      "00000000000000000002.log",
      "00000000000000000002.snapshot",
      "leader-epoch-checkpoint",
    ]);
    expect(segmentFileName(2n)).toBe("00000000000000000002.log");
    // The first segment holds the batch as produced, with the leader epoch stamped (offset 0 already).
    const expected = Buffer.from(a);
    new RecordBatch(expected).setPartitionLeaderEpoch(3);
    expect(fs.readFileSync(path.join(dir, "00000000000000000000.log")).equals(expected)).toBe(true);
    // The rolled segment's sidecars: no offset index entry (under 4096 bytes), one closing time entry
    // (its largest timestamp, relative offset 1), and an empty producer snapshot at the roll.
    expect(fs.readFileSync(path.join(dir, "00000000000000000000.index"))).toHaveLength(0);
    const timeIndex = fs.readFileSync(path.join(dir, "00000000000000000000.timeindex"));
    expect([timeIndex.readBigInt64BE(0), timeIndex.readInt32BE(8), timeIndex.length]).toEqual([1001n, 1, 12]);
    expect(fs.readFileSync(path.join(dir, "leader-epoch-checkpoint"), "utf8")).toBe("0\n2\n3 0\n4 2\n");
  });

  it("reopens to the same state: offsets, epochs, producer state, transactions", () => {
    const dir = tempDir();
    dirs.push(dir);
    const log = openLog(dir, 250);
    log.appendAsLeader(dataBatch({ pid: 1n, seq: 0, txn: true }), 1);
    log.appendAsLeader(dataBatch({ pid: 2n, seq: 0, count: 3 }), 2);
    log.appendAsLeader(controlBatch(ABORT, { pid: 1n, epoch: 0 }), 2, { origin: "coordinator" });
    log.appendAsLeader(dataBatch({ pid: 1n, seq: 1, txn: true }), 2);
    log.updateHighWatermark(5n);
    const before = {
      leo: log.logEndOffset,
      epochs: log.epochEntries(),
      producers: log.producerStateSnapshot(),
      aborted: log.abortedTransactions(),
      lso: log.lastStableOffset,
      bytes: log.read(0n, 1 << 20, "read_uncommitted", { fetchUpTo: "log_end" }).records,
    };
    log.close();
    const again = openLog(dir, 250);
    again.updateHighWatermark(5n);
    expect({
      leo: again.logEndOffset,
      epochs: again.epochEntries(),
      producers: again.producerStateSnapshot(),
      aborted: again.abortedTransactions(),
      lso: again.lastStableOffset,
      bytes: again.read(0n, 1 << 20, "read_uncommitted", { fetchUpTo: "log_end" }).records,
    }).toEqual(before);
    expect(again.recovery.truncatedTail).toBeUndefined();
    again.close();
  });

  it("recovers a torn tail: chopped bytes at the end of the last segment are cut, acknowledged batches kept", () => {
    const dir = tempDir();
    dirs.push(dir);
    const log = openLog(dir);
    for (let i = 0; i < 3; i++) log.appendAsLeader(dataBatch({ pid: 1n, seq: i }), 0);
    log.close();
    const file = path.join(dir, segmentFileName(0n));
    const full = fs.readFileSync(file);
    for (const chop of [1, 10, 40]) {
      fs.writeFileSync(file, full.subarray(0, full.length - chop));
      const again = openLog(dir);
      expect(again.logEndOffset).toBe(2n);
      expect(again.recovery.truncatedTail?.segment).toBe(0n);
      expect(again.producerStateSnapshot()[0]?.batchMetadata.at(-1)?.lastSeq).toBe(1);
      expect(fs.statSync(file).size).toBe((full.length / 3) * 2);
      again.close();
    }
  });

  it("recovers a CRC mismatch at the end, and drops later segments", () => {
    const dir = tempDir();
    dirs.push(dir);
    const log = openLog(dir, dataBatch().length);
    for (let i = 0; i < 4; i++) log.appendAsLeader(dataBatch(), 0);
    expect(log.segments().length).toBe(4);
    log.close();
    const file = path.join(dir, segmentFileName(2n));
    const bytes = fs.readFileSync(file);
    bytes[bytes.length - 1]! ^= 0xff;
    fs.writeFileSync(file, bytes);
    const again = openLog(dir, dataBatch().length);
    expect(again.logEndOffset).toBe(2n);
    expect(again.segments().map((s) => s.baseOffset)).toEqual([0n, 1n]);
    expect(fs.existsSync(path.join(dir, segmentFileName(3n)))).toBe(false);
    again.close();
  });

  it("keeps the epoch of a log DeleteRecords emptied across reopening, as the log in memory does (FC_SEED=68)", () => {
    const dir = tempDir();
    dirs.push(dir);
    const log = openLog(dir);
    log.appendAsLeader(dataBatch({ count: 2 }), 3);
    log.appendAsLeader(dataBatch({ count: 2 }), 4);
    log.updateHighWatermark(4n);
    log.deleteRecordsBefore(4n);
    const inMemory = { epoch: log.latestEpoch, end: log.endOffsetForEpoch(4) };
    expect(inMemory.epoch).toBe(4);
    log.close();
    const again = openLog(dir);
    expect([again.logStartOffset, again.logEndOffset]).toEqual([4n, 4n]);
    expect({ epoch: again.latestEpoch, end: again.endOffsetForEpoch(4) }).toEqual(inMemory);
    again.close();
  });

  it("adds no epoch from a batch below the log start that a truncation took out of the cache (FC_SEED=106)", () => {
    const dir = tempDir();
    dirs.push(dir);
    const log = openLog(dir);
    log.appendAsLeader(dataBatch({ count: 2 }), 3);
    log.appendAsLeader(dataBatch({ count: 2 }), 3);
    log.updateHighWatermark(4n);
    // The log start moves into the first batch, then a truncation to it empties the readable log: the
    // cache drops epoch 3 (its entry starts at the cut), though the first batch still lies below the start.
    log.deleteRecordsBefore(2n);
    log.truncateTo(2n);
    expect([log.logStartOffset, log.logEndOffset, log.latestEpoch]).toEqual([2n, 2n, undefined]);
    log.close();
    const again = openLog(dir);
    expect([again.logStartOffset, again.logEndOffset, again.latestEpoch]).toEqual([2n, 2n, undefined]);
    again.close();
  });

  it("keeps the start offset of a fully truncated log across reopening", () => {
    const dir = tempDir();
    dirs.push(dir);
    const log = openLog(dir);
    log.appendAsLeader(dataBatch(), 0);
    log.truncateFullyAndStartAt(500n);
    log.close();
    const again = openLog(dir);
    expect([again.logStartOffset, again.logEndOffset]).toEqual([500n, 500n]);
    again.close();
  });
});
