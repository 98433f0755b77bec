import { describe, it } from "vitest";
import { PROPERTY_TIMEOUT_MS, runTopologyProperty } from "./harness";
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
});
