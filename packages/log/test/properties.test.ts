import * as fs from "node:fs";
import * as path from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import {
  FileLogStorage,
  ManualClock,
  MemoryLogStorage,
  PartitionLog,
  ProducerStateManager,
} from "../src/index";
import { controlBatch, dataBatch, PID_RESET, removeDir, tempDir } from "./helpers";
import {
  type Command,
  comparable,
  comparableModel,
  errorCode,
  headerOf,
  type ModelBatch,
  markerFor,
  modelProducers,
  observe,
  produceFor,
} from "./model";

const SEED = Number(process.env.FC_SEED ?? 20261129);
const SEGMENT_BYTES = 400;

const command: fc.Arbitrary<Command> = fc.oneof(
  fc.record({
    t: fc.constant("plain" as const),
    count: fc.integer({ min: 1, max: 3 }),
    key: fc.nat(7),
    tombstone: fc.boolean(),
  }),
  fc.record({
    t: fc.constant("idem" as const),
    pid: fc.integer({ min: 1, max: 3 }),
    kind: fc.constantFrom("next", "next", "next", "gap", "dup", "newEpoch", "oldEpoch", "unknown"),
    pick: fc.nat(9),
    count: fc.integer({ min: 1, max: 3 }),
    key: fc.nat(7),
  }),
  fc.record({
    t: fc.constant("txn" as const),
    pid: fc.integer({ min: 1, max: 3 }),
    count: fc.integer({ min: 1, max: 2 }),
    key: fc.nat(7),
  }),
  fc.record({ t: fc.constant("marker" as const), pid: fc.integer({ min: 1, max: 3 }), commit: fc.boolean() }),
  fc.constant({ t: "reset" as const }),
  fc.record({ t: fc.constant("truncate" as const), frac: fc.double({ min: 0, max: 1, noNaN: true }) }),
  fc.record({ t: fc.constant("hw" as const), frac: fc.double({ min: 0, max: 1, noNaN: true }) }),
  fc.record({ t: fc.constant("compact" as const), advanceMs: fc.integer({ min: 0, max: 2000 }) }),
  fc.record({ t: fc.constant("deleteRecords" as const), frac: fc.double({ min: 0, max: 1, noNaN: true }) }),
  fc.constant({ t: "reopen" as const }),
);

function config(clock: ManualClock) {
  return {
    clock,
    segmentBytes: SEGMENT_BYTES,
    segmentMs: 1e12,
    cleanupPolicy: "compact" as const,
    deleteRetentionMs: 1000,
  };
}

/**
 * The model of a log: the batches it holds, and those retention or DeleteRecords deleted since it was last
 * emptied (or reopened), whose producers it still knows.
 */
interface Model {
  batches: ModelBatch[];
  gone: ModelBatch[];
}

/** Applies `cmd` to `log` and to the model, checking outcomes; returns the new model. */
function step(log: PartitionLog, clock: ManualClock, cmd: Command, model: Model): Model {
  return { ...model, ...stepBatches(log, clock, cmd, model) };
}

