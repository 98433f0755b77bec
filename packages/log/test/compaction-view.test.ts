import { ControlRecordType, decodeRecords, recordBatches } from "@cluster-mirror/protocol";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ManualClock, MemoryLogStorage, PartitionLog } from "../src/index";
import { controlBatch, dataBatch, PID_RESET } from "./helpers";

/**
 * The cleaner must not change what a READ_COMMITTED consumer ends up with: for random sequences of plain
 * writes, tombstones, transactions (committed, aborted, fenced by an epoch bump, closed by MIRROR_PID_RESET)
 * and compactions at random times, the compacted log and an uncompacted twin with the same appends give
 * the same latest value per key (a tombstone and an absent key are the same), the same LSO and the same
 * last sequence and epoch per producer. While no tombstone can have expired, a consumer that read a prefix
 * before the compactions and the rest after them also ends with the same view. Reopening the compacted log
 * (recovery replays what compaction left) changes none of this.
 */

const SEED = Number(process.env.FC_SEED ?? 20261206);
const DELETE_RETENTION_MS = 1000;

type Cmd =
  | { t: "plain"; key: number; tombstone: boolean }
  | { t: "idem"; pid: number; key: number; tombstone: boolean }
  | { t: "txn"; pid: number; key: number; tombstone: boolean; count: number }
  | { t: "marker"; pid: number; commit: boolean; bump: boolean }
  | { t: "reset" }
  | { t: "hw"; frac: number }
  | { t: "compact"; advanceMs: number }
  | { t: "reopen" };

const cmd: fc.Arbitrary<Cmd> = fc.oneof(
  fc.record({ t: fc.constant("plain" as const), key: fc.nat(5), tombstone: fc.boolean() }),
  fc.record({
    t: fc.constant("idem" as const),
    pid: fc.integer({ min: 4, max: 5 }),
    key: fc.nat(5),
    tombstone: fc.boolean(),
  }),
  fc.record({
    t: fc.constant("txn" as const),
    pid: fc.integer({ min: 1, max: 3 }),
    key: fc.nat(5),
    tombstone: fc.boolean(),
    count: fc.integer({ min: 1, max: 2 }),
  }),
  fc.record({
    t: fc.constant("marker" as const),
    pid: fc.integer({ min: 1, max: 3 }),
    commit: fc.boolean(),
    bump: fc.boolean(),
  }),
  fc.constant({ t: "reset" as const }),
  fc.record({ t: fc.constant("hw" as const), frac: fc.double({ min: 0, max: 1, noNaN: true }) }),
  fc.record({ t: fc.constant("compact" as const), advanceMs: fc.integer({ min: 0, max: 1500 }) }),
  fc.constant({ t: "reopen" as const }),
);

/** A READ_COMMITTED consumer's view of [from, min(LSO, upTo)): key -> value, tombstones delete. */
function consume(
  log: PartitionLog,
  from: bigint,
  into = new Map<string, string>(),
  upTo?: bigint,
): Map<string, string> {
  let offset = from < log.logStartOffset ? log.logStartOffset : from;
  const lso = upTo !== undefined && upTo < log.lastStableOffset ? upTo : log.lastStableOffset;
  while (offset < lso) {
    const fetched = log.read(offset, 300, "read_committed");
    if (fetched.sizeInBytes === 0) break;
    const before = offset;
    const aborted = fetched.abortedTransactions;
    for (const b of recordBatches(fetched.records)) {
      if (b.lastOffset < offset) continue;
      const abortedBatch =
        b.isControl ||
        (b.isTransactional &&
          aborted.some(
            (t) =>
              t.producerId === b.producerId && t.firstOffset <= b.baseOffset && b.baseOffset <= t.lastOffset,
          ));
      if (!abortedBatch) {
        for (const r of decodeRecords(b)) {
          const at = b.baseOffset + BigInt(r.offsetDelta);
          if (at < offset || at >= lso || r.key === null) continue;
          if (r.value === null) into.delete(r.key.toString());
          else into.set(r.key.toString(), r.value.toString());
        }
      }
      offset = b.lastOffset + 1n;
    }
    if (offset === before) throw new Error(`no progress reading at ${offset}`);
  }
  return into;
}

/** Epoch and last sequence/offset of each producer. */
function producers(log: PartitionLog): [bigint, number, number | undefined, bigint | undefined][] {
  return log.producerStateSnapshot().map((p) => {
    const last = p.batchMetadata.at(-1);
    return [p.producerId, p.producerEpoch, last?.lastSeq, last?.lastOffset];
  });
}

interface Producer {
  epoch: number;
  seq: number;
}

