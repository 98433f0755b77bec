import { describe, it } from "vitest";
import { PROPERTY_TIMEOUT_MS, runTopologyProperty } from "./harness";
import { activePassive } from "./sim";

describe("property: active-passive A -> B", () => {
  it(
    "mirrors offset for offset and fails over cleanly under crashes, cut links and operator actions",
    async () => {
      await runTopologyProperty({
        name: "active-passive",
        file: "test/properties/active-passive.test.ts",
        topology: activePassive,
        commands: [
          "produce",
          "txnBegin",
          "txnCommit",
          "txnAbort",
          "groupCommit",
          "activeGroup",
          "addTopic",
          "pause",
          "resume",
          "failover",
          "crash",
          "restart",
          "crashOnCommit",
          "crashOnCommit",
          "cutLink",
          "healLink",
          "advance",
          "config",
          "addPartition",
          "slowDisk",
          "fastDisk",
          "controllerFailover",
          "readd",
          "writePromoted",
          "loopAdd",
          "loopRace",
          "concurrent",
          "restartNode",
          "bounceLeader",
          "corrupt",
          "txnFence",
        ],
        numRuns: 25,
        maxCommands: 12,
      });
    },
    PROPERTY_TIMEOUT_MS,
  );
});
