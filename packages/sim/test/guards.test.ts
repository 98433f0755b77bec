import { encodeRecordBatch } from "@cluster-mirror/protocol";
import { describe, expect, it } from "vitest";
import {
  activePassive,
  corruptReplica,
  leaderLog,
  produce,
  Simulation,
  setControllerAvailable,
} from "../src/index";

function probeBatch(now: number): Buffer {
  return encodeRecordBatch({
    baseTimestamp: BigInt(now),
    records: [
      { attributes: 0, offsetDelta: 0, timestampDelta: 0n, key: null, value: Buffer.from("x"), headers: [] },
    ],
  });
}

describe("broker guards and the committed prefix", () => {
  it("a produce appended to a MIRRORING partition is a read-only violation, whoever sends it", async () => {
    const sim = await Simulation.create(activePassive(), 3);
    const b = sim.node("b").cluster;
    const leader = b.controller.image.partition("orders", 0)!.leader;
    // Make the leader wrongly writable (as a restarted replica that lost its flag would be).
    b.broker(leader)!.setReadOnly("orders", 0, false);
    await sim.world.time.run(
      b.broker(leader)!.produce({ topic: "orders", partition: 0, batch: probeBatch(b.clock.now()), acks: 1 }),
    );
    const readOnly = sim.violations.filter((v) => v.invariant === "read-only").map((v) => v.message);
    // The clear itself, as the metadata record is published, then the produce it let in.
    expect(readOnly[0]).toContain(
      "the read-only flag was cleared while mirror.name=b-from-a asks for mirroring",
    );
    expect(readOnly.some((m) => m.includes("appended a produce") && m.includes("MIRRORING"))).toBe(true);
  });

  it("a mirror truncation below the high watermark is seen when it happens, even if the data comes back", async () => {
    const sim = await Simulation.create(activePassive(), 4);
    await produce(sim, 0, 0, 3);
    await sim.world.time.advance(2_000);
    sim.observePrefixes();
    const b = sim.node("b").cluster;
    expect(leaderLog(b, "orders", 0)!.highWatermark).toBeGreaterThan(0n);
    const leader = b.controller.image.partition("orders", 0)!.leader;
    b.broker(leader)!.truncateFullyAndStartAt("orders", 0, 0n);
    await sim.world.time.advance(5_000);
    expect(sim.violations.map((v) => v.invariant)).toContain("committed-prefix");
  });

  it("a mirror truncation refused before it cut (no controller to record it) is not taken as made; one owed is", async () => {
    // A failback's PREPARING cut of a's orders-1 during a controller failover: the broker refused it before
    // cutting, and the model took the abandoned transaction on it for cut away (failback regression "a
    // failback's truncation refused during a controller failover").
    const sim = await Simulation.create(activePassive(), 4);
    await produce(sim, 0, 0, 3);
    await sim.world.time.advance(2_000);
    const a = sim.node("a").cluster;
    const end = leaderLog(a, "orders", 0)!.logEndOffset;
    expect(end).toBeGreaterThan(0n);
    const leader = a.broker(a.controller.image.partition("orders", 0)!.leader)!;
    const cuts = () => sim.model.truncations.filter((t) => t.node === "a" && t.topic === "orders");
    setControllerAvailable(a, false);
    expect(() => leader.truncateFullyAndStartAt("orders", 0, 0n)).toThrow(/controller is failing over/);
    expect(() => leader.truncateTo("orders", 0, 0n)).toThrow(/controller is failing over/);
    expect(leaderLog(a, "orders", 0)!.logEndOffset).toBe(end);
    expect(cuts()).toEqual([]);
    setControllerAvailable(a, true);
    // Recorded by the controller, then failed on a full disk before cutting: every replica owes the cut
    // then (the leader too, made once it can), so it counts as made.
    a.setDiskFull(leader.brokerId, true);
    expect(() => leader.truncateFullyAndStartAt("orders", 0, 1n)).toThrow();
    expect(leaderLog(a, "orders", 0)!.logEndOffset).toBe(end);
    expect(cuts().map((t) => t.offset)).toEqual([1n]);
  });

  it("a high watermark that moves over a batch an in-sync follower holds differently is seen as it moves", async () => {
    const sim = await Simulation.create(activePassive(), 6);
    await produce(sim, 0, 0, 1);
    await sim.world.time.advance(2_000);
    const a = sim.node("a").cluster;
    const leaderId = a.controller.image.partition("orders", 0)!.leader;
    const leader = a.broker(leaderId)!;
    const followerId = a.controller.image.partition("orders", 0)!.isr.find((id) => id !== leaderId)!;
    const follower = a.broker(followerId)!.replica("orders", 0)!.log;
    // Followers fetch 500 ms after being woken: the one that copies the next batch reports it 500 ms later.
    a.setReplicationLatency(500);
    const end = leader.replica("orders", 0)!.log.logEndOffset;
    await sim.world.time.run(
      leader.produce({ topic: "orders", partition: 0, batch: probeBatch(a.clock.now()), acks: 1 }),
    );
    await sim.world.time.advance(700);
    expect(follower.logEndOffset).toBe(end + 1n);
    expect(leader.replica("orders", 0)!.log.highWatermark).toBe(end);
    const stored = [...follower.batches()].at(-1)!;
    // The follower's copy of it is replaced by other records at the same offset and epoch, as a cut the
    // follower missed would leave it, before its next fetch reports that log end.
    follower.truncateTo(end);
    follower.appendAsFollower(
      encodeRecordBatch({
        baseOffset: end,
        partitionLeaderEpoch: stored.partitionLeaderEpoch,
        baseTimestamp: BigInt(a.clock.now()),
        records: [
          {
            attributes: 0,
            offsetDelta: 0,
            timestampDelta: 0n,
            key: null,
            value: Buffer.from("y"),
            headers: [],
          },
        ],
      }),
    );
    expect(sim.violations.map((v) => v.invariant)).not.toContain("replicas-agree");
    await sim.world.time.advance(1_000);
    expect(leader.replica("orders", 0)!.log.highWatermark).toBe(end + 1n);
    const seen = sim.violations.find((v) => v.invariant === "replicas-agree");
    expect(seen?.message).toContain(`in-sync broker ${followerId}'s batch at offset ${end}`);
  });

  it("corruptReplica flips a stored byte that the restarted broker's recovery finds", async () => {
    const sim = await Simulation.create(activePassive(), 5);
    await produce(sim, 0, 0, 2);
    await produce(sim, 0, 0, 2);
    await sim.world.time.advance(2_000);
    const a = sim.node("a").cluster;
    const leader = a.controller.image.partition("orders", 0)!.leader;
    await corruptReplica(sim, 0, 0, 0);
    expect(sim.steps.at(-1)).toContain(`on broker ${leader}`);
    const recovery = a.broker(leader)!.replica("orders", 0)!.log.recovery;
    expect(recovery.truncatedTail).toBeDefined();
  });
});
