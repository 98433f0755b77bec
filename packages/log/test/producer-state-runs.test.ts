import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ABORT, COMMIT, controlBatch, dataBatch, memoryLog } from "./helpers";

const SEED = Number(process.env.FC_SEED ?? 20261201);

/** One batch of a fetched stream, before its offsets are placed. */
type Step =
  | { kind: "data"; pid: number; epoch: number; txn: boolean; noSeq: boolean }
  | { kind: "marker"; pid: number; epoch: number; type: number }
  | { kind: "plain" };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record({
      kind: fc.constant("data" as const),
      pid: fc.integer({ min: 1, max: 3 }),
      epoch: fc.integer({ min: 0, max: 1 }),
      // Mostly plain idempotent batches, so long runs of one producer are common.
      txn: fc.constantFrom(false, false, false, true),
      noSeq: fc.constantFrom(false, false, false, false, true),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("marker" as const),
      pid: fc.integer({ min: 1, max: 3 }),
      epoch: fc.integer({ min: 0, max: 1 }),
      type: fc.constantFrom(ABORT, COMMIT),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: "plain" as const }) },
);

/** The steps as batches at increasing offsets, sequences counting per producer. */
function batches(steps: readonly Step[]): Buffer[] {
  const seqs = new Map<number, number>();
  let offset = 0n;
  return steps.map((s) => {
    const baseOffset = offset;
    if (s.kind === "marker") {
      offset += 1n;
      return controlBatch(s.type, { pid: BigInt(s.pid), epoch: s.epoch, baseOffset, leaderEpoch: 0 });
    }
    const count = 1 + Number(baseOffset % 3n);
    offset += BigInt(count);
    if (s.kind === "plain") return dataBatch({ baseOffset, count, leaderEpoch: 0 });
    const seq = seqs.get(s.pid) ?? 0;
    seqs.set(s.pid, seq + count);
    const batch = dataBatch({
      baseOffset,
      count,
      leaderEpoch: 0,
      pid: BigInt(s.pid),
      epoch: s.epoch,
      seq: s.noSeq ? -1 : seq,
      txn: s.txn,
      baseTimestamp: 1000n + baseOffset,
    });
    return batch;
  });
}

describe("producer state of one append of many batches", () => {
  it("is the state of appending the same batches one by one (runs of one producer's plain batches included)", () => {
    fc.assert(
      fc.property(
        // Each step repeated 1 to 9 times: runs of one producer's batches, short and long.
        fc.array(fc.tuple(stepArb, fc.integer({ min: 1, max: 9 })), { minLength: 1, maxLength: 12 }),
        fc.boolean(),
        (segments, transferOwnership) => {
          const steps = segments.flatMap(([step, n]) => Array.from({ length: n }, () => step));
          const all = batches(steps);
          const together = memoryLog().log;
          together.appendAsFollower(Buffer.concat(all), { transferOwnership });
          const oneByOne = memoryLog().log;
          for (const b of all) oneByOne.appendAsFollower(b, { transferOwnership });
          expect(together.producerStateSnapshot()).toEqual(oneByOne.producerStateSnapshot());
          expect(together.ongoingTransactions()).toEqual(oneByOne.ongoingTransactions());
          expect(together.logEndOffset).toBe(oneByOne.logEndOffset);
        },
      ),
      { seed: SEED, numRuns: 300 },
    );
  });

  it("keeps the last five sequences and the last timestamp of a long run of one producer", () => {
    const all = batches(
      Array.from(
        { length: 30 },
        () => ({ kind: "data", pid: 7, epoch: 0, txn: false, noSeq: false }) as const,
      ),
    );
    const { log } = memoryLog();
    log.appendAsFollower(all);
    const [entry] = log.producerStateSnapshot();
    const last5 = all.slice(-5);
    expect(entry?.batchMetadata.map((m) => m.firstOffset)).toEqual(last5.map((b) => b.readBigInt64BE(0)));
    expect(entry?.lastTimestamp).toBe(last5[4]!.readBigInt64BE(35)); // the last batch's maxTimestamp
  });
});
