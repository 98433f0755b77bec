import { describe, it } from "vitest";
import {
  PROPERTY_TIMEOUT_MS,
  reachesAbortAfterBarrier,
  reachesSteps,
  reachesUnmirroredFailover,
  runRegressions,
  runTopologyProperty,
  type TopologyProperty,
} from "./harness";
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
          "writePromoted",
          "failStopped",
          "loopAdd",
          "loopRace",
          "concurrent",
          "promoteRace",
          "crash",
          "crashSoon",
          "slowDisk",
          "fastDisk",
          "diskFull",
          "restart",
          "restartNode",
          "bounceLeader",
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
  it(
    "regressions: the shrunk counterexamples of issue 11's data-loss bugs, each failing with its fix reverted",
    async () => {
      const p: TopologyProperty = {
        name: "transitions",
        file: "test/properties/transitions.test.ts",
        topology: activePassive,
        commands: [],
        numRuns: 1,
        maxCommands: 0,
      };
      await runRegressions(p, [
        {
          // a's abort of a transaction on orders-1 met a full disk, then (at its retry) a read-only partition:
          // a's loop-race re-add of orders, so the ABORT marker was held. The re-add failed on the loop and
          // was removed while FAILED; its STOPPING left the transaction to the held marker, which only the
          // next housekeeping pass wrote, 3.8 s after STOPPED: the new primary's LSO held meanwhile. Held
          // markers are now written as their partition's read-only flag clears.
          bug: "soak transitions FC_SEED=488: a held ABORT marker written only by the housekeeping pass after STOPPED",
          simSeed: 1,
          steps: [
            "readd(71,1)",
            "txnBegin(348,537)",
            "controllerFailover(269,10454,858)",
            "diskFull(882,724,79,3061)",
            "loopRace(286,1,0,3)",
            "loopAdd(943)",
            "concurrent(31,554,638,957)",
            "healLink(723)",
            "promoteRace(798,90,397)",
            "promoteRace(652,904,447)",
          ],
          reaches: reachesSteps(
            "no abort met a's full disk before a loop race that was removed while FAILED",
            /txn abort on a\/orders: ok/,
            /loop race orders: b-from-a 1:FAILED/,
            /unplanned failover a-from-b orders: STOPPED/,
          ),
        },
        {
          bug: "issue 11 item 2: a diverging-epoch answer (-1, -1) after the source's unclean election truncated records the source still has",
          simSeed: 0,
          steps: ["produce(0,0,1)", "advance(24921)", "unclean(0)"],
        },
        {
          bug: "issue 11 item 3: a FAILED retry after a short controller outage truncated the whole copy",
          simSeed: 0,
          steps: ["produce(0,0,1)", "controllerFailover(7,442,0)"],
        },
        {
          bug: "issue 11 item 4: a planned failover right after a send lost it (stale source HW in the catch-up barrier)",
          simSeed: 0,
          steps: ["produce(0,0,1)", "failover(0,0)", "restart(0)"],
        },
        {
          bug: "issue 11 item 5: a mirror loop was accepted at add time",
          simSeed: 0,
          steps: ["loopAdd(0)"],
        },
        {
          bug: "issue 11 item 5b: a loop formed from both sides at once (re-add and failback), refused in PREPARING, then removed while FAILED, got a PID reset in logs that never held mirrored data (docs/testing/seeded-bugs/props-5b-failed-removal-writes-markers.bug.patch)",
          simSeed: 0,
          steps: ["failover(0,0)", "loopRace(0,0,0,3)"],
          // The bug needs both adds accepted, the loop refused in PREPARING, and a removal while FAILED.
          reaches: (sim) =>
            sim.steps.some((s) => s.includes("loop race orders: b-from-a 0:FAILED")) &&
            sim.steps.some((s) => s.includes("unplanned failover b-from-a orders: STOPPED"))
              ? undefined
              : "no removal of a partition FAILED by the loop",
        },
        {
          bug: "issue 11 item 8: a re-add after failover silently truncated the records written since",
          simSeed: 0,
          steps: ["produce(0,0,1)", "failover(0,1)", "readd(0,0)"],
        },
        {
          bug: "seeded: the follower append fast path kept a stale last control type, so endsWithPidReset() answered wrongly (bugs/props-2-pid-reset-fast-path.bug.patch)",
          simSeed: 0,
          steps: ["failover(0,2)", "readd(0,0)"],
        },
        {
          bug: "soak FC_SEED=71 x15: a failback refused by a mirror loop, removed while FAILED (no PID reset: its log held no mirrored data), then written to in a committed transaction, was re-added without --truncate-local-writes and the transaction truncated silently",
          simSeed: 898767,
          steps: [
            "loopRace(339,0,0,1)",
            "controllerFailover(954,7889,529)",
            "txnBegin(604,277)",
            "restartBrokers(792)",
            "controllerFailover(700,8493,859)",
            "electPreferred(185)",
            "txnCommit",
            "concurrent(193,237,486,38)",
            "slowDisk(388,550,979)",
            "txnCommit",
          ],
          reaches: reachesSteps(
            "no re-add of a's profiles after a committed transaction there",
            "unplanned failover a-from-b profiles: STOPPED",
            "txn commit on a/profiles: ok",
            "concurrent: readd a-from-b profiles",
          ),
        },
        {
          bug: "issue 11 item 11: after a node restart in STOPPING a repeated remove was refused",
          simSeed: 0,
          steps: ["failover(0,3)", "restartBrokers(1)"],
        },
        {
          bug: "found by loopRace: a broker crash unloaded a coordinator while removeTopics drove its partitions, and the remove answered NOT_COORDINATOR after it had moved mirror.name to .removed (a refused call that changed state)",
          simSeed: 0,
          steps: ["crashSoon(0,0,251,50)", "loopRace(0,1,0,3)", "restart(0)"],
        },
        {
          bug: "issue 11 item 6 (residual): a node restart with the corrupt last ISR member started first lost the committed batch on every replica",
          simSeed: 2,
          steps: ["addPartition", "produce(970,420,1)", "corrupt(256,718,235)"],
          reaches: (sim) =>
            sim.steps.some((s) => s.includes("then restart every broker"))
              ? undefined
              : "the corrupt step found nothing to corrupt",
        },
        {
          bug: "soak FC_SEED=12 (active-passive): a corrupt last ISR member that had once left and rejoined the ISR led after a node restart and lost the committed batch (replaying that rejoin cleared the loss its recovery found)",
          simSeed: 0,
          steps: ["advance(14810)", "failover(0,0)", "corrupt(87,0,94)", "addPartition(0)"],
          reaches: (sim) =>
            sim.steps.some((s) => s.includes("corrupt b orders-0 on broker 2"))
              ? undefined
              : "the corrupt step did not hit b's orders-0 on broker 2",
        },
        {
          bug: "soak FC_SEED=1 (active-passive): a failback onto a cluster with a partition its source never had left that partition FAILED for good (now refused, INVALID_PARTITIONS)",
          simSeed: 0,
          steps: ["addPartition(0)", "loopRace(0,0,0,0)"],
          reaches: (sim) =>
            sim.steps.some((s) => s.includes("INVALID_PARTITIONS"))
              ? undefined
              : "the failback onto the wider topic was not refused",
        },
        {
          bug: "soak FC_SEED=13: a byte flipped on a source replica changed the destination's copy too (the simulated clusters shared stored bytes; a network copies them)",
          simSeed: 0,
          steps: ["produce(0,0,1)", "advance(461)", "corrupt(0,0,0)", "txnBegin(0,0)"],
          reaches: (sim) =>
            sim.steps.some((s) => s.includes("corrupt a orders-0 on broker 1"))
              ? undefined
              : "the corrupt step did not hit a's orders-0 on broker 1",
        },
        {
          bug: "soak FC_SEED=44: a failback's truncation, waiting for the source's log start, ran after a removal had overtaken it and cut away the PID reset barrier STOPPING had written (any write after STOPPED too)",
          simSeed: 0,
          steps: ["loopRace(0,0,0,0)", "failover(159,3)", "txnCommit"],
          reaches: (sim) =>
            sim.steps.some((s) => s.includes("unplanned failover a-from-b orders: removeTopics returned"))
              ? undefined
              : "the failback was not removed while it was being prepared",
        },
        {
          bug: "soak FC_SEED=45: a re-add after a failover, refused as a loop and removed while FAILED, got a PID reset once its coordinator restarted in STOPPING (the record carried the first episode's batch epoch, which recovery read as mirrored data)",
          simSeed: 0,
          steps: [
            "txnBegin(303,0)",
            "bounceLeader(63,0)",
            "loopRace(561,0,1,1)",
            "restartBrokers(45)",
            "crashSoon(0,0,0,50)",
          ],
          reaches: (sim) =>
            sim.steps.some((s) => s.includes("b-from-a 0:FAILED")) &&
            sim.steps.some((s) => s.includes("partition(s) were STOPPING"))
              ? undefined
              : "no restart of b while its FAILED-then-removed partition was STOPPING",
        },
        {
          bug: "soak FC_SEED=234 (a simulator bug): a failback refused in PREPARING (UNSAFE_TRUNCATION) was FAILED when the loop race removed it, while the operator had seen it PREPARING; the simulator expected a PID reset in a log that never held mirrored data",
          simSeed: 0,
          steps: [
            "slowDisk(0,0,10)",
            "loopRace(0,0,0,0)",
            "cutLink(15)",
            "txnBegin(0,0)",
            "loopRace(189,0,0,0)",
            "restartBrokers(0)",
          ],
          reaches: reachesUnmirroredFailover("a", "a-from-b", "orders", 0),
        },
        {
          bug: "soak FC_SEED=9 x100 (a simulator bug): a bounce of the broker coordinating orders-0 left no live view of it while its committed record said STOPPED; the failover check waited for a view, a produce landed first, and the check then took that record for the log end (no PID reset barrier)",
          simSeed: 0,
          steps: ["concurrent(0,0,0,0)", "bounceLeader(135,179)", "produce(944,0,1)"],
          reaches: reachesSteps(
            "no produce to b's orders-0 after a bounce of a b broker",
            "bounce b broker",
            "produce 1 to b/orders-0: ok",
          ),
        },
        {
          bug: "soak FC_SEED=398 (a simulator bug): a transaction begun on b's profiles while it was STOPPING (its produce refused, the partition added) was aborted by b's coordinator at its timeout after STOPPED; the failover check, run only at the end of the settling (stretched past that timeout by a's abandoned transaction), read that ABORT as the log end",
          simSeed: 0,
          steps: [
            "slowDisk(51,66,1316)",
            "concurrent(300,741,545,76)",
            "txnBegin(283,764)",
            "txnBegin(825,378)",
            "restartNode(228)",
          ],
          reaches: (sim) =>
            reachesSteps(
              "no transaction begun on b's profiles while it failed over, then a's abandoned",
              "concurrent: remove b-from-a profiles -> ok",
              "txn begin on b/profiles: READ_ONLY_TOPIC",
              "(its open transaction abandoned)",
            )(sim) ?? reachesAbortAfterBarrier("b", "profiles", 0)(sim),
        },
        {
          // b's orders-0 failed over (STOPPED, a barrier at 0), local producers wrote, then a late fetch error
          // failed it again: FAILED's retry ran STOPPING (previous state FAILED), and a broker crash moved
          // __mirror_state's leadership meanwhile. The new coordinator recovered that STOPPING from its records
          // alone, which keep the episode's leaderEpoch (0): it took the log for mirrored data, aborted every
          // open transaction and wrote a second MIRROR_PID_RESET over the local producers' data. A recovered
          // coordinator now reads the log: data above the recorded LME is the topic's own (as the live one,
          // whose STOPPED closed the mirrored data, it writes no marker and no reset).
          bug: "soak transitions FC_SEED=665: a failover retried after STOPPED, resumed by a new coordinator, wrote a MIRROR_PID_RESET over the local producers' data",
          simSeed: 14,
          steps: [
            "crashSoon(133,958,236,3546)",
            "corrupt(167,895,483)",
            "txnBegin(261,617)",
            "fastDisk(800)",
            "failStopped(512,3)",
            "loopAdd(663)",
            "produce(356,46,1)",
            "restartNode(255)",
          ],
          reaches: (sim) =>
            reachesSteps(
              "no STOPPED partition failed again after local writes while a b broker crashed",
              "crash b broker",
              "fail b-from-a orders-0 (STOPPED, writable) with a late fetch error: STOPPED and writable again",
              /local produce to b\/orders-0: ok/,
            )(sim) ??
            (sim.stats.stoppedFailedAgain > 0
              ? undefined
              : "no local data above the barrier before the failure"),
        },
        ...[
          [
            "a pause of the same topic",
            1,
            /concurrent: promote b-from-a orders -> REQUEST_TIMED_OUT.*lag 3 \(PAUSED\).* \| pause b-from-a orders -> ok/,
          ],
          [
            "a remove of the same topic",
            0,
            /concurrent: promote b-from-a orders -> INVALID_MIRROR_STATE.*failed over by another command.* \| remove b-from-a orders -> ok/,
          ],
          [
            "a write to the copy",
            4,
            /concurrent: promote b-from-a orders -> ok \| write b-from-a orders -> READ_ONLY_TOPIC/,
          ],
        ].map(([what, kind, step]) => ({
          bug: `coverage: a promote racing ${what} (commands on one mirror queue; the promote's catch-up is kept once it returns)`,
          simSeed: 0,
          steps: ["produce(0,0,3)", `promoteRace(0,${kind},0)`, "produce(0,0,1)"],
          reaches: reachesSteps(`no promote racing ${what}`, step as RegExp),
        })),
      ]);
    },
    PROPERTY_TIMEOUT_MS,
  );
});
