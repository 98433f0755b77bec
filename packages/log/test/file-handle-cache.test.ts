import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { decodeRecords } from "@cluster-mirror/protocol";
import { afterEach, describe, expect, it } from "vitest";
import {
  CachedFile,
  FileHandleCache,
  FileLogStorage,
  InvalidConfigError,
  ManualClock,
  PartitionLog,
} from "../src/index";
import { dataBatch, removeDir, tempDir } from "./helpers";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) removeDir(d);
});

function newDir(): string {
  const d = tempDir();
  dirs.push(d);
  return d;
}

/** Descriptors this process has open (Linux). */
function openFds(): number {
  return fs.readdirSync("/proc/self/fd").length;
}

/** The values of every record of a log, in offset order. */
function valuesOf(log: PartitionLog): string[] {
  return [...log.batches()].flatMap((b) => decodeRecords(b).map((r) => r.value?.toString() ?? "null"));
}

describe("FileHandleCache (log.max.open.files)", () => {
  it("keeps at most maxOpenFiles open, closing the least recently used", () => {
    const dir = newDir();
    const cache = new FileHandleCache(2);
    const files = ["a", "b", "c"].map((n) => {
      fs.writeFileSync(path.join(dir, n), n);
      return new CachedFile(path.join(dir, n));
    });
    const [a, b, c] = files as [CachedFile, CachedFile, CachedFile];
    cache.fd(a);
    cache.fd(b);
    cache.fd(a); // a is now the most recently used: b goes first
    cache.fd(c);
    expect(cache.openCount).toBe(2);
    expect(a.fd).toBeDefined();
    expect(b.fd).toBeUndefined();
    expect(c.fd).toBeDefined();
    const buf = Buffer.alloc(1);
    fs.readSync(cache.fd(b), buf, 0, 1, 0);
    expect(buf.toString()).toBe("b");
    expect(cache.peakOpenCount).toBe(2);
    for (const f of files) cache.close(f);
    expect(cache.openCount).toBe(0);
  });

  it("refuses a cap below 1 with INVALID_CONFIG", () => {
    expect(() => new FileHandleCache(0)).toThrow(InvalidConfigError);
    expect(() => new FileHandleCache(1.5)).toThrow(/log.max.open.files must be a positive integer/);
  });

  it("serves many logs of many segments through two descriptors, across reopening", () => {
    const cache = new FileHandleCache(2);
    const before = openFds();
    const logDirs = Array.from({ length: 6 }, () => newDir());
    const open = (dir: string) =>
      PartitionLog.open(FileLogStorage.open(dir, { fsync: false, fileHandles: cache }), {
        clock: new ManualClock(0),
        segmentBytes: 1, // every batch rolls a new segment
      });
    let logs = logDirs.map(open);
    // Interleaved appends: every log's active segment is evicted between its appends.
    for (let round = 0; round < 4; round++) {
      logs.forEach((log, i) => {
        log.appendAsLeader(dataBatch({ values: [`l${i}r${round}`] }), 0);
        log.updateHighWatermark(log.logEndOffset);
        expect(openFds() - before).toBeLessThanOrEqual(2);
      });
    }
    const expected = logDirs.map((_, i) => [0, 1, 2, 3].map((r) => `l${i}r${r}`));
    expect(logs.map(valuesOf)).toEqual(expected);
    for (const log of logs) log.close();
    expect(cache.openCount).toBe(0);
    expect(openFds()).toBe(before);
    // Recovery reads every segment of every log without holding them open.
    logs = logDirs.map((dir) => {
      const log = open(dir);
      log.updateHighWatermark(log.logEndOffset);
      return log;
    });
    expect(cache.peakOpenCount).toBe(2);
    expect(logs.map((l) => l.recovery.batches)).toEqual(logDirs.map(() => 4));
    expect(logs.map(valuesOf)).toEqual(expected);
    // Truncation, DeleteRecords and appends after them go through evicted descriptors too.
    logs.forEach((log) => {
      log.truncateTo(3n);
      log.deleteRecordsBefore(1n);
    });
    logs.forEach((log, i) => {
      log.appendAsLeader(dataBatch({ values: [`l${i}new`] }), 0);
      log.updateHighWatermark(log.logEndOffset);
    });
    expect(logs.map(valuesOf)).toEqual(logDirs.map((_, i) => [`l${i}r1`, `l${i}r2`, `l${i}new`]));
    for (const log of logs) log.close();
    expect(openFds()).toBe(before);
  });

  it("reads a compacted segment's new bytes, not the replaced file's, through the cache", () => {
    const cache = new FileHandleCache(64); // every file stays open: a stale descriptor would show

    const dir = newDir();
    const log = PartitionLog.open(FileLogStorage.open(dir, { fsync: false, fileHandles: cache }), {
      clock: new ManualClock(0),
      segmentBytes: 1,
      cleanupPolicy: "compact",
    });
    const append = (keys: string[], values: string[]) => {
      log.appendAsLeader(dataBatch({ keys, values }), 0);
      log.updateHighWatermark(log.logEndOffset);
    };
    append(["k", "y"], ["1", "y1"]); // compaction rewrites this segment smaller, keeping y1
    append(["k"], ["2"]);
    append(["k"], ["3"]);
    append(["other"], ["x"]);
    expect(valuesOf(log)).toEqual(["1", "y1", "2", "3", "x"]);
    expect(cache.peakOpenCount).toBeLessThan(64);
    log.compact();
    expect(valuesOf(log)).toEqual(["y1", "3", "x"]);
    log.close();
  });
});

describe("FileHandleCache under a descriptor limit", () => {
  it("closes idle files and retries when opening fails with EMFILE (cap above ulimit -n)", () => {
    const dir = newDir();
    const child = path.join(import.meta.dirname, "fixtures", "emfile-retry.ts");
    const script = `ulimit -n 64 && exec "$0" --import tsx "$@"`;
    const out = execFileSync("bash", ["-c", script, process.execPath, child, dir, "300"], {
      cwd: path.join(import.meta.dirname, "..", "..", ".."),
      encoding: "utf8",
    });
    expect(out.trim().split("\n").at(-1)).toBe("ok 300");
  }, 60_000);
});
