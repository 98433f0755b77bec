import fc from "fast-check";
import { describe, it } from "vitest";
import {
  type CommandName,
  PROPERTY_TIMEOUT_MS,
  reachesSteps,
  runRegressions,
  runTopologyProperty,
  type TopologyProperty,
} from "./harness";
import { chain } from "./sim";

describe("property: chains c0 -> c1 -> ... (length 2 to 5)", () => {
  const commands: CommandName[] = [
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
    "slowReplication",
    "crashAfterAck",
    "restart",
    "cutLink",
    "healLink",
    "advance",
    "deleteRecords",
  ];
  const property = (length: number): TopologyProperty => ({
    name: `chain-${length}`,
    file: "test/properties/chain.test.ts",
    topology: () => chain(length),
    commands,
    numRuns: length === 5 ? 6 : 10,
    maxCommands: 10,
  });
  for (const length of [2, 3, 5]) {
    it(
      `chain of ${length}: every hop is an identical copy and a failover anywhere writes its barrier there`,
      async () => {
        await runTopologyProperty(property(length));
      },
      PROPERTY_TIMEOUT_MS,
    );
  }
  it(
    "regressions: counterexamples the suite found, fixed in the engine",
    async () => {
      await runRegressions(property(2), [
        {
          bug: "a pause refused while a commit was pending, then a cut link: the failover hung ([pause, cutLink, failover])",
          simSeed: 0,
          steps: ["pause(0)", "cutLink(0)", "failover(0)"],
        },
        {
          bug: "describe showed lag 0 from the fetcher's last view while the source was cut off: a planned failover lost the write acknowledged since (FC_SEED=18 soak)",
          simSeed: 0,
          steps: ["cutLink(0)", "produce(0,0,1)", "failover(0,0)", "groupCommit(0,0,0)"],
          reaches: (sim) =>
            sim.steps.some((s) => s.includes("cut link")) &&
            sim.steps.some((s) => s.includes("failover c1-from-c0"))
              ? undefined
              : "no failover with the link cut",
        },
      ]);
      await runRegressions(property(3), [
        {
          bug: "no fetcher on the new leader after the destination leader moved ([crash, failover])",
          simSeed: 0,
          steps: ["crash(401,838)", "failover(0)"],
        },
        {
          bug: "a simulator bug (recreated-source chain, FC_SEED=12 x15): c1 failed over, c2 copied its barrier, then c1 was re-added from c0 and truncated to 0; c2 rightly kept its committed batch until c1 wrote again, which never happened (not settled), and once c1 did, c2 counted as caught up before it truncated (its epoch, above c1's latest, was not checked)",
          simSeed: 662096,
          steps: [
            "pause(345)",
            "txnCommit",
            "produce(946,489,2)",
            "failover(640,2)",
            "advance(8552)",
            "healLink(635)",
            "advance(10380)",
            "readd(942,0)",
            "produce(105,376,2)",
            "healLink(0)",
          ],
          reaches: reachesSteps(
            "c2 was never ahead of c1 after c1's re-add",
            "re-add c1-from-c0 orders",
            "settle: ahead of its cut source: c2-from-c1 orders-0",
          ),
        },
        {
          bug: "a simulator bug (recreated-source chain, FC_SEED=53 x15): as above, but c1 was paused after its re-add, so nothing could write to it before the settling resumed it: c2 waited ahead of it, and the settling wrote upstream only after the resume",
          simSeed: 32060,
          steps: [
            "failover(296,3)",
            "advance(11493)",
            "recreateTopic(233,1,1)",
            "readd(894,1)",
            "addTopic(173,85)",
            "pause(800)",
            "crash(274,348)",
            "txnAbort",
            "addTopic(996,733)",
            "advance(500)",
            "pause(848)",
          ],
          reaches: reachesSteps(
            "c2 was never ahead of a paused c1",
            "re-add --truncate-local-writes c1-from-c0 orders",
            "pause c1-from-c0 orders",
            "settled: resume c1-from-c0 orders",
            "settle: ahead of its cut source: c2-from-c1 orders-0",
          ),
        },
      ]);
      await runRegressions(property(3), [
        {
          bug: "soak FC_SEED=214 x20 run 30 (a simulator bug): c2 failed over from c1 before c0's write reached it, then c1 from c0 (planned), then c1 failed back onto c2 and took c2's log from offset 0; the planned failover's promise (c0's write on c1) was still checked on c1",
          simSeed: 20747,
          steps: [
            "produce(166,632,3)",
            "failback(629)",
            "restart(728)",
            "resume(221)",
            "failover(446,3)",
            "resume(428)",
            "advance(38296)",
            "failover(288,2)",
            "healLink(903)",
            "failback(593)",
          ],
          reaches: reachesSteps(
            "no failback of c1 onto c2 that may truncate c1 from offset 0",
            "planned failover c1-from-c0 orders",
            "failback c1-from-c2 orders (may truncate from 0@0",
          ),
        },
      ]);
      await runRegressions(property(3), [
        {
          bug: "soak FC_SEED=355 x10 run 39: c2 failed profiles over (STOPPED); its state partition's leader crashed with profiles-0's, and the coordinator that loaded the STOPPED partition again cleared its read-only flag through the partition's leader, which had none yet: the STOPPED topic went FAILED (applications writing to it) instead of clearing the flag in the metadata",
          simSeed: 692697,
          steps: [
            "groupCommit(93,8,173)",
            "failover(139,0)",
            "advance(38432)",
            "crash(417,244)",
            "crashAfterAck(2,422,1503,161,10)",
            "pause(67)",
            "healLink(297)",
            "pause(755)",
          ],
          reaches: reachesSteps(
            "no crash of c2's profiles-0 leader after its failover",
            "planned failover c2-from-c1 profiles: STOPPED",
            "crash c2 broker 1 (leader of profiles-0)",
          ),
        },
      ]);
      await runRegressions(property(3), [
        {
          bug: "soak FC_SEED=357 x10 run 63 (a simulator bug): c1 failed over from c0 (planned) with c0's acknowledged write, c0 failed back from c1, then c1 failed back onto c2 with --truncate-local-writes and took c2's log from offset 0 (c2 had failed over before the write); c0, following c1, was still checked for the planned failover's promise",
          simSeed: 973441,
          steps: [
            "failback(317)",
            "failover(182,1)",
            "crashAfterAck(936,969,518,4673,8)",
            "produce(352,546,2)",
            "txnAbort",
            "slowReplication(820,0)",
            "failback(596)",
            "failback(30)",
            "pause(303)",
            "txnBegin(144,413)",
          ],
          reaches: reachesSteps(
            "no failback of c1 onto c2 that may truncate c1 from offset 0 after c0 failed back from c1",
            "planned failover c1-from-c0 orders: STOPPED",
            "failback c0-from-c1 orders",
            "failback --truncate-local-writes c1-from-c2 orders (may truncate from 0@0,1@0)",
          ),
        },
      ]);
      await runRegressions(property(5), [
        {
          bug: "soak FC_SEED=11 x100 (a simulator bug): c2 failed over from c1, then c1 from c0, then c1 failed back from c2 with --truncate-local-writes and took c2's log from offset 0; the offset identity of the old hop c0->c1 was still checked up to c1's failover point",
          simSeed: 0,
          steps: ["failover(362,0)", "txnBegin(0,0)", "failover(0,0)", "failback(583)", "cutLink(0)"],
          reaches: reachesSteps(
            "no failback of c1 from c2 that truncated c1",
            "failback --truncate-local-writes c1-from-c2 orders (may truncate",
          ),
        },
      ]);
    },
    PROPERTY_TIMEOUT_MS,
  );
  it("chain builder rejects a chain of one", () => {
    fc.assert(
      fc.property(fc.integer({ min: -3, max: 1 }), (n) => {
        try {
          chain(n);
          return false;
        } catch (error) {
          return error instanceof RangeError;
        }
      }),
    );
  });
});
