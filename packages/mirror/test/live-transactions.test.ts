import type { TransactionMetadata } from "@cluster-mirror/cluster";
import { describe, expect, it } from "vitest";
import { isLive, liveTransactionsOn } from "../src/destination/live-transactions";

const orders = { topic: "orders", partition: 0 };
const audit = { topic: "audit", partition: 0 };

function txn(over: Partial<TransactionMetadata>): TransactionMetadata {
  return {
    transactionalId: "t",
    producerId: 5n,
    producerEpoch: 1,
    state: "Empty",
    transactionTimeoutMs: 60_000,
    txnStartTimestamp: -1,
    partitions: [],
    pendingMarkers: [],
    ...over,
  };
}

describe("liveTransactionsOn: the transactions a coordinator will still end on a partition", () => {
  it.each([
    ["Ongoing with it", txn({ state: "Ongoing", partitions: [orders] }), true],
    ["Ongoing elsewhere", txn({ state: "Ongoing", partitions: [audit] }), false],
    [
      "PrepareCommit, its marker pending",
      txn({ state: "PrepareCommit", partitions: [orders, audit], pendingMarkers: [orders] }),
      true,
    ],
    [
      // Counted as written (skipped on a read-only mirror partition, or lost with its leader): the
      // transaction may still be open there, and its last end will name the partition.
      "PrepareAbort, its marker counted as written, another pending",
      txn({ state: "PrepareAbort", partitions: [orders, audit], pendingMarkers: [audit] }),
      true,
    ],
    [
      "PrepareCommit elsewhere",
      txn({ state: "PrepareCommit", partitions: [audit], pendingMarkers: [audit] }),
      false,
    ],
    [
      "CompleteAbort whose last end named it (the housekeeping writes the marker again)",
      txn({
        state: "CompleteAbort",
        lastEnd: { result: "ABORT", producerId: 5n, producerEpoch: 2, partitions: [orders] },
      }),
      true,
    ],
    [
      "CompleteCommit whose last end was elsewhere",
      txn({
        state: "CompleteCommit",
        lastEnd: { result: "COMMIT", producerId: 5n, producerEpoch: 2, partitions: [audit] },
      }),
      false,
    ],
    ["Empty", txn({ state: "Empty" }), false],
  ] as const)("%s: %s", (_, t, live) => {
    expect(liveTransactionsOn([t], orders).length > 0).toBe(live);
  });

  it("names the epoch the marker is written at (a last end's, after a fencing bump)", () => {
    const t = txn({
      producerEpoch: 4,
      state: "CompleteAbort",
      lastEnd: { result: "ABORT", producerId: 5n, producerEpoch: 3, partitions: [orders] },
    });
    expect(liveTransactionsOn([t], orders)).toEqual([{ producerId: 5n, producerEpoch: 3 }]);
  });

  it("isLive: the producer at that epoch or a later one", () => {
    const live = [{ producerId: 5n, producerEpoch: 3 }];
    expect(isLive(live, { producerId: 5n, producerEpoch: 3 })).toBe(true);
    expect(isLive(live, { producerId: 5n, producerEpoch: 2 })).toBe(true);
    expect(isLive(live, { producerId: 5n, producerEpoch: 4 })).toBe(false);
    expect(isLive(live, { producerId: 6n, producerEpoch: 3 })).toBe(false);
  });
});
