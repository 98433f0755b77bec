import * as fs from "node:fs";
import * as path from "node:path";
import { encodeRecordBatch } from "@cluster-mirror/protocol";
import { afterAll, describe, expect, it } from "vitest";
import { FileLogStorage, ManualClock, PartitionLog } from "../src/index";
import { buildSegmentIndexes, indexedBatches } from "../src/storage-segment-index";
import { baseOffsets, dataBatch, removeDir, tempDir } from "./helpers";

/** Kafka's largest offset relative to a segment's base: its indexes store it in 4 bytes. */
const MAX_RELATIVE = 2n ** 31n - 1n;
const GAP = 3_000_000_000n;
const big = "x".repeat(3000);

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) removeDir(dir);
});

function openLog(dir: string): PartitionLog {
  const clock = new ManualClock(1_700_000_000_000);
  const log = PartitionLog.open(FileLogStorage.open(dir, { fsync: false }), {
    clock,
    cleanupPolicy: "compact",
    deleteRetentionMs: 0,
  });
  log.updateHighWatermark(log.logEndOffset);
  return log;
}

/** A source batch as a compacted log holds it: two ~3 KB records, keys `a` and `b`. */
function sourceBatch(baseOffset: bigint): Buffer {
  return dataBatch({ baseOffset, keys: ["a", "b"], values: [big, big] });
}

const name = (offset: bigint, suffix: string) => `${offset.toString().padStart(20, "0")}${suffix}`;
/** An index file's bytes; the active segment's has no file until it has an entry. */
const readOr = (file: string) => (fs.existsSync(file) ? fs.readFileSync(file) : Buffer.alloc(0));

/**
 * Kafka's layout holds: no segment holds an offset more than 2^31 - 1 above its base, and each segment's
 * `.index` and `.timeindex` are what Kafka builds from its bytes, so they cover every batch.
 */
function expectKafkaSegments(dir: string, log: PartitionLog): void {
  const bases = log.segments().map((s) => s.baseOffset);
  bases.forEach((base, i) => {
    const bytes = fs.readFileSync(path.join(dir, name(base, ".log")));
    for (const batch of indexedBatches(bytes)) {
      expect(batch.lastOffset - base, `offset ${batch.lastOffset} in segment ${base}`).toBeLessThanOrEqual(
        MAX_RELATIVE,
      );
    }
    const built = buildSegmentIndexes(base, bytes, i === bases.length - 1);
    expect(readOr(path.join(dir, name(base, ".index"))).equals(built.offsetIndex)).toBe(true);
    expect(readOr(path.join(dir, name(base, ".timeindex"))).equals(built.timeIndex)).toBe(true);
  });
}

/** Each batch's base offset, fetched by itself and by the offset just above it, returns that batch first. */
function expectFetches(log: PartitionLog, offsets: readonly bigint[]): void {
  for (const offset of offsets) {
    expect(baseOffsets(log.read(offset, 1, "read_uncommitted").records)).toEqual([offset]);
    expect(baseOffsets(log.read(offset + 1n, 1, "read_uncommitted").records)).toEqual([offset]);
  }
  expect(baseOffsets(log.read(log.logStartOffset, 1 << 20, "read_uncommitted").records)[0]).toBe(offsets[0]);
}

