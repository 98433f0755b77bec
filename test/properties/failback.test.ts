import { describe, it } from "vitest";
import { PROPERTY_TIMEOUT_MS, runRegressions, runTopologyProperty, type TopologyProperty } from "./harness";
import { activePassive, type FailoverRecord, failoverAlignment, type Simulation } from "./sim";

/** Whether the failover `f` started on a log aligned with its source (from the `__mirror_state` history). */
function alignedAt(sim: Simulation, f: FailoverRecord): boolean {
  const cluster = sim.node(f.node).cluster;
  const topicId = cluster.controller.image.topic(f.topic)?.topicId ?? "";
  return failoverAlignment(cluster, { mirror: f.mirror, topicId, partition: f.partition })?.aligned ?? true;
}

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
      "cycle",
      "failover",
      "cycle",
      "cycle",
      "crash",
      "restart",
      "advance",
      "slowDisk",
      "fastDisk",
      "readd",
      "writePromoted",
      "concurrent",
      "restartNode",
      "crashSoon",
      "crashOnCommit",
      "crashOnCommit",
      "crashOnCommit",
      "crashOnCommit",
      "controllerFailover",
    ],
    numRuns: 25,
    maxCommands: 12,
  };
  it(
    "keeps acknowledged writes and log matching across cycles",
    async () => {
      await runTopologyProperty(property);
    },
    PROPERTY_TIMEOUT_MS,
  );
  it(
    "regressions: counterexamples the suite found, fixed in the engine",
    async () => {
      await runRegressions(property, [
        {
          bug: "a remove refused while a commit was pending still took effect later ([failover, failback, failover, failover])",
          simSeed: 0,
          steps: ["failover(0)", "failback(0)", "failover(0)", "failover(0)"],
        },
        {
          bug: "ENGINE BUG 3: a failover while PREPARING after a failback (before the truncation) captured as LME the epoch of the old primary's own batches and kept its divergent tail",
          simSeed: 0,
          steps: ["produce(0,0,2)", "failover(0,1)", "produce(0,0,1)", "failback(0)", "failover(1,1)"],
          // The bug needs a failover of the failback's PREPARING before its truncation, with local batches.
          reaches: (sim) =>
            sim.model.failovers.some(
              (f) =>
                f.node === "a" && f.stoppedFrom === "PREPARING" && f.mirroredEnd > 0n && !alignedAt(sim, f),
            )
              ? undefined
              : "no failover on a from PREPARING before the truncation, over a log of its own",
        },
        {
          bug: "a leader crash around a failback left a MIRRORING partition with no fetcher on its destination leader, so records the source acknowledged never reached the destination",
          simSeed: 442908,
          steps: ["crashSoon(0,0,181,50)", "failover(0,3)", "failback(0)"],
        },
        {
          bug: "the same, as the random runs find it (crashOnCommit): the broker coordinating and leading a partition crashed at its epoch bump after a failback",
          simSeed: 23016,
          steps: ["cycle(0)", "crashOnCommit(0,0,50)", "txnBegin(0,0)"],
          // The bug needs the crash of a broker holding both roles of a partition the failback fenced.
          reaches: (sim) =>
            sim.steps.some((s) => /crash a broker \d+ \(coordinator and leader of a-from-b/.test(s))
              ? undefined
              : "no broker coordinating and leading an a-from-b partition crashed",
        },
        {
          bug: "a failover asked while a failback was PREPARING, with the source down: PREPARING's mirror-loop check failed while the STOPPING record was appended, the failover went to FAILED and its retry wrote no barrier (found by crashOnCommit's helper run)",
          simSeed: 0,
          steps: [
            "failover(0,1)",
            "failback(0)",
            "failover(1,1)",
            "failback(1)",
            "cutLink(0)",
            "failover(0,1)",
          ],
          // The bug needs the last failover to start from PREPARING while the link to the source is cut.
          reaches: (sim) =>
            sim.steps.some((s) => /cut link a->b/.test(s)) &&
            sim.model.failovers.some((f) => f.node === "b" && f.stoppedFrom === "PREPARING")
              ? undefined
              : "no failover on b from PREPARING with the link a->b cut",
        },
        {
          bug: "a follower append that failed (the leader's batch began below the follower's log end) threw out of the broker's scheduled fetch and stopped the whole simulation, as it would end a node's process (FC_SEED=11 soak). The follower now backs off and stays out of the ISR; why it held other batches of the same epoch is open (README, not done yet)",
          simSeed: 0,
          steps: ["produce(0,0,3)", "crashSoon(471,0,331,710)", "cycle(0)", "cycle(21)"],
        },
      ]);
    },
    PROPERTY_TIMEOUT_MS,
  );
});
