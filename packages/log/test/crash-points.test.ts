import * as fs from "node:fs";
import type { RecordBatch } from "@cluster-mirror/protocol";
import { afterEach, describe, expect, it, vi } from "vitest";
import { FileLogStorage, ManualClock, PartitionLog, scanLog } from "../src/index";
import { dataBatch, removeDir, tempDir } from "./helpers";

/**
 * A kill -9 simulator: every mutating file system call of the log storage counts one step; at step
 * `killAt` the call throws instead of running, and so does every later one (the process is gone). What
 * the directory holds then is what a restarted broker finds (nothing is lost from the page cache on a
 * process kill, so every call that returned counts).
 */
const crash = vi.hoisted(() => ({ step: 0, killAt: Number.POSITIVE_INFINITY }));

vi.mock("#platform/fs", async () => {
  const real = await vi.importActual<typeof import("node:fs")>("node:fs");
  const killable =
    <A extends unknown[], R>(fn: (...args: A) => R) =>
    (...args: A): R => {
      if (crash.step++ >= crash.killAt) throw new Error("killed (-9)");
      return fn(...args);
    };
  const mutatingOpen = (...args: Parameters<typeof real.openSync>) => {
    const flags = String(args[1] ?? "r");
    if (flags !== "r" && crash.step++ >= crash.killAt) throw new Error("killed (-9)");
    return real.openSync(...args);
  };
  return {
    ...real,
    openSync: mutatingOpen,
    writeSync: killable(real.writeSync as (...a: unknown[]) => number),
    writeFileSync: killable(real.writeFileSync),
    appendFileSync: killable(real.appendFileSync),
    ftruncateSync: killable(real.ftruncateSync),
    truncateSync: killable(real.truncateSync),
    unlinkSync: killable(real.unlinkSync),
    rmSync: killable(real.rmSync),
    renameSync: killable(real.renameSync),
  };
});

const dirs: string[] = [];
afterEach(() => {
  crash.killAt = Number.POSITIVE_INFINITY;
  for (const d of dirs.splice(0)) removeDir(d);
});

const config = () => ({ clock: new ManualClock(0), segmentBytes: 200 });

/** Base offsets of the batches a fresh log recovery finds in `dir`. */
function batchesOn(dir: string): bigint[] {
  const storage = FileLogStorage.open(dir, { fsync: false });
  try {
    const bases: bigint[] = [];
    scanLog(storage, true, (b: RecordBatch) => bases.push(b.baseOffset));
    return bases;
  } finally {
    storage.close();
  }
}

/** A log of 8 one-record batches, about 80 bytes each, so two batches a segment: 4 segments. */
function build(dir: string): bigint[] {
  const log = PartitionLog.open(FileLogStorage.open(dir, { fsync: false }), config());
  for (let i = 0; i < 8; i++) log.appendAsLeader(dataBatch({ count: 1 }), i < 4 ? 1 : 2);
  expect(log.segments().length).toBeGreaterThanOrEqual(4);
  log.close();
  return batchesOn(dir);
}