function stepBatches(
  log: PartitionLog,
  clock: ManualClock,
  cmd: Command,
  { batches, gone }: Model,
): { batches: ModelBatch[]; gone?: ModelBatch[] } {
  const ps = modelProducers([...gone, ...batches]);
  const leo = log.logEndOffset;
  const span = (frac: number) =>
    log.logStartOffset + BigInt(Math.floor(Number(leo - log.logStartOffset) * frac));
  switch (cmd.t) {
    case "plain": {
      const keys = Array.from({ length: cmd.count }, (_, i) => `k${(cmd.key + i) % 4}`);
      const values = keys.map((_, i) => (cmd.tombstone && i === 0 ? null : `v${i}`));
      log.appendAsLeader(dataBatch({ keys, values }), 0);
      return {
        batches: [
          ...batches,
          {
            base: leo,
            last: leo + BigInt(cmd.count - 1),
            pid: -1n,
            epoch: -1,
            seq: -1,
            txn: false,
            control: undefined,
          },
        ],
      };
    }
    case "idem":
    case "txn": {
      const { bytes, expected } = produceFor(cmd, ps);
      let outcome: "ok" | "dup" | number;
      try {
        outcome = log.appendAsLeader(bytes, 0).duplicate ? "dup" : "ok";
      } catch (e) {
        outcome = errorCode(e);
      }
      expect(outcome).toBe(expected);
      if (outcome !== "ok") {
        expect(log.logEndOffset).toBe(leo);
        return { batches };
      }
      const [h] = [...log.batches()].slice(-1).map(headerOf);
      return { batches: [...batches, h!] };
    }
    case "marker": {
      const pid = BigInt(cmd.pid);
      log.appendAsLeader(markerFor(pid, cmd.commit, ps), 0, { origin: "coordinator" });
      const epoch = ps.get(pid)?.epoch ?? 0;
      return {
        batches: [
          ...batches,
          { base: leo, last: leo, pid, epoch, seq: -1, txn: true, control: cmd.commit ? 1 : 0 },
        ],
      };
    }
    case "reset": {
      log.appendAsLeader(controlBatch(PID_RESET), 0, { origin: "coordinator" });
      return {
        batches: [
          ...batches,
          { base: leo, last: leo, pid: -1n, epoch: -1, seq: -1, txn: false, control: PID_RESET },
        ],
      };
    }
    case "truncate": {
      const target = span(cmd.frac);
      // A truncation that leaves nothing readable empties the log (producers included, as Kafka's
      // truncateFullyAndStartAt): watched here, as the rules deciding it are not the point of the model.
      let emptied = false;
      const truncateFully = log.truncateFullyAndStartAt.bind(log);
      log.truncateFullyAndStartAt = (offset) => {
        emptied = true;
        truncateFully(offset);
      };
      log.truncateTo(target);
      log.truncateFullyAndStartAt = truncateFully;
      // A batch holding the log start is removed whole with everything below it (the log starts anew).
      const firstBase = log.segments()[0]!.baseOffset;
      const kept = batches.filter((b) => b.last < target && b.base >= firstBase);
      const lastEnd = kept.length > 0 ? kept[kept.length - 1]!.last + 1n : log.logStartOffset;
      const activeBase = log.segments().at(-1)!.baseOffset;
      expect(log.logEndOffset).toBe(lastEnd > activeBase ? lastEnd : activeBase);
      expect(log.logEndOffset <= target || target >= leo).toBe(true);
      return emptied ? { batches: kept, gone: [] } : { batches: kept };
    }
    case "hw":
      log.updateHighWatermark(span(cmd.frac));
      return { batches };
    case "compact": {
      clock.advance(cmd.advanceMs);
      log.updateHighWatermark(leo); // compaction works on replicated data
      log.compact();
      const after = [...log.batches()].map(headerOf);
      // Offsets and headers never change; control batches are never removed; the end does not move.
      const byBase = new Map(batches.map((b) => [b.base, b]));
      for (const h of after) expect(h).toEqual(byBase.get(h.base));
      expect(after.filter((h) => h.control !== undefined)).toEqual(
        batches.filter((b) => b.control !== undefined),
      );
      expect(log.logEndOffset).toBe(leo);
      return { batches: after };
    }
    case "deleteRecords": {
      const start = log.logStartOffset;
      const target = start + BigInt(Math.floor(Number(log.highWatermark - start) * cmd.frac));
      expect(log.deleteRecordsBefore(target)).toBe(target);
      expect(log.logStartOffset).toBe(target);
      expect(log.logEndOffset).toBe(leo);
      // Whole segments below the log start are gone; the first remaining one may start below it.
      const segs = log.segments();
      expect(segs[0]!.baseOffset <= target).toBe(true);
      expect(segs[1] === undefined || segs[1].baseOffset > target).toBe(true);
      const first = segs[0]!.baseOffset;
      return {
        batches: batches.filter((b) => b.base >= first),
        gone: [...gone, ...batches.filter((b) => b.base < first)],
      };
    }
    case "reopen":
      return { batches };
  }
}

function checkInvariants(log: PartitionLog, { batches, gone }: Model): void {
  expect([...log.batches()].map(headerOf)).toEqual(batches);
  // Producer state equals the reference rules replayed over what the log held since it was emptied...
  const producers = modelProducers([...gone, ...batches]);
  expect(comparable(log.producerStateSnapshot())).toEqual(comparableModel(producers));
  // ...and, with nothing deleted, a fresh ProducerStateManager fed the batches from scratch.
  if (gone.length === 0) {
    const fresh = new ProducerStateManager();
    for (const b of log.batches()) fresh.update(b);
    expect(log.producerStateSnapshot()).toEqual(fresh.snapshot());
  }
  // The LSO never passes an open transaction, nor the high watermark.
  const lso = log.lastStableOffset;
  expect(lso <= log.highWatermark).toBe(true);
  // (An open transaction that started below the log start holds it at the log start, as in Kafka.)
  const start = log.logStartOffset;
  for (const p of producers.values())
    if (p.txn !== undefined) expect(lso <= (p.txn > start ? p.txn : start)).toBe(true);
  expect(lso >= start).toBe(true);
  expect(log.highWatermark <= log.logEndOffset && log.logStartOffset <= log.highWatermark).toBe(true);
}

