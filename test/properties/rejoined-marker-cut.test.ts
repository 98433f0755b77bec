import { describe, it } from "vitest";
import { PROPERTY_TIMEOUT_MS, reachesSteps, runRegressions, type TopologyProperty } from "./harness";
import { activePassive } from "./sim";

describe("property regression: a failback's cut of a commit marker (A <-> B)", () => {
  it(
    "a commit whose marker (not its data) a failback truncated is excused once the topic is failed over again",
    async () => {
      const p: TopologyProperty = {
        name: "failback",
        file: "test/properties/rejoined-marker-cut.test.ts",
        topology: activePassive,
        commands: [],
        numRuns: 1,
        maxCommands: 0,
      };
      await runRegressions(p, [
        {
          bug: "review 3 (a simulator bug): mayBeReplaced excused a rejoined commit only for a cut at or below its data batch; b's unplanned failover had copied a's transaction data but not its COMMIT marker and aborted it, a's failback cut between the data and the marker (at the LME), and once a's copy was failed over again the lost commit was reported as aborted",
          simSeed: 0,
          steps: [
            "failover(0,0)",
            "failback(0)",
            "txnBegin(0,0)",
            "advance(2000)",
            "cutLink(1)",
            "txnCommit",
            "failover(0,1)",
            "healLink(1)",
            "failback(1)",
            "advance(5000)",
            "failover(1,0)",
            "advance(5000)",
          ],
          reaches: reachesSteps(
            "no failback of a profiles cutting above its transaction's data, then no failover of it",
            "txn commit on a/profiles: ok",
            "unplanned failover b-from-a profiles: STOPPED",
            "failback a-from-b profiles (may truncate from 0@1)",
            "failover a-from-b profiles: STOPPED",
          ),
        },
      ]);
    },
    PROPERTY_TIMEOUT_MS,
  );
});
