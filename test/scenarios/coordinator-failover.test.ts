import { MIRROR_STATE_TOPIC, mirrorStatePartitionFor } from "@cluster-mirror/mirror";
import { ControlRecordType, controlTypeOf } from "@cluster-mirror/protocol";
import { describe, expect, it } from "vitest";
import { leaderBatches, topology } from "./helpers";

describe("the coordinator's broker crashes in the middle of a failover", () => {
  const statesAtCrash: string[] = [];
  // -1: the crash comes in the same step as the removal, before any scheduled task ran.
  for (const delayMs of [-1, 0, 1, 5, 10, 20, 40]) {
    it(`the new coordinator finishes STOPPING with one ABORT and one PID reset (crash after ${delayMs} ms)`, async () => {
      const t = topology(["a", "b"], { seed: 7 });
      const a = t.node("a");
      const b = t.node("b");
      await t.run(
        a.kafka.admin().createTopics({ topics: [{ topic: "t", numPartitions: 1, replicationFactor: 3 }] }),
      );
      const txp = a.kafka.producer({ transactionalId: "open-at-failover" });
      await t.run(txp.connect());
      const tx = await t.run(txp.transaction());
      await t.run(tx.send({ topic: "t", messages: [{ value: "in-flight" }] }));
      await t.run(b.mirroring.admin.createMirror("dr", { "bootstrap.servers": "a:9092" }));
      await t.run(b.mirroring.admin.addTopics("dr", "t"));
      await t.run(b.mirroring.whenCaughtUp("dr"));

      const topicId = b.cluster.controller.image.topic("t")!.topicId;
      const statePartition = mirrorStatePartitionFor({ mirror: "dr", topicId, partition: 0 }, 4);
      const coordinatorBroker = b.cluster.controller.image.partition(
        MIRROR_STATE_TOPIC,
        statePartition,
      )!.leader;

      const removing = b.mirroring.admin.removeTopics("dr", "t").catch((e: unknown) => e);
      if (delayMs >= 0) await t.advance(delayMs);
      statesAtCrash.push(b.mirroring.coordinators.describe("dr")[0]?.state ?? "none");
      b.cluster.crashBroker(coordinatorBroker);
      await t.run(removing);
      await t.run(b.mirroring.whenState("dr", "STOPPED", { timeoutMs: 120_000 }));
      b.cluster.startBroker(coordinatorBroker);
      await t.advance(1000);

      const kinds = leaderBatches(b.cluster, "t", 0).map((x) =>
        x.batch.isControl ? controlTypeOf(x.batch) : "data",
      );
      expect(kinds.filter((k) => k === ControlRecordType.ABORT)).toHaveLength(1);
      expect(kinds.filter((k) => k === ControlRecordType.MIRROR_PID_RESET)).toHaveLength(1);
      expect(kinds.at(-1)).toBe(ControlRecordType.MIRROR_PID_RESET);
      const log = b.cluster.leaderFor("t", 0).replica("t", 0)!.log;
      expect(log.lastStableOffset).toBe(log.highWatermark);
      // Every replica ends with the same bytes.
      const leaderHex = leaderBatches(b.cluster, "t", 0).map((x) => x.hex);
      for (const id of b.cluster.runningBrokers()) {
        const r = b.cluster.broker(id)!.replica("t", 0);
        if (r) expect([...r.log.batches()].map((x) => x.buffer.toString("hex"))).toEqual(leaderHex);
      }
    });
  }

  it("the crashes above hit the failover before, during and after STOPPING", () => {
    expect(statesAtCrash).toContain("MIRRORING");
    expect(statesAtCrash).toContain("STOPPING");
    expect(statesAtCrash).toContain("STOPPED");
  });
});
