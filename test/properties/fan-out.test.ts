import { describe, it } from "vitest";
import { PROPERTY_TIMEOUT_MS, runRegressions, runTopologyProperty } from "./harness";
import { fanOut } from "./sim";

describe("property: fan-out A -> B, A -> C", () => {
  it(
    "gives each destination an identical copy with its own failover",
    async () => {
      await runTopologyProperty({
        name: "fan-out",
        file: "test/properties/fan-out.test.ts",
        topology: fanOut,
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
        numRuns: 15,
        maxCommands: 10,
      });
    },
    PROPERTY_TIMEOUT_MS,
  );
  it(
    "regression: a copy downstream of a failback follows its source's truncation (FC_SEED=21 soak)",
    async () => {
      // a fails back onto b's copy (truncating what b never had); c mirrors a, so c's committed batch at 0
      // goes too. The model allowed the truncation on a only and reported c's as a loss.
      await runRegressions(
        {
          name: "fan-out",
          file: "test/properties/fan-out.test.ts",
          topology: fanOut,
          commands: [],
          numRuns: 1,
          maxCommands: 0,
        },
        [
          {
            bug: "the committed-prefix model allowed a failback's truncation on the failed-back cluster only, not on its mirrors",
            simSeed: 0,
            steps: ["produce(0,0,1)", "failover(0,3)", "advance(361)", "failback(0)"],
            reaches: (sim) =>
              sim.steps.some(
                (s) => s.startsWith("t+") && s.includes("failback a-from-b orders (may truncate"),
              )
                ? undefined
                : "no failback of a onto b",
          },
        ],
      );
    },
    PROPERTY_TIMEOUT_MS,
  );
});
