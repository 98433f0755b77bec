import { describe, it } from "vitest";
import {
  latestFailover,
  PROPERTY_TIMEOUT_MS,
  reachesSteps,
  runRegressions,
  runTopologyProperty,
  type TopologyProperty,
} from "./harness";
import { activePassive } from "./sim";

describe("property: re-adding a failed-over topic (A -> B)", () => {
  it(
    "never drops what the promoted side acknowledged unless the operator asks for it (--truncate-local-writes)",
    async () => {
      await runTopologyProperty({
        name: "readd",
        file: "test/properties/readd.test.ts",
        topology: activePassive,
        // Re-add is the command under test (weight 3), after failovers (weight 2, some modes write once to
        // the promoted side), beside what makes local writes and the faults that interrupt it.
        commands: [
          "produce",
          "failover",
          "failover",
          "writePromoted",
          "writePromoted",
          "readd",
          "readd",
          "readd",
          "advance",
          "advance",
          "crash",
          "crashOnReAdd",
          "readdRemoveRace",
          "slowReplication",
        ],
        numRuns: 30,
        maxCommands: 16,
      });
    },
    PROPERTY_TIMEOUT_MS,
  );
  it(
    "a re-add's cut interrupted (a full disk and its leader's death, every broker restarted before the reports land) is made once by every replica",
    async () => {
      await runTopologyProperty({
        name: "readd-cut-fault",
        file: "test/properties/readd.test.ts",
        topology: activePassive,
        // Local writes on the promoted side, then a re-add that may cut them, with a fault armed to land
        // inside that cut (`cutFault`), and time for the mirror to copy past the cut before the fault's
        // crash or kill.
        commands: [
          "produce",
          "failover",
          "writePromoted",
          "readd",
          "readdCutFault",
          "readdCutFault",
          "readdCutFault",
          "cutFault",
          "advance",
          "advance",
        ],
        numRuns: 20,
        maxCommands: 14,
      });
    },
    PROPERTY_TIMEOUT_MS,
  );
  it(
    "regressions: a re-add whose source knows no LME truncated the mirrored prefix fully; a barrier lost with its leader; a reload cleared a re-add's read-only flag; a failover refused after its mirror.name",
    async () => {
      const p: TopologyProperty = {
        name: "readd",
        file: "test/properties/readd.test.ts",
        topology: activePassive,
        commands: [],
        numRuns: 1,
        maxCommands: 0,
      };
      await runRegressions(p, [
        {
          bug: "readd-cut-fault FC_SEED=2 (a simulator bug): a re-add's full cut at 0 (made by its leader's successor: the leader's disk was full) removed the earlier failover's barrier; the re-add, removed again from PREPARING over a log with no mirrored data, rightly wrote none, and the next local write at 0 was compared with the barrier that was gone",
          simSeed: 0,
          steps: [
            "produce(0,0,1)",
            "advance(500)",
            "failover(0,1)",
            "writePromoted(0,0,1)",
            "produce(0,0,1)",
            "cutFault(0,0,381,50)",
            "readd(0,1)",
            "produce(0,0,1)",
            "advance(500)",
            "failover(0,1)",
          ],
          reaches: reachesSteps(
            "the re-add's cut did not fail on the leader's full disk before the failover",
            /b orders-1 \(cut at 0, full, leader \d\): the leader's disk is full as it cuts/,
            "unplanned failover b-from-a orders: STOPPED",
          ),
        },
        {
          bug: "a re-add (--truncate-local-writes) after a planned failover restarted b's log at 0 and copied the mirrored records again, though they were a's own: the source never failed over, so it answered LME -1 (FC_SEED=1)",
          simSeed: 0,
          steps: ["produce(0,0,1)", "failover(0,0)", "readd(0,1)"],
        },
        {
          bug: "a failover of an empty partition (LME -1) resumed after a crash captured the epoch of its own barrier as the LME and wrote a second barrier (FC_SEED=214 soak)",
          simSeed: 277769,
          steps: ["failover(717,2)", "produce(0,0,1)", "crash(21,146)"],
        },
        {
          bug: "the same after a planned failover that did not wait, re-added without the flag (FC_SEED=6)",
          simSeed: 0,
          steps: ["produce(0,0,1)", "failover(0,2)", "advance(100)", "readd(0,0)"],
        },
        {
          bug: "the failover's PID reset barrier was counted before its replicas had it: b's leader crashed right after appending it and orders-0 went STOPPED without one (FC_SEED=10 and 36 soaks)",
          simSeed: 16,
          steps: ["failover(0,2)", "readd(0,0)", "crash(73,0)", "writePromoted(0,0,1)"],
          reaches: (sim) =>
            sim.steps.some((s) => s.includes("crash b broker 0")) ? undefined : "b's broker 0 did not crash",
        },
        {
          bug: "soak FC_SEED=4 x100: a re-add (--truncate-local-writes) removed again before its truncation appended a second PID reset after b's local writes; a later plain re-add counted only writes after that barrier and truncated them without asking",
          simSeed: 0,
          steps: ["failover(0,0)", "writePromoted(0,0,3)", "readd(0,1)", "failover(0,3)", "readd(0,0)"],
          // Such a failover keeps the topic's own log and producer state (no barrier): it is not among the
          // failovers the model records, so the `__mirror_state` history tells it.
          reaches: (sim) => {
            const a = latestFailover(sim, "b", "b-from-a", "orders", 0);
            return a?.stoppedFrom === "PREPARING" && !a.aligned
              ? undefined
              : "no failover of b orders before its re-add's truncation";
          },
        },
        {
          bug: "the first model of that fix (FC_SEED=6 x100, a simulator bug): a write the operator's consented re-add had truncated stayed protected by its old offset, so the next plain re-add's removal of the barrier now at that offset was reported as a loss",
          simSeed: 0,
          steps: ["failover(0,0)", "readd(0,1)", "failover(0,2)", "readd(0,0)", "advance(100)"],
          reaches: (sim) =>
            sim.steps.some((s) => s.startsWith("t+") && s.includes("re-add b-from-a orders (may truncate"))
              ? undefined
              : "the plain re-add after the cancelled one was not accepted",
        },
        {
          bug: "a coordinator that loaded a STOPPED partition again (its broker crashed right after a re-add's mirror.name, before its START) cleared the read-only flag the re-add had set (6 Dec review; found by crashOnReAdd and the metadata watch)",
          simSeed: 0,
          steps: ["produce(0,0,3)", "failover(0,0)", "crashOnReAdd(0,3000)", "readd(0,1)", "advance(5000)"],
          reaches: (sim) =>
            sim.steps.some((s) => s.includes("during its re-add"))
              ? undefined
              : "no coordinator crashed during the re-add",
        },
        {
          bug: "a removal (kafka-configs) while a re-add's START waited for its append: a controller that cleared the flag with the .removed let a write in that the START's PREPARING then truncated (6 Dec review; found again by readdRemoveRace with that clear seeded back)",
          simSeed: 0,
          steps: ["produce(0,0,3)", "failover(0,0)", "readdRemoveRace(0,9)", "advance(5000)"],
          reaches: reachesSteps(
            "the removal did not land right after the re-add's START, or no write was acknowledged after it",
            "kafka-configs removal right after its START -> ok, a write after it acknowledged",
            "the removal came last",
          ),
        },
        {
          bug: "soak readd FC_SEED=407 x10: an unplanned failover called while `__mirror_state-2` had no leader (its ISR had shrunk to broker 1, which then crashed) set mirror.name to .removed, then waited for the coordinator and answered COORDINATOR_NOT_AVAILABLE: a refused call that changed state, its failover left to whenever the partition came back. Rebuilt once idle followers stayed in the ISR: the disks of b's brokers 0 and 2 fill, so the re-add's writes to `__mirror_state-2` (led by broker 1) wait until those followers leave its ISR (replica.lag.time.max.ms); broker 1 crashes before they catch up",
          simSeed: 127497,
          steps: [
            "failover(1,1)",
            "diskFull(1,0,0,60000)",
            "diskFull(1,2,1,60000)",
            "readd(0,1)",
            "advance(1000)",
            "crash(1,1)",
            "failover(1,1)",
          ],
          reaches: reachesSteps(
            "the failover of profiles was not refused for a coordinator that could not load after b's broker 1 crashed, the disks of its brokers 0 and 2 full",
            "disk of b broker 0 full",
            "disk of b broker 2 full",
            "crash b broker 1",
            /failover b-from-a profiles: COORDINATOR_NOT_AVAILABLE: .*__mirror_state-2 no running leader/,
          ),
        },
      ]);
    },
    PROPERTY_TIMEOUT_MS,
  );
});
