import type { KafkaCluster } from "@cluster-mirror/cluster";
import { MIRROR_STATE_TOPIC } from "@cluster-mirror/mirror";
import {
  ControlRecordType,
  decodeMirrorStateRecord,
  decodeRecords,
  type MirrorPartitionStateValue,
  type RecordBatch,
} from "@cluster-mirror/protocol";
import { describe, expect, it } from "vitest";
import {
  advanceTo,
  expectOneBarrierLast,
  expectWritable,
  failoverWithFaultAt,
  mirroredWithOpenTransaction,
  PHASES,
} from "./failover-faults-helpers";
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
      const m = await mirroredWithFollowerOutOfIsr(14, 5);
      const stateReplicas = m.stateImage().replicas;
      expect(stateReplicas.filter((r) => !m.image().replicas.includes(r)).length).toBeGreaterThan(0);
      await failoverWithFaultAt(m.t, m.b, phase, () => electOutOfIsr(m));
      await expectBarrierOnElected(m);
    });
  }

  it("a coordinator change between the barrier and STOPPED's step: the new coordinator checks the barrier too", async () => {
    // Six brokers: __mirror_state's replicas (3, 4, 5) hold no replica of t (0, 1, 2).
    const m = await mirroredWithFollowerOutOfIsr(1, 6);
    const { t, b } = m;
    const coordinator = m.stateImage().leader;
    expect(m.stateImage().replicas.filter((r) => m.image().replicas.includes(r))).toEqual([]);
    await failoverWithFaultAt(t, b, "markers replicated", async () => {
      electOutOfIsr(m);
      // The coordinator's broker goes down once a follower of __mirror_state holds the STOPPED record, before
      // the coordinator learns it committed: the next coordinator loads STOPPED and runs STOPPED's step.
      for (let ms = 0; !followerHoldsStopped(b.cluster, coordinator); ms++) {
        expect(ms).toBeLessThan(10_000);
        expect(b.mirroring.coordinators.describe("dr")[0]?.state).toBe("STOPPING");
        await t.advance(1);
      }
      b.cluster.crashBroker(coordinator);
    });
    expect(m.stateImage().leader).not.toBe(coordinator);
    await expectBarrierOnElected(m);
  });

  it("no leader at STOPPED's step, then the out-of-sync replica comes back and is elected uncleanly: read-only until it holds the markers", async () => {
    const m = await mirroredWithFollowerOutOfIsr(14, 5);
    const { t, b, leader, f1, f2 } = m;
    b.cluster.setReplicationLatency(15);
    const removing = b.mirroring.admin.removeTopics("dr", "t").catch((e: unknown) => e);
    await advanceTo(t, b, "markers replicated");
    // Every replica of t down, f2 first (no running replica is left to elect uncleanly when the ISR goes):
    // the STOPPED record commits (on __mirror_state's other brokers) with no leader.
    b.cluster.crashBroker(f2);
    b.cluster.crashBroker(leader);
    b.cluster.crashBroker(f1);
    await t.run(removing);
    b.cluster.setReplicationLatency(0);
    await t.until(() => b.mirroring.coordinators.describe("dr")[0]?.state === "FAILED", "dr FAILED");
    const [failed] = b.mirroring.coordinators.describe("dr");
    expect(failed?.errorMessage).toMatch(/no running leader/);
    expect(m.image().leader).toBe(-1);
    expect(m.image().mirrorReadOnly).toBe(true);

    // f2 comes back, without the markers: the controller elects it uncleanly at once (Kafka's
    // handleBrokerUnfenced), and the topic stays read-only until the retried failover wrote them on it.
    b.cluster.setReachable(f2, true);
    b.cluster.startBroker(f2);
    expect(m.image().leader).toBe(f2);
    const pidReset = (x: RecordBatch) => x.isControl && x.controlType === ControlRecordType.MIRROR_PID_RESET;
    const onF2 = () => leaderBatches(b.cluster, "t", 0).map((x) => x.batch);
    expect(onF2().some(pidReset)).toBe(false);
    expect(m.image().mirrorReadOnly).toBe(true);
    for (let ms = 0; b.mirroring.coordinators.describe("dr")[0]?.state !== "STOPPED"; ms += 10) {
      expect(ms).toBeLessThan(300_000);
      // Writable only once f2 ends with the failover's PID reset.
      if (m.image().mirrorReadOnly === false) expect(pidReset(onF2().at(-1)!)).toBe(true);
      await t.advance(10);
    }
    await expectBarrierOnElected(m);
  });
});

/**
 * `t` mirrored (see `mirroredWithOpenTransaction`, `__mirror_state` with one partition) on `brokers`
 * destination brokers, unclean leader election enabled for `t` on b, and `f2`, one of t's followers, out
 * of the ISR: it missed what the mirror copied afterwards (a second open transaction too).
 */
async function mirroredWithFollowerOutOfIsr(seed: number, brokers: number) {
  const { t, a, b } = await mirroredWithOpenTransaction(seed, { brokers, statePartitions: 1 });
  const image = () => b.cluster.controller.image.partition("t", 0)!;
  const stateImage = () => b.cluster.controller.image.partition(MIRROR_STATE_TOPIC, 0)!;
  const leader = image().leader;
  const [f1, f2] = image().replicas.filter((r) => r !== leader) as [number, number];
  b.cluster.controller.incrementalAlterConfigs({ type: "topic", name: "t" }, [
    { name: "unclean.leader.election.enable", op: "SET", value: "true" },
  ]);
  b.cluster.setReachable(f2, false);
  const more = a.kafka.producer({ transactionalId: "open-later" });
  await t.run(more.connect());
  const tx = await t.run(more.transaction());
  await t.run(tx.send({ topic: "t", messages: [{ value: "in-flight-2" }] }));
  await t.run(b.mirroring.whenCaughtUp("dr"));
  await t.advance(60_000);
  expect(image().isr).not.toContain(f2);
  return { t, a, b, image, stateImage, leader, f1, f2 };
}

type FollowerOutOfIsr = Awaited<ReturnType<typeof mirroredWithFollowerOutOfIsr>>;

/** t's in-sync replicas go down and `f2` comes back: f2, without the failover's markers, is elected uncleanly. */
function electOutOfIsr({ b, leader, f1, f2 }: FollowerOutOfIsr) {
  b.cluster.crashBroker(leader);
  b.cluster.crashBroker(f1);
  b.cluster.setReachable(f2, true);
}

/** The failover finished on `f2`, elected uncleanly: f2 got the markers itself and `t` is writable. */
async function expectBarrierOnElected({ t, a, b, image, f2 }: FollowerOutOfIsr) {
  expect(image().leader).toBe(f2);
  await t.advance(2000);
  // f2 held the first open transaction only: aborted once; one PID reset, last.
  const onB = expectOneBarrierLast(b);
  expect(image().mirrorReadOnly).toBe(false);
  // What f2 kept of the source is the source's, byte for byte, at its offsets.
  const aByOffset = new Map(leaderBatches(a.cluster, "t", 0).map((x) => [x.offset, x.hex]));
  for (const x of onB.slice(0, -2)) expect(x.hex).toBe(aByOffset.get(x.offset));
  await expectWritable(t, b);
}

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
