import { describe, it } from "vitest";
import { runTopologyProperty } from "./harness";
import { activePassive, mixed } from "./sim";

describe("property: coordinator moves and source divergence", () => {
  it("__mirror_state leadership moves (crash, preferred election) never change committed state wrongly", async () => {
    await runTopologyProperty({
      name: "state-leader-moves",
      file: "test/properties/faults.test.ts",
      topology: activePassive,
      commands: [
        "produce",
        "txnBegin",
        "txnCommit",
        "txnAbort",
        "groupCommit",
        "pause",
        "resume",
        "failover",
        "moveStateLeader",
        "electPreferred",
        "restart",
        "advance",
      ],
      numRuns: 15,
      maxCommands: 10,
    });
  });
  it("an unclean leader election on the source is followed by the mirror (divergence trimmed)", async () => {
    await runTopologyProperty({
      name: "unclean-source",
      file: "test/properties/faults.test.ts",
      topology: activePassive,
      commands: ["produce", "unclean", "advance", "failover", "restart"],
      numRuns: 10,
      maxCommands: 8,
    });
  });
  it("mixed topology (chain + fan-out + fan-in) under every fault", async () => {
    await runTopologyProperty({
      name: "mixed",
      file: "test/properties/faults.test.ts",
      topology: mixed,
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
        "moveStateLeader",
        "advance",
      ],
      numRuns: 6,
      maxCommands: 10,
    });
  });
});
