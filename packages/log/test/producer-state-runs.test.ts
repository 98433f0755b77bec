import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { memoryLog } from "./helpers";
import { batches, stepArb } from "./producer-steps";

const SEED = Number(process.env.FC_SEED ?? 20261201);

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
