import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { FileLogStorage, ManualClock, PartitionLog } from "../src/index";
import { buildSegmentIndexes, indexedBatches } from "../src/storage-segment-index";
import { baseOffsets, dataBatch, removeDir, tempDir } from "./helpers";

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) removeDir(dir);
});

const name = (offset: bigint, suffix: string) => `${offset.toString().padStart(20, "0")}${suffix}`;
/** A file's bytes; the active segment's index has no file until it has an entry. */
const readOr = (file: string) => (fs.existsSync(file) ? fs.readFileSync(file) : Buffer.alloc(0));

function openLog(dir: string): PartitionLog {
  const clock = new ManualClock(1_700_000_000_000);
  const log = PartitionLog.open(FileLogStorage.open(dir, { fsync: false }), {
    clock,
    segmentBytes: 20_000,
    cleanupPolicy: "compact",
    deleteRetentionMs: 0,
  });
  log.updateHighWatermark(log.logEndOffset);
  return log;
}

/** 60 batches of ~1 KB over 4 keys: three rolled segments with index entries, most records superseded. */
function writeLog(dir: string): PartitionLog {
  const log = openLog(dir);
  for (let i = 0; i < 60; i++) {
    const key = `k${i % 4}`;
    log.appendAsLeader(dataBatch({ keys: [key], values: [`${i}${"v".repeat(1000)}`] }), 0);
  }
  log.updateHighWatermark(log.logEndOffset);
  return log;
}

function rolledBases(log: PartitionLog): bigint[] {
  return log
    .segments()
    .slice(0, -1)
    .map((s) => s.baseOffset);
}

/**
 * Kafka's read of `offset` through the files: the segment holding it, the offset index's largest entry at
 * or below it (OffsetIndex.lookup), then the first batch from that position that ends at or after it
 * (FileRecords.searchForOffsetWithSize); the next segment's first batch when this one has none.
 */
function kafkaLookup(dir: string, bases: readonly bigint[], offset: bigint): bigint | undefined {
  let s = bases.findLastIndex((b) => b <= offset);
  for (; s < bases.length; s++) {
    const base = bases[s]!;
    const index = readOr(path.join(dir, name(base, ".index")));
    let position = 0;
    for (let at = 0; at + 8 <= index.length; at += 8) {
      if (base + BigInt(index.readInt32BE(at)) > offset) break;
      position = index.readInt32BE(at + 4);
    }
    const bytes = fs.readFileSync(path.join(dir, name(base, ".log")));
    if (position > bytes.length) return undefined; // Kafka finds nothing past the file's end
    for (const batch of indexedBatches(bytes.subarray(position), position)) {
      if (batch.lastOffset >= offset) return batch.baseOffset;
    }
  }
  return undefined;
}

/** Every offset of the log reads back the same batch through the log and through Kafka's index lookup. */
function expectEveryOffset(dir: string, log: PartitionLog): void {
  const bases = log.segments().map((s) => s.baseOffset);
  for (let offset = log.logStartOffset; offset < log.logEndOffset; offset++) {
    const [fetched] = baseOffsets(log.read(offset, 1, "read_uncommitted").records);
    expect(fetched, `fetch at ${offset}`).toBeDefined();
    expect(kafkaLookup(dir, bases, offset), `index lookup of ${offset}`).toBe(fetched);
  }
}

/** Each segment's `.index` and `.timeindex` are what Kafka builds from its bytes. */
function expectIndexesMatchBytes(dir: string, log: PartitionLog): void {
  const bases = log.segments().map((s) => s.baseOffset);
  bases.forEach((base, i) => {
    const built = buildSegmentIndexes(
      base,
      fs.readFileSync(path.join(dir, name(base, ".log"))),
      i === bases.length - 1,
    );
    expect(readOr(path.join(dir, name(base, ".index"))).equals(built.offsetIndex), `index of ${base}`).toBe(
      true,
    );
    expect(
      readOr(path.join(dir, name(base, ".timeindex"))).equals(built.timeIndex),
      `timeindex of ${base}`,
    ).toBe(true);
  });
}

describe("a rolled segment's index files that do not match its bytes are rebuilt when the log opens", () => {
  it("after a crash between a compaction's new .log and its new .index (the old segment's indexes left)", () => {
    const dir = tempDir();
    dirs.push(dir);
    let log = writeLog(dir);
    const rolled = rolledBases(log);
    expect(rolled.length).toBeGreaterThanOrEqual(2);
    const old = rolled.map((base) => ({
      base,
      index: fs.readFileSync(path.join(dir, name(base, ".index"))),
      timeIndex: fs.readFileSync(path.join(dir, name(base, ".timeindex"))),
    }));
    expect(old.every((o) => o.index.length > 0)).toBe(true);
    expect(log.compact().segmentsCleaned).toBe(rolled.length);
    log.close();
    // The crash: the cleaned .log files were renamed in, their indexes were not.
    for (const o of old) {
      fs.writeFileSync(path.join(dir, name(o.base, ".index")), o.index);
      fs.writeFileSync(path.join(dir, name(o.base, ".timeindex")), o.timeIndex);
    }
    log = openLog(dir);
    expectIndexesMatchBytes(dir, log);
    expectEveryOffset(dir, log);
    log.close();
  });

  it("a torn, a garbled and an emptied .index, and a .timeindex of another segment", () => {
    const dir = tempDir();
    dirs.push(dir);
    let log = writeLog(dir);
    const [first, second, third] = rolledBases(log);
    log.close();
    const file = (base: bigint, suffix: string) => path.join(dir, name(base!, suffix));
    const good = fs.readFileSync(file(first!, ".index"));
    fs.writeFileSync(file(first!, ".index"), good.subarray(0, good.length - 3)); // torn mid-entry
    const garbage = Buffer.alloc(good.length);
    for (let i = 0; i < garbage.length; i++) garbage[i] = (i * 37 + 11) & 0xff;
    fs.writeFileSync(file(second!, ".index"), garbage);
    fs.copyFileSync(file(first!, ".timeindex"), file(second!, ".timeindex"));
    fs.writeFileSync(file(third!, ".index"), Buffer.alloc(0));
    log = openLog(dir);
    expectIndexesMatchBytes(dir, log);
    expectEveryOffset(dir, log);
    log.close();
  });

  it("an empty rolled segment's garbled index (a log rolled below a follower batch 2^31 offsets ahead)", () => {
    const dir = tempDir();
    dirs.push(dir);
    let log = openLog(dir);
    log.appendAsFollower(dataBatch({ baseOffset: 3_000_000_000n, keys: ["a"], values: ["v"] }));
    expect(log.segments().map((s) => s.sizeInBytes === 0)).toEqual([true, false]);
    log.close();
    fs.writeFileSync(path.join(dir, name(0n, ".index")), Buffer.from([0, 0, 0, 5, 0, 0, 0, 9]));
    log = openLog(dir);
    expectIndexesMatchBytes(dir, log);
    expect(fs.readFileSync(path.join(dir, name(0n, ".index"))).length).toBe(0);
    // Not every offset: 3 billion of them. The empty segment's lookup finds nothing, so the next one's batch.
    const bases = log.segments().map((s) => s.baseOffset);
    for (const offset of [0n, 2_999_999_999n, 3_000_000_000n]) {
      expect(baseOffsets(log.read(offset, 1, "read_uncommitted", { fetchUpTo: "log_end" }).records)).toEqual([
        3_000_000_000n,
      ]);
      expect(kafkaLookup(dir, bases, offset)).toBe(3_000_000_000n);
    }
    log.close();
  });
});
