import { ControlRecordType } from "@cluster-mirror/protocol";
import { describe, it } from "vitest";
import {
  latestFailover,
  PROPERTY_TIMEOUT_MS,
  reachesSteps,
  reachesUnmirroredFailover,
  runRegressions,
  runTopologyProperty,
  type TopologyProperty,
} from "./harness";
import { activePassive, leaderLog } from "./sim";

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
      "slowReplication",
      "fastDisk",
      "readd",
      "writePromoted",
      "failStopped",
      "deleteRecords",
      "concurrent",
      "promoteRace",
      "restartNode",
      "crashSoon",
      "crashOnCommit",
      "crashOnCommit",
      "crashOnCommit",
      "crashOnCommit",
      "crashAfterAck",
      "controllerFailover",
      "diskFull",
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
          // b failed profiles over (unplanned, not waiting) and a failed it back 30 ms later: a's PREPARING
          // asked b for the LME while b was still STOPPING (MIRROR_FAILOVER_IN_PROGRESS), failed, and each
          // retry's backoff grew (0.1, 1.2, 0.4, 0.5 s, then 15.9 s): b was STOPPED at 3.3 s, a mirrored only
          // at 18.5 s. PREPARING now asks a busy source again every 500 ms instead of failing at once.
          bug: "a failback's PREPARING failed on a source still failing over and backed off 16 s after it ended (soak FC_SEED=459 x10)",
          simSeed: 120817,
          steps: [
            "failover(292,2)",
            "failover(302,3)",
            "fastDisk(282)",
            "crashAfterAck(14,835,788,180,7)",
            "cycle(817)",
            "failover(193,0)",
            "restartNode(823)",
          ],
          reaches: reachesSteps(
            "a did not fail profiles back right after b's unplanned failover of it",
            /unplanned failover b-from-a profiles: removeTopics returned \(not waiting/,
            /failback a-from-b profiles/,
          ),
        },
        {
          // The simulator's check, not the engine: b's network between brokers was slow (1,013 ms a trip), so
          // each of the resumed failover's replicated writes took two trips; the bound counted disks only.
          bug: "soak FC_SEED=430 x10 (a simulator bug): a failover resumed after a restart, on a slow network between brokers, was STOPPED 5.2 s after the restart and reported late",
          simSeed: 999985,
          steps: [
            "fastDisk(482)",
            "failover(389,3)",
            "crashOnCommit(0,197,3227)",
            "crashSoon(770,466,291,866)",
            "crashAfterAck(215,882,1013,871,4)",
            "groupCommit(955,548,295)",
            "crash(790,28)",
            "fastDisk(611)",
            "slowDisk(88,463,851)",
            "restartNode(483)",
          ],
          reaches: reachesSteps("no failover resumed after a restart", /kill -9 node b.*were STOPPING/),
        },
        {
          // The simulator's liveness check, not the engine: the failed-back copy was reset to its source's
          // log start (DeleteRecords had removed all there was to copy), a high watermark jump it never heard.
          bug: "a copy reset to its source's log start reached the source's end unheard by add-mirrors (FC_SEED=377 x10)",
          simSeed: 11,
          steps: ["cycle(376)", "readd(127,0)", "deleteRecords(65,646,3,0)", "crashOnCommit(0,71,88)"],
        },
        {
          // A follower starting over at its leader's log start (deleteRecords moved it) wrote its log start
          // checkpoint on a full disk: the error left the broker's replica fetch (a crash on a real disk).
          bug: "a replica fetch's truncation on a full disk threw out of the broker's scheduler (FC_SEED=312 x10)",
          simSeed: 999989,
          steps: [
            "crashSoon(972,948,223,974)",
            "fastDisk(234)",
            "deleteRecords(11,708,1,0)",
            "crashOnCommit(0,16,4749)",
            "fastDisk(525)",
            "writePromoted(209,137,1)",
            "diskFull(267,706,209,2004)",
            "groupCommit(817,167,591)",
            "crashOnCommit(0,87,3516)",
            "txnCommit",
          ],
          reaches: reachesSteps("a disk filled", /disk of \w+ broker \d full/, /has space again/),
        },
        {
          // PREPARING's cut was made, then its tombstone's write failed on a full disk: the FAILED record
          // (leaderEpoch 0) carries the cut, so the failover from FAILED writes its markers; the simulator
          // took the log for the topic's own (it looked for the cut only in a STOPPING from PREPARING).
          bug: "soak FC_SEED=398 x10 (a simulator bug): a failback that failed after its cut (the tombstone on a full disk) and was removed from FAILED wrote its PID reset, rightly",
          simSeed: 723532,
          steps: [
            "cycle(225)",
            "diskFull(780,789,4,753)",
            "slowDisk(924,127,340)",
            "cycle(404)",
            "produce(38,769,4)",
            "crashOnCommit(0,139,829)",
            "txnAbort",
            "cycle(614)",
            "failover(451,1)",
          ],
          reaches: (sim) => {
            const a = latestFailover(sim, "a", "a-from-b", "profiles", 0);
            return a?.resumedFrom === "FAILED" && a.cutInPreparing
              ? undefined
              : "a's profiles-0 did not fail over from FAILED after PREPARING's cut";
          },
        },
        {
          bug: "followers out of the ISR of idle partitions never fetched again, so never rejoined (FC_SEED=291 x30)",
          simSeed: 12,
          steps: [
            "crashOnCommit(0,3,4379)",
            "crashSoon(795,956,113,4167)",
            "txnCommit",
            "crashAfterAck(977,708,1243,2734,3)",
            "restartBrokers(514)",
            "crashOnCommit(2,65,2874)",
            "controllerFailover(2,6440,997)",
            "concurrent(397,848,764,102)",
          ],
          reaches: reachesSteps(
            "no restart of every broker of a over a slow network, then a controller failover",
            /replication latency 1243 ms/,
            "restart every broker of a",
            "controller failover on a",
          ),
        },
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
          // Such a failover keeps the topic's own log and producer state (no barrier): the model records no
          // failover point for it, so the `__mirror_state` history tells it.
          reaches: (sim) => {
            const a = latestFailover(sim, "a", "a-from-b", "orders", 0);
            const log = sim.node("a").cluster.leaderFor("orders", 0).replica("orders", 0)?.log;
            const local = (log?.logEndOffset ?? 0n) > 0n;
            return a?.stoppedFrom === "PREPARING" && !a.aligned && local
              ? undefined
              : "no failover on a from PREPARING before the truncation, over a log of its own";
          },
        },
        {
          bug: "FC_SEED=2 at 100 runs: a coordinator lost after a failback's truncation (before MIRRORING; the source knew no LME, the partition's own served) found that LME already cleared, and truncated the whole log: committed records vanished from b until refetched",
          simSeed: 53969,
          steps: [
            "crashOnCommit(2,49,3953)",
            "crashOnCommit(0,98,662)",
            "slowDisk(990,251,819)",
            "slowDisk(804,141,1869)",
            "txnAbort",
            "txnBegin(462,866)",
            "cycle(702)",
            "cycle(605)",
            "crashOnCommit(3,105,3058)",
          ],
        },
        {
          bug: "soak FC_SEED=195: a node restarted in STOPPING replayed an old leader record of the topic (from before it became a mirror) and put that epoch at the log end of the mirror partition, which the failover then captured as its LME",
          simSeed: 0,
          steps: ["restartBrokers(0)", "cycle(0)", "failover(21,2)", "restartBrokers(0)", "failover(0,0)"],
        },
        {
          bug: "soak FC_SEED=194: a failover whose log ended with the source's own barrier (mirrored after the failback) took it for its own and wrote none; the LME was that barrier's epoch, above every batch before it",
          simSeed: 0,
          steps: ["cycle(0)", "cycle(159)", "cycle(0)", "failover(651,0)"],
        },
        {
          // The FC_SEED=194 steps above no longer reach that bug: a cycle now writes after each failover, so
          // no log ends with a barrier when the other side copies it (sweep of 6 Dec). Here a's write after
          // its failover is refused (its producer's state went with the failback's truncation), b copies a's
          // barrier as the last batch of its log, then fails over.
          bug: "seeded props-14: a failover whose log ended with the barrier it had mirrored from the source took it for its own and wrote none; the LME was that barrier's epoch, above every batch before it",
          simSeed: 0,
          steps: [
            "cycle(0)",
            "cycle(159)",
            "cycle(0)",
            "failover(651,2)",
            "failback(1)",
            "advance(20000)",
            "failover(2,1)",
          ],
          // The bug needs b's failover over a log whose last mirrored batch is a's barrier.
          reaches: (sim) => {
            const f = sim.model.failovers.findLast(
              (x) => x.node === "b" && x.topic === "orders" && x.partition === 0,
            );
            if (!f) return "no failover of b orders-0 checked at STOPPED";
            const log = leaderLog(sim.node("b").cluster, "orders", 0);
            const last = [...(log?.batches() ?? [])].find((b) => b.lastOffset === f.mirroredEnd - 1n);
            return last?.isControl && last.controlType === ControlRecordType.MIRROR_PID_RESET
              ? undefined
              : `b orders-0's last mirrored batch (below ${f.mirroredEnd}) is not a barrier copied from a`;
          },
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
            latestFailover(sim, "b", "b-from-a", "orders", 0)?.stoppedFrom === "PREPARING"
              ? undefined
              : "no failover on b from PREPARING with the link a->b cut",
        },
        {
          bug: "soak FC_SEED=70 (the model): a node restarted in STOPPING with a 1.7 s disk finished its failover in 5.1 s; the 5 s bound is for a healthy cluster, each replicated write of the failover waits for the slow fsync",
          simSeed: 0,
          steps: ["slowDisk(135,0,1661)", "failover(0,2)", "restartBrokers(13)", "groupCommit(0,0,0)"],
          reaches: (sim) =>
            sim.steps.some((s) => s.includes("slow disk b broker 0: 1661 ms")) &&
            sim.steps.some((s) => s.includes("2 partition(s) were STOPPING"))
              ? undefined
              : "no restart of b in STOPPING with its slow disk",
        },
        {
          bug: "soak FC_SEED=75: a failback dropped the old primary's acknowledged write without --truncate-local-writes (the new primary had failed over before mirroring the rest of that leader epoch; the check and PREPARING cut at this log's end of the epoch, the first fetch's divergence cut further)",
          simSeed: 0,
          steps: ["cycle(0)", "controllerFailover(711,621,0)", "writePromoted(0,0,1)", "cycle(127)"],
          reaches: (sim) =>
            sim.steps.some((s) => s.includes("produce 1 to b/orders-0: ok at 2")) &&
            sim.steps.some((s) => s.includes("unplanned failover a-from-b orders: STOPPED"))
              ? undefined
              : "b's write at 2 and a's unplanned failover did not both happen",
        },
        {
          bug: "soak FC_SEED=220 (a simulator bug): a re-add failed in PREPARING before its truncation during a controller failover, then was removed; the operator's view before --remove had no state for the partition (no coordinator had it loaded), so the simulator expected a PID reset the engine rightly did not write",
          simSeed: 5,
          // The controller's outage is 61 s (102 ms in the soak): a truncation refused with NOT_CONTROLLER
          // now waits up to 60 s in place before PREPARING fails.
          steps: [
            "failover(21,0)",
            "readd(0,1)",
            "controllerFailover(313,61000,3)",
            "cycle(111)",
            "cycle(0)",
          ],
          reaches: reachesUnmirroredFailover("b", "b-from-a", "profiles", 0),
        },
        {
          bug: "soak FC_SEED=8 x100 (a simulator bug): b's local write at orders-0 offset 1, dropped by b's own consented failback (--truncate-local-writes) and replaced by a's mirrored batch, was still promised by a later unplanned failover of a from b, which a could never hold",
          simSeed: 0,
          steps: ["cycle(0)", "cycle(471)", "failover(0,0)", "cycle(0)", "cycle(0)", "cycle(0)"],
          // The bug needs b's consented truncation of its own write, then a failover of a from b after it.
          reaches: reachesSteps(
            "no unplanned failover of a from b after b's consented truncation of its own writes",
            "failback --truncate-local-writes b-from-a orders",
            "unplanned failover a-from-b orders: STOPPED",
          ),
        },
        {
          bug: "soak FC_SEED=9 x100: b failed back while a's failover of the topic was still STOPPING (slow disk); a answered LME -1 (none recorded yet), so b's add was refused for local writes a in fact held, and with --truncate-local-writes PREPARING truncated b's whole log (its own LME was -1 too), removing committed records",
          simSeed: 0,
          steps: ["cycle(0)", "failover(291,2)", "slowDisk(0,0,81)", "cycle(327)", "crashOnCommit(0,0,50)"],
          // The bug needs b's failback asked while a's failover (not waited for) had not reached STOPPED.
          reaches: reachesSteps(
            "no failback of b asked while a's failover of orders was not yet STOPPED",
            "failover a-from-b orders: removeTopics returned (not waiting for STOPPED)",
            /failback( --truncate-local-writes)? b-from-a orders/,
          ),
        },
        {
          bug: "soak FC_SEED=12 x100 (a simulator bug): `concurrent` re-added orders on both mirrors at once (b-from-a and a-from-b), a loop raced from both sides; the engine refused it in PREPARING (FAILED) but the simulator expected both sides to mirror and never resolved the loop",
          simSeed: 0,
          steps: ["cycle(0)", "cycle(0)", "failover(0,2)", "concurrent(733,0,733,230)", "restartBrokers(0)"],
          reaches: reachesSteps(
            "no loop raced by two concurrent re-adds",
            "concurrent: readd b-from-a orders -> ok | readd a-from-b orders -> ok",
            "loop race orders: ",
          ),
        },
        {
          bug: "soak FC_SEED=16 and 18 x100: both b-from-a partitions failed while their destination partitions had no leader (b's brokers crashed and restarted); FAILED's own removeFetcher failed for the same reason and committed FAILED again, which ran it again at once: records appended without end, virtual time stuck",
          simSeed: 601284,
          steps: [
            "produce(351,597,2)",
            "crashOnCommit(1,0,1629)",
            "restartBrokers(411)",
            "restart(242)",
            "concurrent(946,159,944,920)",
            "failover(448,1)",
            "crashOnCommit(0,149,4570)",
          ],
          // The bug needs the failover asked while orders-0 (FAILED) has no leader on b.
          reaches: reachesSteps(
            "no failover of b-from-a orders asked while orders-0 had no leader on b",
            "write b-from-a orders -> LEADER_NOT_AVAILABLE: orders-0 has no running leader",
            "unplanned failover b-from-a orders: STOPPED",
          ),
        },
        {
          bug: "soak FC_SEED=16 x100: a failed over from b (LME 2), b failed back and mirrored a's new batches, then b failed over (LME 13) and failed back again; PREPARING aligned to a's older LME 2 and cut b's log at 2, removing the committed batches b had mirrored from a since (refetched, but gone for a while)",
          simSeed: 999992,
          steps: [
            "crash(9,4)",
            "cycle(822)",
            "advance(2728)",
            "controllerFailover(184,5294,42)",
            "cycle(959)",
            "concurrent(111,708,371,681)",
            "failover(910,0)",
            "cycle(613)",
            "crashOnCommit(2,139,2958)",
          ],
          // The bug needs b's failback after b's own failover that followed a's, all of orders.
          reaches: reachesSteps(
            "no failback of b after b's failover that followed a failover of a and b's failback",
            "unplanned failover a-from-b orders: STOPPED",
            "failback b-from-a orders (may truncate",
            "planned failover b-from-a orders: STOPPED",
            "failback --truncate-local-writes b-from-a orders",
          ),
        },
        {
          bug: "soak FC_SEED=25 x100: b failed over with nothing mirrored and wrote at epoch 1, a leader election on b then recorded epoch 2 at the log end; a mirrored b, failed over (LME 1), and b failed back: the LME's end was b's log end, so PREPARING cut nothing and kept epoch 2 in b's cache, and b's failover 100 ms later (before a fetch) persisted LME 2, an epoch no batch carries. Since the failover bump went from 1 to 10 the replay takes another path (b's failback is refused with UNSAFE_TRUNCATION, then truncated) and no longer reaches that bug, which effect-executor-truncate.test.ts and local-replica-latest-epoch.test.ts guard (soaks with props-22/23, seeds 25-42 at 60-100x, found no new counterexample); it still checks a failover of b right after a truncating failback, before b's fetcher ran",
          simSeed: 515367,
          steps: [
            "restartBrokers(746)",
            "crashOnCommit(3,54,2230)",
            "cycle(371)",
            "slowDisk(474,241,1280)",
            "crash(451,867)",
            "produce(732,224,4)",
            "crash(152,88)",
            "cycle(881)",
            "failover(150,1)",
            "failover(300,1)",
          ],
          reaches: reachesSteps(
            "no failover of b right after b's truncating failback of profiles from a",
            "unplanned failover a-from-b profiles: STOPPED",
            "failback --truncate-local-writes b-from-a profiles",
            "unplanned failover b-from-a profiles: STOPPED",
          ),
        },
        {
          bug: "soak FC_SEED=34 x100 (a simulator bug): b failed back with --truncate-local-writes, dropping its write at orders-0 offset 1 by consent, and failed over again; a's planned failover from b then promised that write (the catch-up barrier promised every write ever acknowledged on b, held or not) and reported it lost",
          simSeed: 25735,
          steps: [
            "cycle(754)",
            "failover(613,3)",
            "advance(10855)",
            "crashOnCommit(1,117,2089)",
            "cycle(405)",
            "restart(100)",
            "cycle(394)",
            "cycle(346)",
            "failover(474,2)",
          ],
          reaches: reachesSteps(
            "no planned failover of a from b after b dropped its local writes by consent",
            "failback --truncate-local-writes b-from-a orders",
            "planned failover a-from-b orders",
          ),
        },
        {
          // a's workload transaction on orders-1 (producer 0, data at 0) was abandoned by a kill -9 of node a;
          // the new process's coordinator loaded it Ongoing, to abort at its 60 s timeout. a failed back and
          // failed over again before PREPARING's truncation: a failover over the topic's own log aborts only
          // KIP-664's hanging transactions and rightly left this live one to its coordinator (it did, 60 s
          // later); the simulator checked LSO == HW at STOPPED with no exception for it.
          bug: "soak FC_SEED=408 x10 (a simulator bug): an abandoned transaction of a's own coordinator, open on the log a failback removed before its truncation kept, was reported hanging at STOPPED",
          simSeed: 737213,
          steps: [
            "txnBegin(972,941)",
            "readd(374,1)",
            "restartNode(318)",
            "crash(285,677)",
            "crash(353,448)",
            "slowDisk(541,353,1448)",
            "restart(474)",
            "cycle(60)",
            "cycle(949)",
          ],
          // The bug needs a's failover of orders-1 from PREPARING before the truncation, the abandoned
          // transaction still open on its log at STOPPED.
          reaches: (sim) => {
            const a = latestFailover(sim, "a", "a-from-b", "orders", 1);
            const open =
              /a\/orders-1: the abandoned transaction of producer \d+ \(data at 0\) is open after STOPPED/;
            const stillOpen = sim.steps.some((s) => open.test(s));
            return a?.stoppedFrom === "PREPARING" && !a.aligned && stillOpen
              ? undefined
              : "no failover of a's orders-1 before the truncation with its abandoned transaction open at STOPPED";
          },
        },
        {
          // The same transaction (a's, abandoned by a kill -9 of node a, loaded Ongoing by the new process's
          // coordinator), on every sim seed. a's failback PREPARING cut orders-1 fully at 0 while a's controller
          // was failing over: the broker could not record the cut (ReplicaTruncation) and refused it before
          // cutting; PREPARING went FAILED and retried, six times, each refused the same way, and a's failover
          // then went from FAILED over the topic's own log (LME -1 kept), leaving the transaction to a's
          // coordinator (which aborted it at its timeout). The simulator's `beforeTruncate` hook had recorded
          // each refused cut in `model.truncations` before it ran, so the abandoned transaction read as cut
          // away (`replaced`): not excused at STOPPED, and never checked by `checkAbandonedTxns`. Since a cut
          // refused with NOT_CONTROLLER is asked again in place (no FAILED), a's failover comes while PREPARING
          // still waits to cut (its next ask due): the same log, the same refused cuts, from PREPARING.
          bug: "helper h2 (a simulator bug): a failback's truncation refused during a controller failover (no controller to record it) was taken as made; the abandoned transaction it never removed was reported hanging after the failover from FAILED",
          simSeed: 0,
          steps: [
            "txnBegin(534,411)",
            "restartNode(908)",
            "cycle(978)",
            "controllerFailover(386,7275,880)",
            "cycle(749)",
          ],
          // The bug needs a's failover of orders-1 from FAILED or PREPARING before any cut, the abandoned
          // transaction (data at 0) still on its log at STOPPED and aborted later by a's coordinator, no cut of
          // it recorded.
          reaches: (sim) => {
            const a = latestFailover(sim, "a", "a-from-b", "orders", 1);
            const open =
              /a\/orders-1: the abandoned transaction of producer \d+ \(data at 0\) is open after STOPPED/;
            const log = leaderLog(sim.node("a").cluster, "orders", 1);
            const batches = [...(log?.batches() ?? [])];
            const txn = batches[0];
            const aborted =
              txn?.isTransactional === true &&
              batches.some(
                (b) =>
                  b.isControl && b.controlType === ControlRecordType.ABORT && b.producerId === txn.producerId,
              );
            const cut = sim.model.truncations.some((t) => t.node === "a" && t.partition === 1);
            return (a?.stoppedFrom === "FAILED" || a?.stoppedFrom === "PREPARING") &&
              !a.aligned &&
              sim.steps.some((s) => open.test(s)) &&
              aborted &&
              !cut
              ? undefined
              : "no failover of a's orders-1 from FAILED or PREPARING before any cut, its abandoned transaction open at STOPPED and aborted later";
          },
        },
        {
          // b's controller failed over (9.2 s without one) as b failed orders over: STOPPING's leader epoch
          // bump and STOPPED's clearing of the read-only flag were refused with NOT_CONTROLLER, each refusal
          // a FAILED detour with a growing backoff; the last drew 31.8 s, so orders stayed read-only and a's
          // failback polled MIRROR_FAILOVER_IN_PROGRESS long after the controller was back. Those steps now
          // ask the controller again in place (100 ms growing to 1 s, for up to 60 s), as Kafka's clients do.
          bug: "a failover step refused with NOT_CONTROLLER waited out FAILED's backoff, holding a failback (soak FC_SEED=651)",
          simSeed: 471035,
          steps: [
            "failover(511,3)",
            "failover(167,3)",
            "txnCommit",
            "controllerFailover(861,9153,107)",
            "fastDisk(590)",
            "produce(816,45,4)",
            "deleteRecords(680,246,0,1)",
            "cycle(686)",
            "writePromoted(325,735,2)",
            "restart(257)",
          ],
          reaches: reachesSteps(
            "b's controller was not unavailable while b failed orders over, before a failed it back",
            /unplanned failover b-from-a orders: removeTopics returned/,
            /controller failover on b: unavailable/,
            /failback a-from-b orders/,
          ),
        },
      ]);
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    "regression: a replica down while its mirror truncated the leader's log rejoins and converges (FC_SEED=11 soak)",
    async () => {
      // b's broker 0 holds b's own epoch-1 batches (its failover, then a local write) and was down while b
      // re-added `orders` and truncated its log; the leader then stored a's batches, a's epoch 1 among them.
      // The epochs agreed, so the leader's batch began below broker 0's log end: its append threw out of
      // the broker's scheduled fetch (ending the simulation, as it would end a node's process). Now it
      // truncates to that batch and fetches again; orders-0's replicas must end identical to the leader's.
      // Not checked, open (README): orders-1, where broker 0's batches line up with the leader's at the
      // same offsets and epochs but differ in content, so nothing detects the difference.
      const p: TopologyProperty = {
        name: "failback",
        file: "test/properties/failback.test.ts",
        topology: activePassive,
        commands: [],
        numRuns: 1,
        maxCommands: 0,
        onRunEnd: (sim) => {
          for (const node of ["a", "b"]) {
            const cluster = sim.node(node).cluster;
            for (const p of [0, 1]) {
              const bytes = (b: number) =>
                [...(cluster.broker(b)?.replica("orders", p)?.log.batches() ?? [])].map((x) =>
                  x.buffer.toString("hex"),
                );
              const leader = cluster.controller.image.partition("orders", p)!.leader;
              for (const b of [0, 1, 2]) {
                if (JSON.stringify(bytes(b)) !== JSON.stringify(bytes(leader)))
                  throw new Error(`${node} orders-${p}: broker ${b}'s log differs from leader ${leader}'s`);
              }
            }
          }
        },
      };
      await runRegressions(p, [
        {
          bug: "a rejoining replica held other batches of an epoch its leader reused after a mirror truncation",
          simSeed: 0,
          steps: ["produce(0,0,3)", "crashSoon(471,0,331,710)", "cycle(0)", "cycle(21)"],
        },
      ]);
    },
    PROPERTY_TIMEOUT_MS,
  );
});
