import * as fs from "node:fs";
import * as path from "node:path";
import { controlTypeOf, type RecordBatch } from "@cluster-mirror/protocol";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { FileLogStorage, ManualClock, MemoryLogStorage, PartitionLog } from "../src/index";
import { ABORT, controlBatch, dataBatch, memoryLog, PID_RESET, removeDir, tempDir } from "./helpers";

const SEED = Number(process.env.FC_SEED ?? 20261201);

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) removeDir(d);
});

function fileLog(dir: string, segmentBytes = 1 << 20): PartitionLog {
  return PartitionLog.open(FileLogStorage.open(dir), { clock: new ManualClock(0), segmentBytes });
}

/** The answer by scanning every stored batch, as `endsWithPidReset` used to be computed. */
function scannedLastType(log: PartitionLog): number | undefined {
  let last: RecordBatch | undefined;
  for (const b of log.batches()) last = b;
  return last === undefined ? undefined : controlTypeOf(last);
}

function appendControl(log: PartitionLog, type: number): void {
  log.appendAsLeader(controlBatch(type, { pid: type === PID_RESET ? undefined : 5n, epoch: 0 }), 1, {
    origin: "coordinator",
  });
}

describe("PartitionLog.lastBatchControlType", () => {
  it("follows appends: nothing, data, a PID reset, data again, an ABORT marker", () => {
    const { log } = memoryLog();
    expect(log.lastBatchControlType).toBeUndefined();
    expect(log.endsWithPidReset()).toBe(false);
    log.appendAsLeader(dataBatch(), 1);
    expect(log.endsWithPidReset()).toBe(false);
    appendControl(log, PID_RESET);
    expect(log.lastBatchControlType).toBe(PID_RESET);
    expect(log.endsWithPidReset()).toBe(true);
    log.appendAsLeader(dataBatch(), 1);
    expect(log.lastBatchControlType).toBeUndefined();
    appendControl(log, ABORT);
    expect(log.lastBatchControlType).toBe(ABORT);
    expect(log.endsWithPidReset()).toBe(false);
  });

  it("an append of several fetched batches ends with the type of the last one", () => {
    const { log } = memoryLog();
    log.appendAsFollower(
      Buffer.concat([controlBatch(PID_RESET, { baseOffset: 0n }), dataBatch({ baseOffset: 1n })]),
    );
    expect(log.endsWithPidReset()).toBe(false);
    log.appendAsFollower(
      Buffer.concat([dataBatch({ baseOffset: 2n }), controlBatch(PID_RESET, { baseOffset: 3n })]),
    );
    expect(log.endsWithPidReset()).toBe(true);
  });

  it("truncation back to a PID reset makes it the last batch again; truncating it away forgets it", () => {
    const { log } = memoryLog();
    log.appendAsLeader(dataBatch(), 1); // offset 0
    appendControl(log, PID_RESET); // offset 1
    log.appendAsLeader(dataBatch(), 1); // offset 2
    expect(log.endsWithPidReset()).toBe(false);
    log.truncateTo(2n);
    expect(log.endsWithPidReset()).toBe(true);
    log.truncateTo(1n);
    expect(log.endsWithPidReset()).toBe(false);
    appendControl(log, PID_RESET);
    log.truncateFullyAndStartAt(10n);
    expect(log.lastBatchControlType).toBeUndefined();
  });

  it("survives a restart with file storage, and recovery that cuts a torn tail restores the earlier end", () => {
    const dir = tempDir();
    dirs.push(dir);
    const log = fileLog(dir);
    log.appendAsLeader(dataBatch(), 1);
    appendControl(log, PID_RESET);
    log.close();
    const reopened = fileLog(dir);
    expect(reopened.endsWithPidReset()).toBe(true);
    reopened.appendAsLeader(dataBatch({ count: 3 }), 1);
    expect(reopened.endsWithPidReset()).toBe(false);
    reopened.close();
    // A crash in the middle of the data batch's write: recovery cuts it, the PID reset is last again.
    const segment = path.join(dir, "00000000000000000000.log");
    fs.truncateSync(segment, fs.statSync(segment).size - 5);
    const recovered = fileLog(dir);
    expect(recovered.recovery.truncatedTail).toBeDefined();
    expect(recovered.endsWithPidReset()).toBe(true);
    recovered.close();
  });

  type Op =
    | { type: "data" }
    | { type: "control"; control: number }
    | { type: "truncate"; fraction: number }
    | { type: "truncateFully" }
    | { type: "reopen" };

  const opArb: fc.Arbitrary<Op> = fc.oneof(
    { weight: 4, arbitrary: fc.constant({ type: "data" as const }) },
    {
      weight: 3,
      arbitrary: fc.record({
        type: fc.constant("control" as const),
        control: fc.constantFrom(PID_RESET, ABORT),
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        type: fc.constant("truncate" as const),
        fraction: fc.double({ min: 0, max: 1, noNaN: true }),
      }),
    },
    { weight: 1, arbitrary: fc.constant({ type: "truncateFully" as const }) },
    { weight: 2, arbitrary: fc.constant({ type: "reopen" as const }) },
  );

  it("always equals a scan of the stored batches, through appends, truncations and restarts (file and memory)", () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 40 }), fc.boolean(), (ops, onDisk) => {
        const dir = onDisk ? tempDir() : undefined;
        const memory = new MemoryLogStorage();
        // Small segments, so truncations and recovery cross segment boundaries.
        const open = () =>
          PartitionLog.open(dir ? FileLogStorage.open(dir) : memory, {
            clock: new ManualClock(0),
            segmentBytes: 300,
          });
        let log = open();
        try {
          for (const op of ops) {
            if (op.type === "data") log.appendAsLeader(dataBatch({ count: 2 }), 1);
            else if (op.type === "control") appendControl(log, op.control);
            else if (op.type === "truncate") {
              const start = Number(log.logStartOffset);
              log.truncateTo(BigInt(start + Math.floor(op.fraction * (Number(log.logEndOffset) - start))));
            } else if (op.type === "truncateFully") log.truncateFullyAndStartAt(log.logEndOffset);
            else {
              log.close();
              log = open();
            }
            expect(log.lastBatchControlType).toBe(scannedLastType(log));
            expect(log.endsWithPidReset()).toBe(scannedLastType(log) === PID_RESET);
          }
        } finally {
          log.close();
          if (dir) removeDir(dir);
        }
      }),
      { seed: SEED, numRuns: 60, verbose: 1 },
    );
  });
});
