import type { FailoverPreviewRow } from "@cluster-mirror/mirror";
import { describe, expect, it } from "vitest";
import { formatPreviewJson, formatPreviewTable } from "../src/commands/mirror-tables";

/** A row as `previewFailover` gives it for a partition with no running leader on the destination. */
const leaderless: FailoverPreviewRow = {
  topic: "orders",
  partition: 0,
  state: "MIRRORING",
  sourceOffset: 5n,
  destinationOffset: null,
  lag: null,
  openTransactions: [],
  lastMirrorEpoch: -1,
  leaderEpoch: 11,
  leaderEpochAfterBump: 20,
  failbackTruncation: null,
  failbackSupported: true,
};

describe("the --failover-preview table", () => {
  it("says unknown, not 'none' or LME -1, for a partition whose destination leader is down", () => {
    const out = formatPreviewTable("dr", [leaderless]);
    expect(out).toMatch(
      /│ orders │ 0\s+│ MIRRORING │ -\s+│ unknown \(no leader\)\s+│ unknown \(no leader\)\s+│ 11 -> \?\s+│ unknown \(no leader\)\s+│/,
    );
    expect(out).not.toMatch(/│ none\s+│/);
  });

  it("shows the transactions, LME, bump and failback truncation of a partition with a leader", () => {
    const out = formatPreviewTable("dr", [
      {
        ...leaderless,
        destinationOffset: 3n,
        lag: 2n,
        openTransactions: [{ producerId: 7n, producerEpoch: 1, firstOffset: 2n }],
        lastMirrorEpoch: 0,
        failbackTruncation: { fromOffset: 3n, records: 2n },
      },
    ]);
    expect(out).toMatch(
      /│ orders │ 0\s+│ MIRRORING │ 2\s+│ 7\/1@2\s+│ 0\s+│ 11 -> 20\s+│ 2 from offset 3\s+│/,
    );
  });

  it("--json gives offsets, lags and producer ids as numbers, beyond 2^53 as decimal strings", () => {
    const [row] = JSON.parse(
      formatPreviewJson([
        {
          ...leaderless,
          destinationOffset: 3n,
          lag: 2n,
          openTransactions: [{ producerId: 2n ** 60n, producerEpoch: 1, firstOffset: 2n }],
          failbackTruncation: { fromOffset: 3n, records: 2n },
        },
        leaderless,
      ]),
    ) as unknown[];
    expect(row).toEqual({
      topic: "orders",
      partition: 0,
      state: "MIRRORING",
      sourceOffset: 5,
      destinationOffset: 3,
      lag: 2,
      openTransactions: [{ producerId: "1152921504606846976", producerEpoch: 1, firstOffset: 2 }],
      lastMirrorEpoch: -1,
      leaderEpoch: 11,
      leaderEpochAfterBump: 20,
      failbackTruncation: { fromOffset: 3, records: 2 },
      failbackSupported: true,
    });
  });
});