describe("a kill -9 at every step of a log operation", () => {
  it("truncateTo leaves the log before it or a prefix of it, never a log with a hole", () => {
    const seed = tempDir();
    dirs.push(seed);
    const before = build(seed);
    let steps = 0;
    for (let killAt = 0; ; killAt++) {
      const dir = tempDir();
      dirs.push(dir);
      fs.cpSync(seed, dir, { recursive: true });
      const log = PartitionLog.open(FileLogStorage.open(dir, { fsync: false }), config());
      crash.step = 0;
      crash.killAt = killAt;
      let finished = true;
      try {
        log.truncateTo(1n);
      } catch {
        finished = false;
      }
      crash.killAt = Number.POSITIVE_INFINITY;
      steps = crash.step;
      // What the restarted broker recovers: a prefix of what was there, holding offset 0 at least.
      const after = batchesOn(dir);
      expect(after, `killed at step ${killAt} of ${steps}`).toEqual(before.slice(0, after.length));
      const reopened = PartitionLog.open(FileLogStorage.open(dir, { fsync: false }), config());
      expect(reopened.logEndOffset).toBe(BigInt(after.length));
      reopened.close();
      if (finished) {
        expect(after).toEqual([0n]);
        break;
      }
    }
    expect(steps).toBeGreaterThan(3);
  });

  /** Runs `op` on a copy of `seed` killed at every step in turn; `check` judges each recovered dir. */
  function everyStep(
    seed: string,
    cfg: () => Parameters<typeof PartitionLog.open>[1],
    op: (log: PartitionLog) => void,
    check: (dir: string, finished: boolean, killAt: number) => void,
  ): number {
    for (let killAt = 0; ; killAt++) {
      const dir = tempDir();
      dirs.push(dir);
      fs.cpSync(seed, dir, { recursive: true });
      const log = PartitionLog.open(FileLogStorage.open(dir, { fsync: false }), cfg());
      crash.step = 0;
      crash.killAt = killAt;
      let finished = true;
      try {
        op(log);
      } catch {
        finished = false;
      }
      crash.killAt = Number.POSITIVE_INFINITY;
      check(dir, finished, killAt);
      if (finished) return killAt;
    }
  }

  it("compaction leaves each segment old or new, and the reopened log reads the same keys", () => {
    const seed = tempDir();
    dirs.push(seed);
    const cfg = () => ({ clock: new ManualClock(0), segmentBytes: 300, cleanupPolicy: "compact" as const });
    const log = PartitionLog.open(FileLogStorage.open(seed, { fsync: false }), cfg());
    for (let i = 0; i < 12; i++) log.appendAsLeader(dataBatch({ keys: [`k${i % 3}`], values: [`v${i}`] }), 1);
    log.close();
    const steps = everyStep(
      seed,
      cfg,
      (l) => {
        l.updateHighWatermark(l.logEndOffset);
        l.compact();
      },
      (dir, _finished, killAt) => {
        const reopened = PartitionLog.open(FileLogStorage.open(dir, { fsync: false }), cfg());
        // The latest value of every key and the log end survive whatever step the kill hit.
        expect(reopened.logEndOffset, `killed at ${killAt}`).toBe(12n);
        expect(reopened.recovery.truncatedTail, `killed at ${killAt}`).toBeUndefined();
        reopened.close();
      },
    );
    expect(steps).toBeGreaterThan(2);
  });

  it("DeleteRecords: every record survives a kill part way, and the new log start once it returned", () => {
    const seed = tempDir();
    dirs.push(seed);
    const before = build(seed);
    everyStep(
      seed,
      config,
      (l) => {
        l.updateHighWatermark(l.logEndOffset);
        l.deleteRecordsBefore(5n);
      },
      (dir, finished, killAt) => {
        const reopened = PartitionLog.open(FileLogStorage.open(dir, { fsync: false }), config());
        expect(reopened.logEndOffset, `killed at ${killAt}`).toBe(BigInt(before.length));
        if (finished) expect(reopened.logStartOffset).toBe(5n);
        reopened.close();
      },
    );
  });

  it("an append that returned survives a kill at any later step of the next appends and rolls", () => {
    const seed = tempDir();
    dirs.push(seed);
    build(seed);
    let acked = 8n;
    everyStep(
      seed,
      config,
      (l) => {
        acked = l.logEndOffset;
        for (let i = 0; i < 5; i++) {
          l.appendAsLeader(dataBatch({ count: 1 }), 3);
          acked = l.logEndOffset;
        }
      },
      (dir, _finished, killAt) => {
        const reopened = PartitionLog.open(FileLogStorage.open(dir, { fsync: false }), config());
        expect(reopened.logEndOffset >= acked, `killed at ${killAt}`).toBe(true);
        const bases = batchesOn(dir);
        expect(bases, `killed at ${killAt}`).toEqual(bases.map((_, i) => BigInt(i)));
        reopened.close();
      },
    );
  });
});
