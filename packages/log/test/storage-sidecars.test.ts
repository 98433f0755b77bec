import * as fs from "node:fs";
import * as path from "node:path";
import { ControlRecordType, controlTypeOf } from "@cluster-mirror/protocol";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { FileLogStorage, ManualClock, PartitionLog } from "../src/index";
import { parseProducerSnapshot } from "../src/storage-producer-snapshot";
import { buildSegmentIndexes } from "../src/storage-segment-index";
import { parseTransactionIndex } from "../src/storage-transaction-index";
import { controlBatch, dataBatch, removeDir, tempDir } from "./helpers";

const SEED = Number(process.env.FC_SEED ?? 20261201);

type Command =
  | { t: "plain"; count: number; key: number; size: number }
  | { t: "txn"; pid: number; size: number }
  | { t: "marker"; pid: number; abort: boolean }
  | { t: "truncate"; frac: number }
  | { t: "deleteRecords"; frac: number }
  | { t: "compact" }
  | { t: "reopen" };

const command: fc.Arbitrary<Command> = fc.oneof(
  {
    arbitrary: fc.record({
      t: fc.constant("plain" as const),
      count: fc.integer({ min: 1, max: 4 }),
      key: fc.nat(5),
      size: fc.integer({ min: 10, max: 1500 }),
    }),
    weight: 5,
  },
  {
    arbitrary: fc.record({
      t: fc.constant("txn" as const),
      pid: fc.integer({ min: 1, max: 3 }),
      size: fc.integer({ min: 10, max: 800 }),
    }),
    weight: 3,
  },
  {
    arbitrary: fc.record({
      t: fc.constant("marker" as const),
      pid: fc.integer({ min: 1, max: 3 }),
      abort: fc.boolean(),
    }),
    weight: 2,
  },
  {
    arbitrary: fc.record({
      t: fc.constant("truncate" as const),
      frac: fc.double({ min: 0, max: 1, noNaN: true }),
    }),
    weight: 1,
  },
  {
    arbitrary: fc.record({
      t: fc.constant("deleteRecords" as const),
      frac: fc.double({ min: 0, max: 1, noNaN: true }),
    }),
    weight: 1,
  },
  { arbitrary: fc.constant({ t: "compact" as const }), weight: 1 },
  { arbitrary: fc.constant({ t: "reopen" as const }), weight: 1 },
);

const name = (offset: bigint, suffix: string) => `${offset.toString().padStart(20, "0")}${suffix}`;
const readOr = (file: string) => (fs.existsSync(file) ? fs.readFileSync(file) : Buffer.alloc(0));

function open(dir: string, clock: ManualClock): PartitionLog {
  const log = PartitionLog.open(FileLogStorage.open(dir, { fsync: false }), {
    clock,
    segmentBytes: 6000,
    cleanupPolicy: "compact",
    deleteRetentionMs: 0,
  });
  log.updateHighWatermark(log.logEndOffset);
  return log;
}

function apply(log: PartitionLog, cmd: Command, clock: ManualClock): void {
  const start = log.logStartOffset;
  const at = (frac: number) => start + BigInt(Math.floor(Number(log.logEndOffset - start) * frac));
  const producers = new Map(log.producerStateSnapshot().map((p) => [p.producerId, p]));
  clock.advance(10);
  switch (cmd.t) {
    case "plain": {
      const keys = Array.from({ length: cmd.count }, (_, i) => `k${(cmd.key + i) % 6}`);
      const values = keys.map((_, i) => `${i}${"v".repeat(cmd.size)}`);
      // Timestamps go back now and then: the time index keeps the largest so far.
      const baseTimestamp = BigInt(clock.now() - (cmd.key === 0 ? 5000 : 0));
      log.appendAsLeader(dataBatch({ keys, values, baseTimestamp }), 0);
      break;
    }
    case "txn": {
      const pid = BigInt(cmd.pid);
      const seq = (producers.get(pid)?.batchMetadata.at(-1)?.lastSeq ?? -1) + 1;
      const values = [`t${"x".repeat(cmd.size)}`];
      log.appendAsLeader(
        dataBatch({
          pid,
          epoch: 0,
          seq,
          txn: true,
          keys: ["tk"],
          values,
          baseTimestamp: BigInt(clock.now()),
        }),
        0,
      );
      break;
    }
    case "marker": {
      const type = cmd.abort ? ControlRecordType.ABORT : ControlRecordType.COMMIT;
      log.appendAsLeader(controlBatch(type, { pid: BigInt(cmd.pid), epoch: 0 }), 0, {
        origin: "coordinator",
      });
      break;
    }
    case "truncate":
      log.truncateTo(at(cmd.frac));
      break;
    case "deleteRecords":
      log.deleteRecordsBefore(at(cmd.frac));
      break;
    case "compact":
      log.compact();
      break;
    case "reopen":
      break;
  }
  log.updateHighWatermark(log.logEndOffset);
}

/** Aborted transactions (with the LSO after each marker) by replaying the stored batches, as Kafka. */
function expectedAborted(log: PartitionLog) {
  const open = new Map<bigint, bigint>();
  const out: { producerId: bigint; firstOffset: bigint; lastOffset: bigint; lastStableOffset: bigint }[] = [];
  for (const b of log.batches()) {
    if (b.producerId < 0n) continue;
    if (b.isControl) {
      const first = open.get(b.producerId);
      if (first === undefined) continue;
      open.delete(b.producerId);
      if (controlTypeOf(b) !== ControlRecordType.ABORT) continue;
      const others = [...open.values()].sort((x, y) => (x < y ? -1 : 1));
      out.push({
        producerId: b.producerId,
        firstOffset: first,
        lastOffset: b.baseOffset,
        lastStableOffset: others[0] ?? b.baseOffset + 1n,
      });
    } else if (b.isTransactional && !open.has(b.producerId)) open.set(b.producerId, b.baseOffset);
  }
  return out;
}

