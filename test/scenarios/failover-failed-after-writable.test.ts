import { ControlRecordType, controlTypeOf } from "@cluster-mirror/protocol";
import { describe, expect, it } from "vitest";
import { mirroredWithOpenTransaction } from "./failover-faults-helpers";
import { leaderBatches } from "./helpers";

/**
 * A STOPPED partition failed again after its topic became writable (a fetch error delivered late, say):
 * FAILED's retry runs STOPPING again, whose first step sets the read-only flag once more, and ends in
 * STOPPED. That STOPPED's step must not take the local producers' writes for a log that lost the
 * failover's barrier: no ABORT marker over a live local transaction, no second PID reset.
 */
/**
 * `t` failed over on b (STOPPED, writable), then written by local producers: an idempotent one, and a
 * transaction left open. Returns the leader's batch count after them.
 */
async function writableWithLocalWrites() {
  const { t, b } = await mirroredWithOpenTransaction(3);
  await t.run(b.mirroring.admin.removeTopics("dr", "t"));
  await t.run(b.mirroring.whenState("dr", "STOPPED"));
  const image = () => b.cluster.controller.image.partition("t", 0)!;
  expect(image().mirrorReadOnly).toBe(false);
  const idem = b.kafka.producer({ idempotent: true });
  await t.run(idem.connect());
  await t.run(idem.send({ topic: "t", messages: [{ value: "local-1" }], acks: -1 }));
  const local = b.kafka.producer({ transactionalId: "local-tx" });
  await t.run(local.connect());
  const tx = await t.run(local.transaction());
  await t.run(tx.send({ topic: "t", messages: [{ value: "local-tx" }] }));
  const before = leaderBatches(b.cluster, "t", 0).length;
  const topicId = b.cluster.controller.image.topic("t")!.topicId;
  /** A fetch error delivered late fails the STOPPED partition. */
  const failLate = () =>
    b.mirroring.coordinators.partitionFailed(
      { mirror: "dr", topic: "t", topicId, partition: 0 },
      "a fetch error delivered late",
      true,
    );
  /** STOPPED again, writable, the local producers' writes kept: no ABORT marker, no second PID reset. */
  const expectLocalWritesKept = async () => {
    await t.advance(2000);
    expect(image().mirrorReadOnly).toBe(false);
    const after = leaderBatches(b.cluster, "t", 0).slice(before);
    const kinds = after.map((x) => (x.batch.isControl ? controlTypeOf(x.batch) : "data"));
    expect(kinds).not.toContain(ControlRecordType.ABORT);
    expect(kinds).not.toContain(ControlRecordType.MIRROR_PID_RESET);
    // The local transaction commits and its records are read as committed; the idempotent producer goes on.
    await t.run(tx.commit());
    await t.run(idem.send({ topic: "t", messages: [{ value: "local-2" }], acks: -1 }));
    const log = b.cluster.leaderFor("t", 0).replica("t", 0)!.log;
    expect(log.lastStableOffset).toBe(log.logEndOffset);
    const tail = leaderBatches(b.cluster, "t", 0).slice(before);
    expect(tail.map((x) => (x.batch.isControl ? controlTypeOf(x.batch) : "data"))).toEqual([
      ControlRecordType.COMMIT,
      "data",
    ]);
    const [row] = await b.mirroring.admin.describe("dr");
    expect(row?.state).toBe("STOPPED");
  };
  return { t, b, image, before, failLate, expectLocalWritesKept };
}

describe("a STOPPED topic that fails again once local producers write to it", () => {
  it("keeps the local producers' transactions and producer state", async () => {
    const { t, b, failLate, expectLocalWritesKept } = await writableWithLocalWrites();
    failLate();
    await t.run(b.mirroring.whenState("dr", "FAILED"));
    await t.run(b.mirroring.whenState("dr", "STOPPED", { timeoutMs: 300_000 }));
    await expectLocalWritesKept();
  });

  it("the retry's STOPPING meets a controller election: it waits at its bump, which sets the flag before the markers", async () => {
    const { t, b, image, before, failLate, expectLocalWritesKept } = await writableWithLocalWrites();
    const seen: string[] = [];
    b.mirroring.subscribeTransitions((x) => seen.push(`${x.previous.state}->${x.record.state}`));
    const controller = b.cluster.controller;
    controller.setAvailable(false);
    failLate();
    await t.run(b.mirroring.whenState("dr", "FAILED"));
    await t.until(() => seen.includes("FAILED->STOPPING"), "the retry's STOPPING");
    // The controller away: STOPPING's flag is not set, and nothing after it ran (no marker, no PID reset).
    for (let ms = 0; ms < 5_000; ms += 100) {
      await t.advance(100);
      expect(b.mirroring.coordinators.describe("dr")[0]?.state).toBe("STOPPING");
      expect(image().mirrorReadOnly).toBe(false);
      expect(
        leaderBatches(b.cluster, "t", 0)
          .slice(before)
          .some((x) => x.batch.isControl),
      ).toBe(false);
    }
    // Once it is back, the flag is set (asked of the controller) before the failover's steps write anything.
    const flagSets: number[] = [];
    const setMirrorReadOnly = controller.setMirrorReadOnly.bind(controller);
    controller.setMirrorReadOnly = (topic, partition, readOnly) => {
      setMirrorReadOnly(topic, partition, readOnly);
      if (readOnly) flagSets.push(leaderBatches(b.cluster, "t", 0).length - before);
    };
    controller.setAvailable(true);
    const back = t.clock.now();
    await t.run(b.mirroring.whenState("dr", "STOPPED"));
    expect(flagSets).toEqual([0]);
    expect(t.clock.now() - back).toBeLessThan(1_500);
    // One FAILED, the late fetch error's: not a second one for the refused flag.
    expect(seen).toEqual(["STOPPED->FAILED", "FAILED->STOPPING", "STOPPING->STOPPED"]);
    await expectLocalWritesKept();
  });
});
