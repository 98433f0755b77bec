import { MIRROR_STATE_TOPIC } from "@cluster-mirror/mirror";
import { ControlRecordType, controlTypeOf } from "@cluster-mirror/protocol";
import { describe, expect, it } from "vitest";
import { advanceTo, mirroredWithOpenTransaction, PHASES } from "./failover-faults-helpers";
import { leaderBatches } from "./helpers";

/**
 * An unclean election on the destination while a failover runs: the replica elected gets the failover's
 * ABORT markers and PID reset itself before the topic becomes writable, whether the election came before
 * the old ISR acknowledged them (STOPPING writes them again) or after, while the STOPPED record is written
 * (STOPPED's step writes them again before it clears the read-only flag).
 */
describe("an unclean election on the destination in the middle of a failover", () => {
  for (const phase of PHASES.slice(0, 3)) {
    it(`a replica out of the ISR is elected at '${phase}': it gets the markers itself`, async () => {
      // Five brokers: __mirror_state keeps an in-sync replica on a broker that holds no replica of t.
      const { t, a, b } = await mirroredWithOpenTransaction(14, { brokers: 5, statePartitions: 1 });
      const image = () => b.cluster.controller.image.partition("t", 0)!;
      const leader = image().leader;
      const [f1, f2] = image().replicas.filter((r) => r !== leader) as [number, number];
      const stateReplicas = b.cluster.controller.image.partition(MIRROR_STATE_TOPIC, 0)!.replicas;
      expect(stateReplicas.filter((r) => !image().replicas.includes(r)).length).toBeGreaterThan(0);
      b.cluster.controller.incrementalAlterConfigs({ type: "topic", name: "t" }, [
        { name: "unclean.leader.election.enable", op: "SET", value: "true" },
      ]);
      // f2 leaves the ISR while the mirror copies more of the source (a second open transaction too).
      b.cluster.setReachable(f2, false);
      const more = a.kafka.producer({ transactionalId: "open-later" });
      await t.run(more.connect());
      const tx = await t.run(more.transaction());
      await t.run(tx.send({ topic: "t", messages: [{ value: "in-flight-2" }] }));
      await t.run(b.mirroring.whenCaughtUp("dr"));
      await t.advance(60_000);
      expect(image().isr).not.toContain(f2);
      b.cluster.setReplicationLatency(15);
      const removing = b.mirroring.admin.removeTopics("dr", "t").catch((e: unknown) => e);
      await advanceTo(t, b, phase);
      b.cluster.crashBroker(leader);
      b.cluster.crashBroker(f1);
      b.cluster.setReachable(f2, true);
      await t.run(removing);
      await t.run(b.mirroring.whenState("dr", "STOPPED", { timeoutMs: 300_000 }));
      expect(image().leader).toBe(f2);
      b.cluster.setReplicationLatency(0);
      await t.advance(2000);
      const onB = leaderBatches(b.cluster, "t", 0);
      const kinds = onB.map((x) => (x.batch.isControl ? controlTypeOf(x.batch) : "data"));
      // f2 held the first open transaction only: aborted once; one PID reset, last.
      expect(kinds.filter((k) => k === ControlRecordType.ABORT)).toHaveLength(1);
      expect(kinds.filter((k) => k === ControlRecordType.MIRROR_PID_RESET)).toHaveLength(1);
      expect(kinds.at(-1)).toBe(ControlRecordType.MIRROR_PID_RESET);
      const log = b.cluster.leaderFor("t", 0).replica("t", 0)!.log;
      expect(log.lastStableOffset).toBe(log.logEndOffset);
      // What f2 kept of the source is the source's, byte for byte, at its offsets.
      const aByOffset = new Map(leaderBatches(a.cluster, "t", 0).map((x) => [x.offset, x.hex]));
      for (const x of onB.slice(0, -2)) expect(x.hex).toBe(aByOffset.get(x.offset));
      const idem = b.kafka.producer({ idempotent: true });
      await t.run(idem.connect());
      await t.run(idem.send({ topic: "t", messages: [{ value: "local" }], acks: -1 }));
      const local = b.kafka.producer({ transactionalId: "local-tx" });
      await t.run(local.connect());
      const ltx = await t.run(local.transaction());
      await t.run(ltx.send({ topic: "t", messages: [{ value: "local-tx" }] }));
      await t.run(ltx.commit());
      const after = b.cluster.leaderFor("t", 0).replica("t", 0)!.log;
      expect(after.lastStableOffset).toBe(after.logEndOffset);
    });
  }
});
