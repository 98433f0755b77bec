import { MIRROR_STATE_TOPIC, mirrorStatePartitionFor } from "@cluster-mirror/mirror";
import { describe, expect, it } from "vitest";
import {
  advanceTo,
  expectCleanFailover,
  failoverWithFaultAt,
  mirroredWithOpenTransaction,
  PHASES,
} from "./failover-faults-helpers";
import { leaderBatches } from "./helpers";

/** Spec §4 STOPPING with a fault injected at each of its steps; the oracles are `expectCleanFailover`. */
describe("the destination partition's leader fails in the middle of a failover", () => {
  for (const phase of PHASES) {
    it(`the data leader crashes at '${phase}': a clean failover`, async () => {
      const { t, a, b } = await mirroredWithOpenTransaction(11);
      const leader = b.cluster.controller.image.partition("t", 0)!.leader;
      await failoverWithFaultAt(t, b, phase, () => b.cluster.crashBroker(leader));
      b.cluster.startBroker(leader);
      await t.advance(2000);
      await expectCleanFailover(t, a, b);
    });

    it(`the data leader's disk fills at '${phase}': a clean failover once it has room`, async () => {
      const { t, a, b } = await mirroredWithOpenTransaction(12);
      const leader = b.cluster.controller.image.partition("t", 0)!.leader;
      await failoverWithFaultAt(t, b, phase, async () => {
        b.cluster.setDiskFull(leader, true);
        await t.advance(3000);
        b.cluster.setDiskFull(leader, false);
      });
      await t.advance(2000);
      await expectCleanFailover(t, a, b);
    });
  }
});

describe("the source becomes unreachable in the middle of a failover", () => {
  for (const phase of PHASES) {
    it(`every source broker crashes at '${phase}': the failover needs nothing from the source`, async () => {
      const { t, a, b } = await mirroredWithOpenTransaction(13);
      const sourceBatches = leaderBatches(a.cluster, "t", 0);
      await failoverWithFaultAt(t, b, phase, () => {
        for (const id of a.cluster.runningBrokers()) a.cluster.crashBroker(id);
      });
      await t.advance(2000);
      for (const id of [0, 1, 2]) a.cluster.startBroker(id);
      await t.advance(2000);
      expect(leaderBatches(a.cluster, "t", 0).map((x) => x.hex)).toEqual(sourceBatches.map((x) => x.hex));
      await expectCleanFailover(t, a, b);
    });
  }
});

describe("a re-add and a second removal racing a failover", () => {
  for (const phase of PHASES) {
    it(`re-added at '${phase}', caught up and removed again: one clean failover on the log`, async () => {
      const { t, a, b } = await mirroredWithOpenTransaction(15);
      b.cluster.setReplicationLatency(15);
      const removing = b.mirroring.admin.removeTopics("dr", "t").catch((e: unknown) => e);
      await advanceTo(t, b, phase);
      const readding = b.mirroring.admin.addTopics("dr", "t").catch((e: unknown) => e);
      const again = b.mirroring.admin.removeTopics("dr", "t").catch((e: unknown) => e);
      const readdAgain = b.mirroring.admin.addTopics("dr", "t").catch((e: unknown) => e);
      const results = await t.run(Promise.all([removing, readding, again, readdAgain]));
      // An add that finds the failover running is refused with what to do, never half applied.
      for (const r of results) {
        if (r instanceof Error) expect(r.message).toMatch(/in state STOPPING: START is accepted only in/);
      }
      await t.until(async () => {
        const state = (await b.mirroring.admin.describe("dr"))[0]?.state;
        return state === "STOPPED" || state === "MIRRORING";
      }, "the race settled");
      b.cluster.setReplicationLatency(0);
      if ((await b.mirroring.admin.describe("dr"))[0]?.state === "STOPPED") {
        await t.run(b.mirroring.admin.addTopics("dr", "t"));
      }
      await t.run(b.mirroring.whenCaughtUp("dr"));
      await t.run(b.mirroring.admin.removeTopics("dr", "t"));
      await t.run(b.mirroring.whenState("dr", "STOPPED", { timeoutMs: 300_000 }));
      await t.advance(2000);
      await expectCleanFailover(t, a, b);
    });
  }
});

describe("the coordinator's broker crashes at each step of a failover", () => {
  for (const phase of PHASES) {
    it(`crash of the __mirror_state leader at '${phase}': the next coordinator finishes cleanly`, async () => {
      const { t, a, b } = await mirroredWithOpenTransaction(16);
      const topicId = b.cluster.controller.image.topic("t")!.topicId;
      const statePartition = mirrorStatePartitionFor({ mirror: "dr", topicId, partition: 0 }, 4);
      const coordinator = b.cluster.controller.image.partition(MIRROR_STATE_TOPIC, statePartition)!.leader;
      await failoverWithFaultAt(t, b, phase, () => b.cluster.crashBroker(coordinator));
      b.cluster.startBroker(coordinator);
      await t.advance(2000);
      await expectCleanFailover(t, a, b);
    });
  }
});
