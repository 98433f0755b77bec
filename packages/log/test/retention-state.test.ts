import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type IndexedAbortedTxn,
  type LogConfig,
  ManualClock,
  MemoryLogStorage,
  PartitionLog,
} from "../src/index";
import { ABORT, COMMIT } from "./helpers";
import { batches, type Step, stepArb } from "./producer-steps";

const SEED = Number(process.env.FC_SEED ?? 20261201);

/** A memory storage that keeps the aborted-transaction list the log writes (Kafka's .txnindex), and counts reads. */
class WatchedStorage extends MemoryLogStorage {
  aborted: IndexedAbortedTxn[] = [];
  reads = 0;

  writeAbortedTxns(entries: readonly IndexedAbortedTxn[]): void {
    this.aborted = entries.map((t) => ({ ...t }));
  }

  appendAbortedTxn(txn: IndexedAbortedTxn): void {
    this.aborted.push({ ...txn });
  }

  // A storage files aborted transactions by segment (Kafka's .txnindex): a reset deletes every segment.
  override reset(baseOffset: bigint): void {
    this.aborted = [];
    super.reset(baseOffset);
  }

  override read(baseOffset: bigint, position: number, length: number): Buffer {
    this.reads++;
    return super.read(baseOffset, position, length);
  }
}

/** `n` idempotent data batches, from `producers` producers in turn. */
function idempotentData(n: number, producers: number): Step[] {
  return Array.from({ length: n }, (_, i) => ({
    kind: "data" as const,
    pid: 1 + (i % producers),
    epoch: 0,
    txn: false,
    noSeq: false,
  }));
}

function open(storage: MemoryLogStorage, segmentBytes: number, highWatermark?: bigint): PartitionLog {
  const config: LogConfig = { clock: new ManualClock(0), segmentBytes };
  return PartitionLog.open(storage, config, { highWatermark });
}

/** A log of `steps`, one batch per segment, all of it below the high watermark. */
function onePerSegment(steps: readonly Step[]): { storage: WatchedStorage; log: PartitionLog } {
  const storage = new WatchedStorage();
  const log = open(storage, 1);
  for (const b of batches(steps)) log.appendAsFollower(b);
  log.updateHighWatermark(log.logEndOffset);
  return { storage, log };
}

/** A fresh storage holding the segments of `storage` (read through it), with log start `logStart`. */
function copyOf(storage: MemoryLogStorage, logStart: bigint): WatchedStorage {
  const copy = new WatchedStorage();
  for (const seg of storage.segments()) {
    copy.roll(seg.baseOffset);
    copy.append(storage.read(seg.baseOffset, 0, seg.sizeInBytes));
  }
  copy.writeLogStartOffset(logStart);
  // The producers of deleted batches, as Kafka's snapshot at the log start keeps them.
  copy.writeLogStartProducerState(storage.readLogStartProducerState());
  return copy;
}

/** Everything a replay rebuilds, as the log answers it. */
function stateOf(log: PartitionLog) {
  return {
    logStartOffset: log.logStartOffset,
    logEndOffset: log.logEndOffset,
    highWatermark: log.highWatermark,
    lastStableOffset: log.lastStableOffset,
    segments: log.segments().map((s) => s.baseOffset),
    producers: log.producerStateSnapshot(),
    ongoing: log.ongoingTransactions(),
    aborted: log.abortedTransactions(),
    lastBatchControlType: log.lastBatchControlType,
    batchCount: log.batchCount,
    // Every offset the index knows, through reads: the batches a fetch from each offset starts with.
    reads: readsFrom(log),
  };
}

function readsFrom(log: PartitionLog): string[] {
  const out: string[] = [];
  for (let o = log.logStartOffset; o < log.logEndOffset; o++) {
    const info = log.read(o, 1, "read_committed");
    out.push(`${o}:${info.sizeInBytes}:${info.abortedTransactions.map((t) => t.firstOffset).join(",")}`);
  }
  return out;
}

const min = (a: bigint, b: bigint) => (a < b ? a : b);