describe("PartitionLog properties", () => {
  it("random appends, markers, resets, truncations and compactions agree with the reference model", () => {
    // numRuns: 400 sequences of 10 to 60 commands.
    fc.assert(
      fc.property(fc.array(command, { minLength: 10, maxLength: 60 }), (cmds) => {
        const clock = new ManualClock(1_000_000);
        const log = PartitionLog.open(new MemoryLogStorage(), config(clock));
        let model: Model = { batches: [], gone: [] };
        for (const cmd of cmds) {
          model = step(log, clock, cmd, model);
          checkInvariants(log, model);
        }
      }),
      { seed: SEED, numRuns: 400 },
    );
  });

  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) removeDir(d);
  });

  it("a file log, reopened at random points, always equals the same log in memory", () => {
    // numRuns: 60 sequences of 10 to 40 commands (file I/O with fsync off keeps it fast).
    fc.assert(
      fc.property(fc.array(command, { minLength: 10, maxLength: 40 }), (cmds) => {
        const dir = tempDir();
        dirs.push(dir);
        const memClock = new ManualClock(1_000_000);
        const fileClock = new ManualClock(1_000_000);
        const memStorage = new MemoryLogStorage();
        let mem = PartitionLog.open(memStorage, config(memClock));
        let file = PartitionLog.open(FileLogStorage.open(dir, { fsync: false }), config(fileClock));
        let memModel: Model = { batches: [], gone: [] };
        let fileModel: Model = { batches: [], gone: [] };
        try {
          for (const cmd of cmds) {
            memModel = step(mem, memClock, cmd, memModel);
            fileModel = step(file, fileClock, cmd, fileModel);
            if (cmd.t === "reopen") {
              const hw = file.highWatermark;
              file.close();
              file = PartitionLog.open(FileLogStorage.open(dir, { fsync: false }), config(fileClock), {
                highWatermark: hw,
              });
              expect(file.recovery.truncatedTail).toBeUndefined();
              // Both storages keep the producers of deleted batches (file storage in the producer snapshot
              // named by the first segment); the memory log is reopened alike.
              mem = PartitionLog.open(memStorage, config(memClock), { highWatermark: mem.highWatermark });
              memModel = { ...memModel, gone: [] };
              fileModel = { ...fileModel, gone: [] };
            }
            expect(observe(file)).toEqual(observe(mem));
          }
        } finally {
          file.close();
          removeDir(dir);
        }
      }),
      { seed: SEED, numRuns: 60 },
    );
  });

  it("a torn tail of random length is cut on reopen, keeping every whole batch", () => {
    // numRuns: 30 (batch count and chopped byte count).
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 8 }), fc.integer({ min: 1, max: 60 }), (n, chop) => {
        const dir = tempDir();
        dirs.push(dir);
        try {
          const clock = new ManualClock(0);
          const log = PartitionLog.open(FileLogStorage.open(dir, { fsync: false }), config(clock));
          for (let i = 0; i < n; i++) log.appendAsLeader(dataBatch({ pid: 1n, seq: i }), 0);
          const segs = log.segments();
          log.close();
          const last = segs.at(-1)!;
          const name = path.join(dir, `${last.baseOffset.toString().padStart(20, "0")}.log`);
          fs.truncateSync(name, Math.max(0, last.sizeInBytes - chop));
          const again = PartitionLog.open(FileLogStorage.open(dir, { fsync: false }), config(clock));
          expect(again.logEndOffset).toBe(BigInt(n - 1));
          expect(again.producerStateSnapshot()[0]?.batchMetadata.at(-1)?.lastSeq ?? -1).toBe(n - 2);
          again.close();
        } finally {
          removeDir(dir);
        }
      }),
      { seed: SEED, numRuns: 30 },
    );
  });
});