describe("a segment never holds offsets more than 2^31 - 1 above its base (Kafka's relative offsets)", () => {
  it("rolls at a follower batch 3 billion offsets past the active segment's base, and keeps it through reopen and compaction", () => {
    const dir = tempDir();
    dirs.push(dir);
    let log = openLog(dir);
    const offsets = [10n, 20n, 30n, GAP, GAP + 10n, GAP + 20n];
    for (const offset of offsets) log.appendAsFollower(sourceBatch(offset));
    log.updateHighWatermark(log.logEndOffset);
    expect(log.segments().map((s) => s.baseOffset)).toEqual([0n, GAP]);
    expectKafkaSegments(dir, log);
    expectFetches(log, offsets);

    log.close();
    log = openLog(dir);
    expect(log.logEndOffset).toBe(GAP + 22n);
    expect(log.segments().map((s) => s.baseOffset)).toEqual([0n, GAP]);
    expectFetches(log, offsets);

    // The segment below the gap is the cleanable one (the active segment bounds the cleaner): its records
    // all have later values above the gap, so it is rewritten; the active segment stays as it is.
    const stats = log.compact();
    expect(stats.segmentsCleaned).toBe(1);
    expect(stats.cleanableEndOffset).toBe(GAP);
    expectKafkaSegments(dir, log);
    const kept = [...log.batches()].map((b) => b.baseOffset);
    expect(kept.slice(-3)).toEqual([GAP, GAP + 10n, GAP + 20n]);
    log.close();
    log = openLog(dir);
    expect([...log.batches()].map((b) => b.baseOffset)).toEqual(kept);
    expectFetches(log, kept);
    log.close();
  });

  it("splits one follower append that spans the gap, and rolls an empty log's first segment for it", () => {
    const dir = tempDir();
    dirs.push(dir);
    let log = openLog(dir);
    log.appendAsFollower(Buffer.concat([sourceBatch(10n), sourceBatch(20n), sourceBatch(GAP)]));
    log.appendAsFollower([sourceBatch(GAP + 10n), sourceBatch(2n * GAP)]);
    log.updateHighWatermark(log.logEndOffset);
    expect(log.segments().map((s) => s.baseOffset)).toEqual([0n, GAP, 2n * GAP]);
    expectKafkaSegments(dir, log);
    const offsets = [10n, 20n, GAP, GAP + 10n, 2n * GAP];
    expectFetches(log, offsets);
    log.close();
    log = openLog(dir);
    expectFetches(log, offsets);
    log.close();

    // A new log's empty segment 0 cannot index a first batch at 3 billion: the log rolls, and the empty
    // segment stays below it (as Kafka), so the log start offset stays 0.
    const fresh = tempDir();
    dirs.push(fresh);
    log = openLog(fresh);
    log.appendAsFollower(sourceBatch(GAP));
    log.updateHighWatermark(log.logEndOffset);
    expect(log.segments().map((s) => [s.baseOffset, s.sizeInBytes > 0])).toEqual([
      [0n, false],
      [GAP, true],
    ]);
    expectKafkaSegments(fresh, log);
    log.close();
    log = openLog(fresh);
    expect(log.logStartOffset).toBe(0n);
    expectFetches(log, [GAP]);
    log.close();
  });

  it("rolls for a batch whose own last offset is more than 2^31 - 1 past the segment's base", () => {
    const dir = tempDir();
    dirs.push(dir);
    let log = openLog(dir);
    log.appendAsFollower(sourceBatch(10n));
    // A compacted source batch: one record left at its base, its last offset 2^31 - 1 above it.
    const sparse = encodeRecordBatch({
      baseOffset: 100n,
      partitionLeaderEpoch: -1,
      compression: 0,
      isTransactional: false,
      baseTimestamp: 1000n,
      producerId: -1n,
      producerEpoch: -1,
      baseSequence: -1,
      lastOffsetDelta: Number(MAX_RELATIVE),
      records: [
        {
          attributes: 0,
          offsetDelta: 0,
          timestampDelta: 0n,
          key: null,
          value: Buffer.from(big),
          headers: [],
        },
      ],
    });
    log.appendAsFollower(sparse);
    log.appendAsFollower(sourceBatch(100n + MAX_RELATIVE + 1n));
    log.updateHighWatermark(log.logEndOffset);
    expect(log.segments().map((s) => s.baseOffset)).toEqual([0n, 100n, 100n + MAX_RELATIVE + 1n]);
    expectKafkaSegments(dir, log);
    log.close();
    log = openLog(dir);
    expect(baseOffsets(log.read(100n + MAX_RELATIVE, 1, "read_uncommitted").records)).toEqual([100n]);
    expectFetches(log, [10n, 100n + MAX_RELATIVE + 1n]);
    log.close();
  });
});