/** What the test does between appends: move the high watermark, delete from the head, truncate the tail. */
type Op =
  | { kind: "append"; count: number }
  | { kind: "hw"; advance: number }
  | { kind: "retention"; keepSegments: number }
  | { kind: "deleteRecords"; advance: number }
  | { kind: "truncate"; back: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({ kind: fc.constant("append" as const), count: fc.integer({ min: 1, max: 12 }) }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("hw" as const),
      advance: fc.integer({ min: 0, max: 40 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("retention" as const),
      keepSegments: fc.integer({ min: 0, max: 4 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("deleteRecords" as const),
      advance: fc.integer({ min: 0, max: 20 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant("truncate" as const), back: fc.integer({ min: 0, max: 30 }) }),
  },
);

const withResets: fc.Arbitrary<Step> = fc.oneof(
  { weight: 12, arbitrary: stepArb },
  { weight: 1, arbitrary: fc.constant({ kind: "reset" as const }) },
);

describe("retention, DeleteRecords and tail truncation leave the state a replay of the remaining segments builds", () => {
  it("index, producer state, transactions, LSO and the stored aborted list match a reopened log after every deletion and truncation", () => {
    fc.assert(
      fc.property(
        fc.array(withResets, { minLength: 10, maxLength: 80, size: "max" }),
        fc.array(opArb, { minLength: 4, maxLength: 30, size: "max" }),
        fc.integer({ min: 100, max: 600 }),
        // Offsets beyond 2^53 make the index hold one object per batch instead of number columns.
        fc.constantFrom(0n, 2n ** 60n),
        (steps, ops, segmentBytes, start) => {
          const all = batches(steps, start);
          const storage = new WatchedStorage();
          const log = open(storage, segmentBytes);
          if (start > 0n) log.truncateFullyAndStartAt(start);
          let next = 0;
          const deleted = (before: bigint) => {
            if (log.logStartOffset === before && log.segments().length > 0) return;
            compare();
          };
          const compare = () => {
            // Reopening replays every remaining segment: what the live log must equal.
            const replayed = copyOf(storage, log.logStartOffset);
            const reopened = open(replayed, segmentBytes, log.highWatermark);
            expect(stateOf(log)).toEqual(stateOf(reopened));
            expect(storage.aborted).toEqual(replayed.aborted);
          };
          for (const op of [...ops, { kind: "append" as const, count: all.length }]) {
            if (op.kind === "append") {
              for (const b of all.slice(next, next + op.count)) log.appendAsFollower(b);
              next = Math.min(all.length, next + op.count);
            } else if (op.kind === "hw") {
              log.updateHighWatermark(min(log.logEndOffset, log.highWatermark + BigInt(op.advance)));
            } else if (op.kind === "retention") {
              const before = log.logStartOffset;
              const sizes = log.segments().map((s) => s.sizeInBytes);
              const keep = sizes.slice(-op.keepSegments - 1).reduce((n, b) => n + b, 0);
              log.applyRetention({ retentionBytes: keep });
              deleted(before);
            } else if (op.kind === "truncate") {
              // A tail truncation (divergence, failback): to a point `back` offsets below the log end.
              const target = log.logEndOffset - BigInt(op.back);
              log.truncateTo(target < log.logStartOffset ? log.logStartOffset : target);
              compare();
            } else {
              const before = log.logStartOffset;
              log.deleteRecordsBefore(min(log.highWatermark, log.logStartOffset + BigInt(op.advance)));
              deleted(before);
            }
          }
        },
      ),
      { seed: SEED, numRuns: 300 },
    );
  });

  it("a tail truncation right after opening restores a checkpoint the opening replay took, and matches a reopened log", () => {
    fc.assert(
      fc.property(
        fc.array(withResets, { minLength: 10, maxLength: 80, size: "max" }),
        fc.integer({ min: 100, max: 600 }),
        fc.nat(60),
        fc.nat(60),
        (steps, segmentBytes, unreplicated, back) => {
          const storage = new WatchedStorage();
          const written = open(storage, segmentBytes);
          for (const b of batches(steps)) written.appendAsFollower(b);
          written.updateHighWatermark(
            min(written.logEndOffset, BigInt(Math.max(0, steps.length - unreplicated))),
          );
          // Opened again over the same segments (as after a restart), then cut at once.
          const log = open(storage, segmentBytes, written.highWatermark);
          const target = log.logEndOffset - BigInt(back);
          log.truncateTo(target < log.logStartOffset ? log.logStartOffset : target);
          const replayed = copyOf(storage, log.logStartOffset);
          expect(stateOf(log)).toEqual(stateOf(open(replayed, segmentBytes, log.highWatermark)));
          expect(storage.aborted).toEqual(replayed.aborted);
        },
      ),
      { seed: SEED, numRuns: 200 },
    );
  });

  it("the first tail truncation after opening reads only the batches after the last checkpoint, not the whole log", () => {
    const steps = idempotentData(40, 3);
    const storage = new WatchedStorage();
    const written = open(storage, 1);
    for (const b of batches(steps)) written.appendAsFollower(b);
    written.updateHighWatermark(written.logEndOffset);
    const log = open(storage, 1, written.highWatermark);
    const bases = log.segments().map((s) => s.baseOffset);
    expect(bases).toHaveLength(40);
    storage.reads = 0;
    log.truncateTo(bases[37]!);
    // The checkpoint at segment 37 serves: at most the last batch left is read (its control type), never
    // the 37 segments below it.
    expect(storage.reads).toBeLessThanOrEqual(1);
    expect(stateOf(log)).toEqual(stateOf(open(copyOf(storage, log.logStartOffset), 1, log.highWatermark)));
  });

  it("a truncation far back, live or right after opening, reads only the batches after an older checkpoint below the cut", () => {
    const steps = idempotentData(200, 5);
    for (const reopen of [false, true]) {
      const storage = new WatchedStorage();
      const written = open(storage, 1);
      for (const b of batches(steps)) written.appendAsFollower(b);
      written.updateHighWatermark(written.logEndOffset);
      const log = reopen ? open(storage, 1, written.highWatermark) : written;
      const bases = log.segments().map((s) => s.baseOffset);
      expect(bases).toHaveLength(200);
      storage.reads = 0;
      log.truncateTo(bases[100]!); // 100 segments back: far below the latest checkpoints
      // One batch per segment, with checkpoints spread at most about 2 x 200 / 8 segments apart: the
      // replay from the one below the cut reads fewer batches than that, where it used to read all 100.
      expect(storage.reads, reopen ? "reopened" : "live").toBeLessThanOrEqual(50);
      expect(log.logEndOffset).toBe(bases[100]);
      expect(stateOf(log)).toEqual(stateOf(open(copyOf(storage, log.logStartOffset), 1, log.highWatermark)));
    }
  });

  it("a transaction committed across the cut, while another aborted above it, keeps its date", () => {
    // One batch per segment. Producer 1's transaction starts at 0, below the cut at 1, and commits at 4;
    // producer 2's aborts at 3 while it is open, so the LSO filed with that abort is 0. The log keeps the
    // producers of the deleted segment (Kafka's onLogStartOffsetIncremented), so a replay of the segments
    // from 1 on still dates producer 1's transaction from 0: the filed LSO stays 0.
    const steps: Step[] = [
      { kind: "data", pid: 1, epoch: 0, txn: true, noSeq: false },
      { kind: "data", pid: 1, epoch: 0, txn: true, noSeq: false },
      { kind: "data", pid: 2, epoch: 0, txn: true, noSeq: false },
      { kind: "marker", pid: 2, epoch: 0, type: ABORT },
      { kind: "marker", pid: 1, epoch: 0, type: COMMIT },
      { kind: "plain" },
    ];
    const { storage, log } = onePerSegment(steps);
    const abortAt = log.abortedTransactions()[0]!.lastOffset;
    expect(storage.aborted.map((t) => t.lastStableOffset)).toEqual([0n]);
    expect(
      log.applyRetention({
        retentionBytes: log
          .segments()
          .slice(1)
          .reduce((n, s) => n + s.sizeInBytes, 0),
      }).segmentsDeleted,
    ).toBe(1);
    expect(log.logStartOffset).toBeGreaterThan(0n);
    expect(storage.aborted).toEqual([
      { producerId: 2n, firstOffset: expect.any(BigInt), lastOffset: abortAt, lastStableOffset: 0n },
    ]);
    expect(stateOf(log)).toEqual(stateOf(open(copyOf(storage, log.logStartOffset), 1, log.highWatermark)));
  });

  it("a truncation after the high watermark went back does not restore a checkpoint that forgot a closed transaction", () => {
    // One batch per segment: producer 1's transaction (0) commits at 1; the high watermark passes the
    // marker (the transaction is no longer unstable), checkpoints are taken at the rolls to 2 and 3; then
    // the high watermark goes back to 1. A replay counts the transaction as unstable again (its marker is
    // not below the high watermark): the LSO is 0. The checkpoint at 3 forgot it, so it must not be used.
    const steps: Step[] = [
      { kind: "data", pid: 1, epoch: 0, txn: true, noSeq: false },
      { kind: "marker", pid: 1, epoch: 0, type: COMMIT },
      { kind: "plain" },
      { kind: "plain" },
      { kind: "plain" },
    ];
    const all = batches(steps);
    const storage = new WatchedStorage();
    const log = open(storage, 1);
    for (const b of all.slice(0, 2)) log.appendAsFollower(b);
    log.updateHighWatermark(log.logEndOffset);
    for (const b of all.slice(2)) log.appendAsFollower(b);
    const commitAt = log.segments()[1]!.baseOffset;
    log.updateHighWatermark(commitAt);
    log.truncateTo(log.segments()[3]!.baseOffset);
    expect(log.lastStableOffset).toBe(0n);
    const reopened = open(storage, 1, log.highWatermark);
    expect(stateOf(log)).toEqual(stateOf(reopened));
  });

  it("a high watermark that goes back below a marker it passed makes that transaction unstable again, as a reopened log has it (FC_SEED=139)", () => {
    // Producer 1's transaction (0) commits at 1; the high watermark passes the marker (the transaction is
    // stable) and then goes back to 1, as a follower's does under a new leader that has not replicated as
    // far. A replay counts the transaction unstable (its marker is not below the high watermark): LSO 0.
    const steps: Step[] = [
      { kind: "data", pid: 1, epoch: 0, txn: true, noSeq: false },
      { kind: "marker", pid: 1, epoch: 0, type: COMMIT },
      { kind: "plain" },
      { kind: "plain" },
    ];
    const { storage, log } = onePerSegment(steps);
    expect(log.lastStableOffset).toBe(log.logEndOffset);
    log.updateHighWatermark(log.segments()[1]!.baseOffset);
    expect(log.lastStableOffset).toBe(0n);
    expect(stateOf(log)).toEqual(stateOf(open(copyOf(storage, log.logStartOffset), 1, log.highWatermark)));
  });

  it("retention keeps a transaction that spans the cut dated from its first batch; a truncation too", () => {
    // One batch per segment. Producer 1's transaction starts at 0, goes on at 1 and commits at 3; the
    // rolls to 2 and 3 checkpoint it open from 0. Retention deletes segment 0: the transaction still
    // started at 0 (Kafka keeps producer state when the log start moves). A truncation to 3 (the commit
    // goes) shows it open from 0, as a reopened log does.
    const steps: Step[] = [
      { kind: "data", pid: 1, epoch: 0, txn: true, noSeq: false },
      { kind: "data", pid: 1, epoch: 0, txn: true, noSeq: false },
      { kind: "plain" },
      { kind: "marker", pid: 1, epoch: 0, type: COMMIT },
      { kind: "plain" },
    ];
    const { storage, log } = onePerSegment(steps);
    const bases = log.segments().map((s) => s.baseOffset);
    log.applyRetention({
      retentionBytes: log
        .segments()
        .slice(1)
        .reduce((n, s) => n + s.sizeInBytes, 0),
    });
    expect(log.logStartOffset).toBe(bases[1]);
    log.truncateTo(bases[3]!);
    expect(log.ongoingTransactions()).toEqual([{ producerId: 1n, firstOffset: bases[0] }]);
    expect(log.lastStableOffset).toBe(log.logStartOffset);
    expect(stateOf(log)).toEqual(stateOf(open(storage, 1, log.highWatermark)));
  });

  it("deleting the oldest segments of a log without transactions across them reads none of the rest", () => {
    const steps: Step[] = Array.from({ length: 400 }, (_, i) =>
      i % 7 === 6
        ? { kind: "plain" as const }
        : { kind: "data" as const, pid: 1 + (i % 3), epoch: 0, txn: false, noSeq: false },
    );
    const storage = new WatchedStorage();
    const log = open(storage, 2_000);
    for (const b of batches(steps)) log.appendAsFollower(b);
    log.updateHighWatermark(log.logEndOffset);
    const segments = log.segments().length;
    storage.reads = 0;
    const result = log.applyRetention({ retentionBytes: 4_000 });
    expect(result.segmentsDeleted).toBeGreaterThan(segments / 2);
    expect(storage.reads).toBe(0);
    // What the deleted segments held is gone; what is left reads as before.
    expect(
      log
        .producerStateSnapshot()
        .map((e) => e.batchMetadata.every((m) => m.firstOffset >= log.logStartOffset)),
    ).toEqual([true, true, true]);
    expect(log.read(log.logStartOffset, 1 << 20, "read_uncommitted").records.length).toBeGreaterThan(0);
  });
});
