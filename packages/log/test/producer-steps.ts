import fc from "fast-check";
import { ABORT, COMMIT, controlBatch, dataBatch, PID_RESET } from "./helpers";

/** One batch of a fetched stream, before its offsets are placed. */
export type Step =
  | { kind: "data"; pid: number; epoch: number; txn: boolean; noSeq: boolean }
  | { kind: "marker"; pid: number; epoch: number; type: number }
  | { kind: "plain" }
  | { kind: "reset" };

export const stepArb: fc.Arbitrary<Step> = fc.oneof(
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

/** The steps as batches at increasing offsets from `start`, sequences counting per producer. */
export function batches(steps: readonly Step[], start = 0n): Buffer[] {
  const seqs = new Map<number, number>();
  let offset = start;
  return steps.map((s) => {
    const baseOffset = offset;
    if (s.kind === "reset") {
      offset += 1n;
      return controlBatch(PID_RESET, { baseOffset, leaderEpoch: 0 });
    }
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