function run(cmds: Cmd[]): void {
  const clock = new ManualClock(1_000_000);
  const config = { clock, segmentBytes: 250, segmentMs: 1e12, deleteRetentionMs: DELETE_RETENTION_MS };
  const storage = new MemoryLogStorage();
  let log = PartitionLog.open(storage, { ...config, cleanupPolicy: "compact" });
  const twin = PartitionLog.open(new MemoryLogStorage(), { ...config, cleanupPolicy: "delete" });
  const ps = new Map<number, Producer>();
  const producer = (pid: number): Producer => {
    let p = ps.get(pid);
    if (!p) {
      p = { epoch: 0, seq: 0 };
      ps.set(pid, p);
    }
    return p;
  };
  const both = (bytes: Buffer, origin?: "coordinator") => {
    log.appendAsLeader(bytes, 0, origin ? { origin } : {});
    twin.appendAsLeader(bytes, 0, origin ? { origin } : {});
  };
  let advanced = 0;
  /** What a consumer read from the twin before the first compaction, and where it stopped. */
  let early: { view: Map<string, string>; next: bigint } | undefined;
  for (const c of cmds) {
    switch (c.t) {
      case "plain":
        both(dataBatch({ keys: [`k${c.key}`], values: [c.tombstone ? null : `p${c.key}`] }));
        break;
      case "idem":
      case "txn": {
        const p = producer(c.pid);
        const count = c.t === "txn" ? c.count : 1;
        const keys = Array.from({ length: count }, (_, i) => `k${(c.key + i) % 6}`);
        const values = keys.map((_, i) => (c.tombstone && i === 0 ? null : `${c.t}${c.pid}.${p.seq + i}`));
        both(dataBatch({ pid: BigInt(c.pid), epoch: p.epoch, seq: p.seq, txn: c.t === "txn", keys, values }));
        p.seq += count;
        break;
      }
      case "marker": {
        const p = producer(c.pid);
        if (c.bump) {
          // The coordinator fences the producer: the marker carries the bumped epoch.
          p.epoch++;
          p.seq = 0;
        }
        both(
          controlBatch(c.commit && !c.bump ? ControlRecordType.COMMIT : ControlRecordType.ABORT, {
            pid: BigInt(c.pid),
            epoch: p.epoch,
          }),
          "coordinator",
        );
        break;
      }
      case "reset":
        both(controlBatch(PID_RESET), "coordinator");
        ps.clear();
        break;
      case "hw": {
        // Forward only, as a follower's (Kafka's maybeUpdateHighWatermark): the cleaner works below it.
        const hw =
          log.highWatermark + BigInt(Math.floor(Number(log.logEndOffset - log.highWatermark) * c.frac));
        log.updateHighWatermark(hw);
        twin.updateHighWatermark(hw);
        break;
      }
      case "compact": {
        if (early === undefined) {
          twin.updateHighWatermark(twin.logEndOffset);
          // Only a prefix was read: what a lagging consumer has seen when the cleaner runs.
          const next = twin.lastStableOffset / 2n;
          early = { view: consume(twin, 0n, new Map(), next), next };
        }
        clock.advance(c.advanceMs);
        advanced += c.advanceMs;
        log.updateHighWatermark(log.logEndOffset);
        twin.updateHighWatermark(twin.logEndOffset);
        log.compact();
        break;
      }
      case "reopen":
        // The compacted log as recovery rebuilds it (producer state, aborted transactions) from its bytes.
        log = PartitionLog.open(
          storage,
          { ...config, cleanupPolicy: "compact" },
          { highWatermark: log.highWatermark },
        );
        break;
    }
    expect(log.logEndOffset).toBe(twin.logEndOffset);
    expect(log.highWatermark).toBe(twin.highWatermark);
    expect(log.lastStableOffset).toBe(twin.lastStableOffset);
    expect(consume(log, 0n)).toEqual(consume(twin, 0n));
    expect(producers(log)).toEqual(producers(twin));
    if (early !== undefined && advanced < DELETE_RETENTION_MS && log.lastStableOffset >= early.next) {
      // No tombstone can have expired yet: a consumer that lagged behind the cleaner sees every delete.
      expect(consume(log, early.next, new Map(early.view))).toEqual(consume(twin, 0n));
    }
  }
}

describe("compaction keeps the READ_COMMITTED view", () => {
  it("random writes, tombstones, transactions and compactions: the compacted log reads as its uncompacted twin", () => {
    // numRuns: 300 sequences of 10 to 60 commands, in memory.
    fc.assert(
      fc.property(fc.array(cmd, { minLength: 10, maxLength: 60 }), (cmds) => run(cmds)),
      { seed: SEED, numRuns: Number(process.env.FC_RUNS ?? 300) },
    );
  });
});