/** Every segment's sidecars say what Kafka's rules derive from the segment's bytes and the log's state. */
function checkSidecars(dir: string, log: PartitionLog): void {
  const names = fs.readdirSync(dir);
  const bases = names
    .filter((n) => n.endsWith(".log"))
    .map((n) => BigInt(n.slice(0, 20)))
    .sort((a, b) => (a < b ? -1 : 1));
  const aborted = expectedAborted(log);
  bases.forEach((base, i) => {
    const active = i === bases.length - 1;
    const built = buildSegmentIndexes(base, fs.readFileSync(path.join(dir, name(base, ".log"))), active);
    expect(readOr(path.join(dir, name(base, ".index"))).equals(built.offsetIndex), `index of ${base}`).toBe(
      true,
    );
    expect(
      readOr(path.join(dir, name(base, ".timeindex"))).equals(built.timeIndex),
      `timeindex of ${base}`,
    ).toBe(true);
    if (!active) expect(names).toContain(name(base, ".index"));
    const next = bases[i + 1];
    const mine = aborted.filter((t) => t.lastOffset >= base && (next === undefined || t.lastOffset < next));
    expect(parseTransactionIndex(readOr(path.join(dir, name(base, ".txnindex"))))).toEqual(mine);
  });
  // Sidecars of deleted segments go with them; snapshots never name an offset past the log end.
  for (const n of names) {
    const m = /^(\d{20})\.(index|timeindex|txnindex|snapshot)$/.exec(n);
    if (!m) continue;
    const offset = BigInt(m[1]!);
    if (m[2] === "snapshot") {
      expect(offset <= log.logEndOffset, `${n} past the log end ${log.logEndOffset}`).toBe(true);
      parseProducerSnapshot(fs.readFileSync(path.join(dir, n)));
    } else expect(bases, `${n} without its segment`).toContain(offset);
  }
}

describe("Kafka's sidecar files (.index, .timeindex, .txnindex, .snapshot)", () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) removeDir(d);
  });

  it("stay what the segments and the log's state say, through rolls, truncation, deletion, compaction and reopening", () => {
    // numRuns: 40 sequences of 20 to 80 commands (file I/O, fsync off).
    fc.assert(
      fc.property(fc.array(command, { minLength: 20, maxLength: 80 }), (cmds) => {
        const dir = tempDir();
        dirs.push(dir);
        const clock = new ManualClock(1_700_000_000_000);
        let log = open(dir, clock);
        try {
          for (const cmd of cmds) {
            apply(log, cmd, clock);
            if (cmd.t === "reopen") {
              log.close();
              log = open(dir, clock);
            }
            checkSidecars(dir, log);
          }
        } finally {
          log.close();
          removeDir(dir);
        }
      }),
      { seed: SEED, numRuns: 40 },
    );
  });

  it("snapshots the producers at a roll, named by the new segment, and at close, at the log end", () => {
    const dir = tempDir();
    dirs.push(dir);
    const clock = new ManualClock(0);
    const log = PartitionLog.open(FileLogStorage.open(dir, { fsync: false }), { clock, segmentBytes: 1 });
    log.appendAsLeader(dataBatch({ pid: 7n, epoch: 2, seq: 0, count: 3 }), 0);
    log.appendAsLeader(dataBatch({ pid: 7n, epoch: 2, seq: 3, txn: true, count: 2 }), 0); // rolls at 3
    log.close();
    const at = (offset: bigint) =>
      parseProducerSnapshot(fs.readFileSync(path.join(dir, name(offset, ".snapshot"))));
    expect(at(3n)).toEqual([
      {
        producerId: 7n,
        epoch: 2,
        lastSequence: 2,
        lastOffset: 2n,
        offsetDelta: 2,
        timestamp: 1002n,
        coordinatorEpoch: -1,
        currentTxnFirstOffset: -1n,
      },
    ]);
    expect(at(5n)).toEqual([
      {
        ...at(3n)[0],
        lastSequence: 4,
        lastOffset: 4n,
        offsetDelta: 1,
        timestamp: 1001n,
        currentTxnFirstOffset: 3n,
      },
    ]);
  });

  it("rewrites a stale index of the active segment when the log is opened, before any append", () => {
    const dir = tempDir();
    dirs.push(dir);
    const clock = new ManualClock(1_700_000_000_000);
    let log = open(dir, clock);
    // 2 records of ~300 bytes a batch: eight batches in the 6000-byte active segment, one index entry.
    for (let i = 0; i < 8; i++) apply(log, { t: "plain", count: 2, key: 1, size: 300 }, clock);
    log.close();
    const active = fs
      .readdirSync(dir)
      .filter((n) => n.endsWith(".log"))
      .map((n) => BigInt(n.slice(0, 20)))
      .sort((a, b) => (a < b ? -1 : 1))
      .at(-1)!;
    const index = path.join(dir, name(active, ".index"));
    const good = fs.readFileSync(index);
    expect(good.length).toBeGreaterThan(0);
    fs.writeFileSync(index, Buffer.concat([good, Buffer.from([0, 0, 0, 99, 0, 0, 0, 1])])); // a stale entry
    fs.rmSync(path.join(dir, name(active, ".timeindex")));
    log = open(dir, clock);
    expect(fs.readFileSync(index).equals(good)).toBe(true);
    checkSidecars(dir, log);
    log.close();
  });
});
