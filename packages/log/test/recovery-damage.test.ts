import * as fs from "node:fs";
import * as path from "node:path";
import { recordBatches } from "@cluster-mirror/protocol";
import { afterEach, describe, expect, it } from "vitest";
import { FileLogStorage, ManualClock, PartitionLog, segmentFileName } from "../src/index";
import { controlBatch, dataBatch, PID_RESET, removeDir, tempDir } from "./helpers";

/**
 * Log recovery on a real disk against byte-level damage, as Kafka's LogLoader: the log is cut where the
 * first bad batch begins, nothing past it is read, and the checkpoints are bounded by what is left.
 */

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) removeDir(d);
});

function openLog(dir: string, segmentBytes = 1 << 20, highWatermark?: bigint): PartitionLog {
  return PartitionLog.open(
    FileLogStorage.open(dir),
    { clock: new ManualClock(0), segmentBytes },
    highWatermark === undefined ? {} : { highWatermark },
  );
}

/** Base offsets of every batch a consumer can read, segment after segment. */
function readAll(log: PartitionLog): bigint[] {
  const out: bigint[] = [];
  let at = log.logStartOffset;
  while (at < log.logEndOffset) {
    const got = [
      ...recordBatches(log.read(at, 1 << 24, "read_uncommitted", { fetchUpTo: "log_end" }).records),
    ];
    if (got.length === 0) break;
    out.push(...got.map((b) => b.baseOffset));
    at = got[got.length - 1]!.lastOffset + 1n;
  }
  return out;
}

describe("log recovery of a damaged directory", () => {
  it("a last batch chopped, zeroed or followed by zeros at any byte is cut where it begins", () => {
    const dir = tempDir();
    dirs.push(dir);
    const log = openLog(dir);
    for (let i = 0; i < 3; i++) log.appendAsLeader(dataBatch({ pid: 1n, seq: i * 2, count: 2 }), 0);
    log.close();
    const file = path.join(dir, segmentFileName(0n));
    const full = fs.readFileSync(file);
    const kept = (full.length / 3) * 2;
    const wrong: string[] = [];
    for (let at = kept; at < full.length; at++) {
      const zeroed = Buffer.from(full).fill(0, at);
      const damaged = {
        chopped: full.subarray(0, at),
        // A page-cache loss: the file keeps its size, the lost bytes read as zeros.
        zeroed,
        extended: Buffer.concat([full.subarray(0, at), Buffer.alloc(4096)]),
      };
      for (const [how, bytes] of Object.entries(damaged)) {
        // Zeroing bytes that were zeros already damages nothing: the batch is whole (and zeros after it go).
        const whole = bytes.subarray(0, full.length).equals(full);
        fs.writeFileSync(file, bytes);
        const again = openLog(dir, 1 << 20, 100n);
        const got = {
          end: again.logEndOffset,
          size: fs.statSync(file).size,
          hw: again.highWatermark,
          read: readAll(again).join(","),
          lastSeq: again.producerStateSnapshot()[0]?.batchMetadata.at(-1)?.lastSeq,
        };
        const want = whole
          ? { end: 6n, size: full.length, hw: 6n, read: "0,2,4", lastSeq: 5 }
          : { end: 4n, size: kept, hw: 4n, read: "0,2", lastSeq: 3 };
        if (JSON.stringify(got, big) !== JSON.stringify(want, big)) {
          wrong.push(`${how} at ${at}: ${JSON.stringify(got, big)}`);
        }
        again.close();
      }
    }
    expect(wrong).toEqual([]);
  });

  it("a bad CRC in an older segment cuts the log there: later segments and their files go, checkpoints follow", () => {
    const size = dataBatch({ pid: 1n, seq: 0 }).length;
    for (let victim = 1; victim < 6; victim++) {
      const dir = tempDir();
      dirs.push(dir);
      const log = openLog(dir, size * 2);
      // One batch per leader epoch, two batches per segment.
      for (let i = 0; i < 6; i++) log.appendAsLeader(dataBatch({ pid: 1n, seq: i }), i + 1);
      log.updateHighWatermark(6n);
      log.close();
      const file = path.join(dir, segmentFileName(BigInt(victim - (victim % 2))));
      const bytes = fs.readFileSync(file);
      bytes[(victim % 2) * size + size - 5]! ^= 0x01; // a record byte: under the CRC
      fs.writeFileSync(file, bytes);

      const again = openLog(dir, size * 2, 6n);
      expect(again.recovery.truncatedTail).toBeDefined();
      expect([again.logEndOffset, again.highWatermark, again.logStartOffset]).toEqual([
        BigInt(victim),
        BigInt(victim),
        0n,
      ]);
      expect(readAll(again)).toEqual([...Array(victim).keys()].map(BigInt));
      // No file of a segment above the cut is left, nor a producer snapshot above it.
      const above = fs
        .readdirSync(dir)
        .filter((f) => /^\d{20}\./.test(f) && BigInt(f.slice(0, 20)) > BigInt(victim));
      expect(above).toEqual([]);
      // Epochs of the batches cut are gone from the cache and from its checkpoint.
      const epochs = [...Array(victim).keys()].map((i) => `${i + 1} ${i}`);
      expect(fs.readFileSync(path.join(dir, "leader-epoch-checkpoint"), "utf8")).toBe(
        `0\n${victim}\n${epochs.join("\n")}\n`,
      );
      // The cut log appends and reopens as it is.
      again.appendAsLeader(dataBatch({ pid: 2n, seq: 0 }), 9);
      again.close();
      const third = openLog(dir, size * 2);
      expect(third.recovery.truncatedTail).toBeUndefined();
      expect(third.logEndOffset).toBe(BigInt(victim) + 1n);
      third.close();
    }
  });

  it("a MIRROR_PID_RESET replayed on recovery clears the producers a snapshot before it still names", () => {
    const dir = tempDir();
    dirs.push(dir);
    const size = dataBatch({ pid: 1n, seq: 0, txn: true }).length;
    const log = openLog(dir, size * 2);
    log.appendAsFollower(dataBatch({ pid: 1n, seq: 0, txn: true, leaderEpoch: 1 }));
    log.appendAsFollower(dataBatch({ pid: 2n, seq: 0, baseOffset: 1n, leaderEpoch: 1 }));
    // Rolled: the snapshot at 2 holds producers 1 (in a transaction) and 2.
    log.appendAsFollower(controlBatch(PID_RESET, { baseOffset: 2n, leaderEpoch: 1 }));
    log.updateHighWatermark(3n);
    expect(fs.existsSync(path.join(dir, "00000000000000000002.snapshot"))).toBe(true);
    const before = { aborted: log.abortedTransactions(), lso: log.lastStableOffset };
    log.close();

    const again = openLog(dir, size * 2, 3n);
    expect(again.producerStateSnapshot()).toEqual([]);
    expect(again.ongoingTransactions()).toEqual([]);
    expect(again.endsWithPidReset()).toBe(true);
    // The open transaction was closed as aborted by the reset, its LSO hold released at the high watermark.
    expect({ aborted: again.abortedTransactions(), lso: again.lastStableOffset }).toEqual(before);
    expect(before.lso).toBe(3n);
    again.close();
  });
});

function big(_key: string, value: unknown): unknown {
  return typeof value === "bigint" ? `${value}n` : value;
}
