import { describe, it } from "vitest";
import { runRegressions, runTopologyProperty, type TopologyProperty } from "./harness";
import { activePassive } from "./sim";

describe("property: failback A <-> B, repeated failover/failback cycles", () => {
  const property: TopologyProperty = {
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
      "slowDisk",
      "fastDisk",
    ],
    numRuns: 25,
    maxCommands: 12,
  };
  it("keeps acknowledged writes and log matching across cycles", async () => {
    await runTopologyProperty(property);
  });
  it("regressions: counterexamples the suite found, fixed in the engine", async () => {
    await runRegressions(property, [
      {
        bug: "a remove refused while a commit was pending still took effect later ([failover, failback, failover, failover])",
        seed: -923342403,
        path: "20:0:5:5:5:5:5",
        replayPath: "Z:B",
      },
      {
        bug: "a failover while PREPARING after a failback (before the truncation) captured as LME the epoch of the old primary's own batches and kept its divergent tail",
        seed: -1420860102,
        path: "58:0:4:5:7:11:8:8:9:8:10:16:16:16:17:20:18",
        replayPath: "/Z:D",
      },
    ]);
  });
});
