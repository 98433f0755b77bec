import { describe, it } from "vitest";
import { PROPERTY_TIMEOUT_MS, runTopologyProperty } from "./harness";
import { activePassive } from "./sim";

describe("property: faults inside transitions (A -> B)", () => {
  it(
    "operators that do not wait, crashes and node restarts in STOPPING/PREPARING, corrupt replicas, concurrent and repeated commands lose nothing",
    async () => {
      await runTopologyProperty({
        name: "transitions",
        file: "test/properties/transitions.test.ts",
        topology: activePassive,
        commands: [
          "produce",
          "txnBegin",
          "txnCommit",
          "txnFence",
          "failover",
          "failback",
          "readd",
          "loopAdd",
          "concurrent",
          "crash",
          "crashSoon",
          "restart",
          "restartNode",
          "corrupt",
          "moveStateLeader",
          "electPreferred",
          "controllerFailover",
          "cutLink",
          "healLink",
          "advance",
        ],
        numRuns: 30,
        maxCommands: 12,
      });
    },
    PROPERTY_TIMEOUT_MS,
  );
});
