import { describe, it } from "vitest";
import { runTopologyProperty } from "./harness";
import { activePassive } from "./sim";

describe("property: failback A <-> B, repeated failover/failback cycles", () => {
  it("keeps acknowledged writes and log matching across cycles", async () => {
    await runTopologyProperty({
      name: "failback",
      file: "test/properties/failback.test.ts",
      topology: activePassive,
      commands: [
        "produce",
        "txnBegin",
        "txnCommit",
        "txnAbort",
        "groupCommit",
        "failover",
        "failback",
        "failover",
        "failback",
        "crash",
        "restart",
        "advance",
      ],
      numRuns: 25,
      maxCommands: 12,
    });
  });
});
