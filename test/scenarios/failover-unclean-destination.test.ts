import type { KafkaCluster } from "@cluster-mirror/cluster";
import { MIRROR_STATE_TOPIC } from "@cluster-mirror/mirror";
import {
  ControlRecordType,
  controlTypeOf,
  decodeMirrorStateRecord,
  decodeRecords,
  type MirrorPartitionStateValue,
} from "@cluster-mirror/protocol";
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

  it("a coordinator change between the barrier and STOPPED's step: the new coordinator checks the barrier too", async () => {
    // Six brokers: __mirror_state's replicas (3, 4, 5) hold no replica of t (0, 1, 2).
    const { t, a, b } = await mirroredWithOpenTransaction(1, { brokers: 6, statePartitions: 1 });
    const image = () => b.cluster.controller.image.partition("t", 0)!;
    const stateImage = () => b.cluster.controller.image.partition(MIRROR_STATE_TOPIC, 0)!;
    const leader = image().leader;
    const [f1, f2] = image().replicas.filter((r) => r !== leader) as [number, number];
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
    const coordinator = stateImage().leader;
    expect(stateImage().replicas.filter((r) => image().replicas.includes(r))).toEqual([]);
    b.cluster.setReplicationLatency(15);
    const removing = b.mirroring.admin.removeTopics("dr", "t").catch((e: unknown) => e);
    await advanceTo(t, b, "markers replicated");
    // t's in-sync replicas go down; f2, without the markers, is elected uncleanly.
    b.cluster.crashBroker(leader);
    b.cluster.crashBroker(f1);
    b.cluster.setReachable(f2, true);
    // The coordinator's broker goes down once a follower of __mirror_state holds the STOPPED record, before
    // the coordinator learns it committed: the next coordinator loads STOPPED and runs STOPPED's step.
    for (let ms = 0; !followerHoldsStopped(b.cluster, coordinator); ms++) {
      expect(ms).toBeLessThan(10_000);
      expect(b.mirroring.coordinators.describe("dr")[0]?.state).toBe("STOPPING");
      await t.advance(1);
    }
    b.cluster.crashBroker(coordinator);
    await t.run(removing);
    await t.run(b.mirroring.whenState("dr", "STOPPED", { timeoutMs: 300_000 }));
    expect(image().leader).toBe(f2);
    expect(stateImage().leader).not.toBe(coordinator);
    b.cluster.setReplicationLatency(0);
    await t.advance(2000);
    const kinds = leaderBatches(b.cluster, "t", 0).map((x) =>
      x.batch.isControl ? controlTypeOf(x.batch) : "data",
    );
    expect(kinds.filter((k) => k === ControlRecordType.ABORT)).toHaveLength(1);
    expect(kinds.at(-1)).toBe(ControlRecordType.MIRROR_PID_RESET);
    const log = b.cluster.leaderFor("t", 0).replica("t", 0)!.log;
    expect(log.lastStableOffset).toBe(log.logEndOffset);
    expect(b.cluster.controller.image.partition("t", 0)!.mirrorReadOnly).toBe(false);
  });
});

/** Whether a running follower of `__mirror_state-0` (not `leader`) holds a STOPPED record. */
function followerHoldsStopped(cluster: KafkaCluster, leader: number): boolean {
  for (const id of cluster.runningBrokers()) {
    if (id === leader) continue;
    const replica = cluster.broker(id)?.replica(MIRROR_STATE_TOPIC, 0);
    for (const batch of replica?.log.batches() ?? []) {
      if (batch.isControl) continue;
      for (const r of decodeRecords(batch)) {
        if (r.key === null) continue;
        const d = decodeMirrorStateRecord(r.key, r.value);
        if (
          d.key.kind === "MirrorPartitionState" &&
          (d.value as MirrorPartitionStateValue | null)?.state === "STOPPED"
        )
          return true;
      }
    }
  }
  return false;
}
