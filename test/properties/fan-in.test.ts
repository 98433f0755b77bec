import { describe, it } from "vitest";
import { PROPERTY_TIMEOUT_MS, runTopologyProperty } from "./harness";
import { fanIn } from "./sim";

describe("property: fan-in A -> C, B -> C (different topics)", () => {
  it(
    "mirrors both sources independently",
    async () => {
      await runTopologyProperty({
        name: "fan-in",
        file: "test/properties/fan-in.test.ts",
        topology: fanIn,
        commands: [
          "produce",
          "txnBegin",
          "txnCommit",
          "txnAbort",
          "groupCommit",
          "addTopic",
          "pause",
          "resume",
          "failover",
          "crash",
          "crashAfterAck",
          "restart",
          "cutLink",
          "healLink",
          "advance",
          "config",
        ],
        numRuns: 15,
        maxCommands: 10,
      });
    },
    PROPERTY_TIMEOUT_MS,
  );
});
