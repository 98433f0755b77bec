import fc from "fast-check";
import { describe, it } from "vitest";
import { runTopologyProperty } from "./harness";
import { chain } from "./sim";

describe("property: chains c0 -> c1 -> ... (length 2 to 5)", () => {
  for (const length of [2, 3, 5]) {
    it(`chain of ${length}: every hop is an identical copy and a failover anywhere writes its barrier there`, async () => {
      await runTopologyProperty({
        name: `chain-${length}`,
        file: "test/properties/chain.test.ts",
        topology: () => chain(length),
        commands: [
          "produce",
          "txnBegin",
          "txnCommit",
          "txnAbort",
          "groupCommit",
          "pause",
          "resume",
          "failover",
          "failback",
          "crash",
          "restart",
          "cutLink",
          "healLink",
          "advance",
        ],
        numRuns: length === 5 ? 6 : 10,
        maxCommands: 10,
      });
    });
  }
  it("chain builder rejects a chain of one", () => {
    fc.assert(
      fc.property(fc.integer({ min: -3, max: 1 }), (n) => {
        try {
          chain(n);
          return false;
        } catch (error) {
          return error instanceof RangeError;
        }
      }),
    );
  });
});
