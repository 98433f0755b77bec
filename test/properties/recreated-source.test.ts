import { describe, expect, it } from "vitest";
import { PROPERTY_TIMEOUT_MS, reachesSteps, runRegressions, runTopologyProperty } from "./harness";
import { activePassive, chain, fanOut } from "./sim";

/**
 * A source topic deleted and created again under its name (another topic id, overlapping offsets) while
 * mirrors copy it, among writes, transactions, pauses, failovers and broker faults. Checked on every step
 * (`checkOrphans`): a copy of the deleted topic gets nothing but that topic's own batches, whatever the new
 * topic of that name holds; at settle its partitions are FAILED for good (or STOPPED, failed over), and
 * everything else (prefixes, failover promises, chains downstream of the copy) holds as usual.
 */
describe("property: a source topic deleted and created again under its name", () => {
  /** The chain property's settings, for its stored regressions (each replays one run). */
  const chainOfThree = {
    name: "recreated-source-chain",
    file: "test/properties/recreated-source.test.ts",
    topology: () => chain(3),
    commands: [],
    numRuns: 1,
    maxCommands: 0,
  };
  /** The active-passive property's settings, for its stored regressions (each replays one run). */
  const activePassiveRegressions = {
    name: "recreated-source-active-passive",
    file: "test/properties/recreated-source.test.ts",
    topology: activePassive,
    commands: [],
    numRuns: 1,
    maxCommands: 0,
  };
  const commands = [
    "produce",
    "recreateTopic",
    "txnBegin",
    "txnCommit",
    "txnAbort",
    "pause",
    "resume",
    "failover",
    "failback",
    "readd",
    "readdRecreate",
    "addTopic",
    "crash",
    "crashSoon",
    "restart",
    "restartNode",
    "moveStateLeader",
    "cutLink",
    "healLink",
    "advance",
  ] as const;

  it(
    "regression: a failover still STOPPING wrote its PID reset barrier into the topic created again under its name (FC_SEED=288 x30)",
    async () => {
      await runRegressions(activePassiveRegressions, [
        {
          // a's copy of profiles (mirrored back from b) is failed over without waiting, then deleted and
          // created again while STOPPING: STOPPING's steps named the partition by name and wrote the
          // MIRROR_PID_RESET into the new topic, then called it STOPPED. They now check the topic id and
          // fail for good instead.
          bug: "STOPPING wrote its barrier into another topic of the same name (the copy deleted on its destination)",
          simSeed: 355681,
          steps: [
            "failover(623,0)",
            "failover(870,4)",
            "failback(797)",
            "failback(493)",
            "healLink(779)",
            "txnBegin(539,292)",
            "failover(862,2)",
            "recreateTopic(805,1,2)",
            "readd(988,0)",
          ],
          reaches: (sim) => {
            const deleted = [...sim.model.deletedCopies.values()].find(
              (d) => d.node === "a" && d.topic === "profiles",
            );
            return deleted && !deleted.stopped.has(0)
              ? undefined
              : "a's profiles was not deleted while its failover was still STOPPING";
          },
        },
      ]);
    },
    PROPERTY_TIMEOUT_MS,
  );
  it(
    "regression: a restart of every broker lost the records of a topic deleted and created again (f760d67)",
    async () => {
      await runRegressions(activePassiveRegressions, [
        {
          // Each broker's replay of the metadata log opened the deleted topic's partitions before their
          // RemoveTopic, on the directories the topic created again under the name owned by then, and the
          // RemoveTopic deleted them: with every broker restarted, no replica kept the new topic's records.
          bug: "a's orders, deleted and created again, lost its acknowledged records when every broker of a restarted",
          simSeed: 1,
          steps: ["produce(0,0,3)", "recreateTopic(0,0,3)", "restartBrokers(0)"],
          reaches: reachesSteps(
            "orders was not created again and written before every broker of a restarted",
            "recreate a/orders: id",
            "produce 3 to a/orders-0: ok",
            "restart every broker of a",
          ),
        },
      ]);
    },
    PROPERTY_TIMEOUT_MS,
  );
  it(
    "regression: a transaction that timed out wrote its ABORT marker into a partition re-added as a mirror (FC_SEED=42 x15)",
    async () => {
      await runRegressions(activePassiveRegressions, [
        {
          bug: "b's transaction coordinator appended a marker (pid 1, b's epoch 12) into profiles-0 once it mirrored a again: a batch the source never had, at an offset the source's next batch needs",
          simSeed: 70558,
          steps: [
            "failover(767,2)",
            "txnBegin(533,301)",
            "addTopic(43,709)",
            "healLink(969)",
            "healLink(259)",
            "txnBegin(956,899)",
            "healLink(429)",
            "readd(918,0)",
            "readdRecreate(772,0,1)",
          ],
          // b's transaction added profiles-0 while it was STOPPING (its send was refused), then timed out
          // a minute later, after the re-add made profiles-0 a mirror partition again.
          reaches: reachesSteps(
            "no transaction began on b's profiles while it failed over, before a re-add",
            "txn begin on b/profiles: READ_ONLY_TOPIC",
            "re-add --truncate-local-writes b-from-a profiles",
          ),
        },
      ]);
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    "regression: a chain hop failed over and re-added from its source, whose next batch had the epoch of the hop's own writes (FC_SEED=71 x15)",
    async () => {
      await runRegressions(chainOfThree, [
        {
          bug: "c1 failed over orders with nothing mirrored and wrote its PID reset at epoch 1 (one above LME -1 and its epoch 0), which c2 copied; a broker crash on c0 made c0's leader epoch 1; c1 was re-added from c0, which then wrote at epoch 1 at offset 0: c2's fetch from c1 (offset 1, last fetched epoch 1) saw no divergence and kept the PID reset where c1 now held c0's record. The failover bump is now 10 above the LME and the local epoch",
          simSeed: 576155,
          steps: [
            "failover(388,2)",
            "moveStateLeader(273,34)",
            "healLink(184)",
            "txnBegin(544,307)",
            "advance(2606)",
            "readd(761,1)",
            "txnBegin(528,959)",
            "txnCommit",
            "healLink(813)",
          ],
          reaches: reachesSteps(
            "no planned failover of c1 then re-add from c0, with writes on c0 after",
            "planned failover c1-from-c0 orders",
            "re-add --truncate-local-writes c1-from-c0 orders",
            "produce 1 to c0/orders-1: ok at 0",
          ),
        },
      ]);
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    "regression: a paused chain copy resumed after a re-add upstream emptied its source (FC_SEED=223 x20)",
    async () => {
      await runRegressions(chainOfThree, [
        {
          bug: "c1 failed profiles over from c0 (PID reset at offset 0, epoch 10), c2 copied it and was paused, c1's re-add from c0 emptied profiles-0. A resume reset the simulator's 'ACTIVE since', so the cut made during the pause no longer counted: the copy, rightly ahead of its empty source until the source writes again (docs/protocol.md), was neither nudged nor excused, and settling failed ([converges], [offset-identity]). A resume now keeps the time; the source then writes once and c2 must truncate its PID reset away and follow",
          simSeed: 90689,
          steps: [
            "readdRecreate(234,1,0)",
            "failover(73,3)",
            "advance(17320)",
            "moveStateLeader(693,5)",
            "pause(239)",
            "readd(295,1)",
            "healLink(435)",
          ],
          reaches: reachesSteps(
            "no re-add of c1 from c0 while c2's copy was paused, then one write upstream once resumed",
            "pause c2-from-c1 profiles",
            "re-add --truncate-local-writes c1-from-c0 profiles",
            "settled: resume c2-from-c1 profiles",
            "one write to c0/profiles-0",
          ),
        },
      ]);
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    "regression: two hops that failed over from the same epochs, then failed back in turn (FC_SEED=226 x20)",
    async () => {
      await runRegressions(chainOfThree, [
        {
          bug: "c2 failed orders over from c1 and c1 from c0, both from epoch 0, so both wrote at epoch 10; c0 failed back onto c1 (copying c1's epoch-10 batches), then c1 failed back onto c2 and holds c2's epoch-10 batches at the same offsets. c0's fetch from c1 saw epoch 10 end where its own does and kept c1's old batches ([offset-identity] c1->c0 orders-0: batch at offset 0 differs, destination epoch 10, source epoch 10). c1's cut is now a log rewrite in its metadata, and c0 compares what it holds there with c1",
          simSeed: 783787,
          steps: [
            "txnBegin(977,443)",
            "failover(410,0)",
            "txnCommit",
            "cutLink(179)",
            "failover(303,1)",
            "failback(924)",
            "recreateTopic(750,1,3)",
            "advance(12930)",
            "failback(893)",
            "pause(497)",
          ],
          reaches: reachesSteps(
            "no failback of c0 onto c1, then of c1 onto c2, after both failed over",
            "planned failover c2-from-c1 orders: STOPPED",
            "unplanned failover c1-from-c0 orders: STOPPED",
            "failback c0-from-c1 orders",
            "failback --truncate-local-writes c1-from-c2 orders",
          ),
        },
      ]);
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    "regression: a failback added a topic to the reverse mirror while its unplanned failover was still STOPPING (FC_SEED=246 x20)",
    async () => {
      await runRegressions(chainOfThree, [
        {
          bug: "c0 recreated profiles; c1's copy was failed over without waiting (removeTopics returned, STOPPING), c2 failed over from c1, and the failback of c1 from c2 was accepted at once: c1-from-c2 began copying c2's log while c1-from-c0 was still STOPPING, whose PID reset then landed mid-copy and was cut by the copy ([failover-barrier] c1 profiles-0: STOPPED but the log does not end with a MIRROR_PID_RESET barrier; [recreated-source] the batch at offset 1 (epoch 11, pid 0) is not the deleted source topic's). addTopics now refuses a topic another mirror is still failing over, as a re-add to the same mirror waits for STOPPED",
          simSeed: 15,
          steps: [
            "healLink(549)",
            "readdRecreate(916,0,0)",
            "txnBegin(316,734)",
            "recreateTopic(82,0,3)",
            "failback(979)",
            "moveStateLeader(987,20)",
            "moveStateLeader(254,417)",
            "failover(269,3)",
            "failover(896,0)",
            "failback(361)",
          ],
          reaches: reachesSteps(
            "no failback onto a topic still STOPPING in another mirror",
            "unplanned failover c1-from-c0 profiles: removeTopics returned (not waiting for STOPPED)",
            "planned failover c2-from-c1 profiles: STOPPED",
            "failback c1-from-c2 profiles",
          ),
        },
      ]);
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    "regression: fan-out with a source topic deleted, then created again or restored with its id by a failback from another copy (FC_SEED=235 x20, FC_SEED=249 x20, FC_SEED=260 x20, FC_SEED=261 x60, FC_SEED=262 x60)",
    async () => {
      await runRegressions(
        {
          name: "recreated-source-fan-out",
          file: "test/properties/recreated-source.test.ts",
          topology: fanOut,
          commands: [],
          numRuns: 1,
          maxCommands: 0,
        },
        [
          {
            bug: "a simulator bug: a deleted orders (its creation again refused) and then failed back from c, whose link from a was cut so it never had a's records, came back on a with its old id and c's log; b's copy followed a's new log and cut its committed records, a truncation the failback explains, but the failback allowed none since a had no orders when it was asked ([committed-prefix] b orders-0: the committed batch at offset 0 is removed by a truncation to 0 that no failback, re-add or retention explains). A failback now allows it from the source's partitions when the topic is gone here",
            simSeed: 1,
            steps: [
              "cutLink(115)",
              "txnBegin(503,645)",
              "readdRecreate(185,0,1)",
              "crash(936,698)",
              "crash(129,647)",
              "moveStateLeader(412,760)",
              "recreateTopic(976,1,3)",
              "resume(856)",
              "failback(776)",
            ],
            reaches: reachesSteps(
              "no failback onto a topic deleted on the failing-back side",
              "recreate a/orders: deleted",
              "failback a-from-c orders",
            ),
          },
          {
            bug: "a simulator bug: a deleted profiles (its creation again refused), c failed its copy over, a failed back onto c and so had profiles again with its old id; b's copy had seen it gone and failed for good within a second (since the UNKNOWN_TOPIC_ID refresh), yet the settling wanted it MIRRORING ([converges]). A copy failed for good on a deletion stays so until the operator removes and adds it",
            simSeed: 370794,
            steps: [
              "advance(39961)",
              "readd(424,1)",
              "moveStateLeader(663,506)",
              "pause(350)",
              "recreateTopic(819,1,4)",
              "failback(747)",
              "restart(681)",
              "readdRecreate(764,0,1)",
              "failback(339)",
            ],
            reaches: reachesSteps(
              "no deletion of a's profiles restored by a failback from c",
              "recreate a/profiles: deleted",
              "unplanned failover c-from-a profiles: STOPPED",
              "failback a-from-c profiles",
            ),
          },
          {
            bug: "a simulator bug: a deleted profiles (its creation again refused), b failed its empty copy over (its link from a cut), a failed back onto b and so had profiles again with its old id and b's log; c's copy had failed for good on the deletion, holding a's original records, and the settling compared it with a's restored log ([offset-identity] a->c profiles-0: batch at offset 0 differs). Such a copy is still the deleted topic's: it is checked as an orphan",
            simSeed: 999984,
            steps: [
              "moveStateLeader(478,414)",
              "cutLink(714)",
              "readdRecreate(709,0,0)",
              "crash(798,658)",
              "recreateTopic(259,1,3)",
              "readdRecreate(630,0,0)",
              "txnBegin(744,229)",
              "pause(197)",
              "txnCommit",
              "failback(746)",
            ],
            reaches: reachesSteps(
              "no deletion of a's profiles restored by a failback from b",
              "unplanned failover b-from-a profiles: STOPPED",
              "recreate a/profiles: deleted",
              "failback a-from-b profiles",
            ),
          },
          {
            bug: "an engine bug: a's orders was deleted and created again, and b's copy of the old topic was promoted: the promote compared the copy's end (3) with the new topic's high watermark (1), read it as caught up and failed it over without the record written to the new topic ([acked-durability] b after a planned failover: write acknowledged on a at offset 0 is different). The promote now asks the source's high watermarks by topic id and refuses a copy whose source topic is gone",
            simSeed: 348925,
            steps: [
              "resume(574)",
              "restart(145)",
              "txnCommit",
              "failback(488)",
              "readdRecreate(86,1,0)",
              "failover(144,4)",
              "pause(97)",
              "failback(137)",
              "cutLink(246)",
              "cutLink(628)",
            ],
            reaches: reachesSteps(
              "no promote of b's copy after a recreated orders",
              "recreate a/orders: id",
              /promote( failover)? b-from-a orders/,
            ),
          },
          {
            bug: "a simulator bug: t1 was added just before the link a->b was cut, with a transaction left open on it; its copy reached MIRRORING only late in the settling, and the poll that saw it so while its fetcher was still looking up the source leader reported [fetcher-follows-leader] (a minute had passed since the settling began, not since the partition had no fetcher). It is now reported after a minute without a fetcher",
            simSeed: 999993,
            steps: [
              "healLink(968)",
              "txnAbort",
              "addTopic(772,270)",
              "txnBegin(845,560)",
              "readd(334,1)",
              "cutLink(256)",
              "produce(658,335,2)",
              "moveStateLeader(242,68)",
              "advance(33495)",
            ],
            reaches: reachesSteps(
              "no open transaction on t1 before the cut",
              "txn begin on a/t1-0",
              "cut link a->b",
            ),
          },
        ],
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    "regression: a failed-over copy of a deleted topic that failed back onto another hop of the chain (FC_SEED=229 x20)",
    async () => {
      await runRegressions(chainOfThree, [
        {
          bug: "c1's copy of c0's profiles, orphaned when c0 recreated it, was failed over (STOPPED) and then failed back onto c2 with --truncate-local-writes, which cut it from 0 and made it c2's copy: the orphan check of the old edge c0->c1 still compared it with the deleted topic. It now stops where the copy's log was cut since its failover (rewrittenFrom), as the offset identity does",
          simSeed: 17,
          steps: [
            "resume(144)",
            "pause(684)",
            "failback(227)",
            "failover(811,0)",
            "readd(261,0)",
            "moveStateLeader(434,488)",
            "readdRecreate(581,0,0)",
            "readdRecreate(938,0,1)",
            "failback(455)",
            "failback(561)",
          ],
          reaches: reachesSteps(
            "no failback of c1 onto c2 after c1's copy of the recreated topic was failed over",
            "recreate c0/profiles",
            "unplanned failover c1-from-c0 profiles: STOPPED",
            "failback --truncate-local-writes c1-from-c2 profiles (may truncate from 0@0)",
          ),
        },
      ]);
    },
    PROPERTY_TIMEOUT_MS,
  );

  for (const [name, topology] of [
    ["active-passive", activePassive],
    ["fan-out", fanOut],
    ["chain", () => chain(3)],
  ] as const) {
    it(
      `${name}: no copy ever mixes the new topic into the old one's`,
      async () => {
        let recreated = 0;
        await runTopologyProperty({
          name: `recreated-source-${name}`,
          file: "test/properties/recreated-source.test.ts",
          topology,
          commands,
          numRuns: 30,
          maxCommands: 12,
          onRunEnd: (sim) => {
            recreated += sim.model.incarnations.size;
          },
        });
        // The fault must not be a silent no-op: some runs deleted and created a mirrored topic again.
        expect(recreated, "source topics recreated across the runs").toBeGreaterThan(0);
      },
      PROPERTY_TIMEOUT_MS,
    );
  }
});
