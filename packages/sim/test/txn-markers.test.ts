import { describe, expect, it } from "vitest";
import {
  activePassive,
  batchesByOffset,
  leaderLog,
  MARKER_BOUND_MS,
  Simulation,
  txnBegin,
  txnEnd,
} from "../src/index";

const timely = (sim: Simulation) => sim.violations.filter((v) => v.invariant === "txn-marker-timely");

/**
 * Begins a transaction and records it as committed at `decidedAt` while it stays open on its leader, as if
 * `commit()` had returned but the marker never reached the leader. Returns the transaction and its producer.
 */
async function openButRecordedCommitted(sim: Simulation, decidedAt: (now: number) => number) {
  await txnBegin(sim, 0, 0);
  const open = sim.openTxn!;
  const log = leaderLog(sim.node(open.node).cluster, open.topic, open.partition)!;
  const producerId = batchesByOffset(log).get(open.offset)!.producerId;
  sim.model.commits.push({
    node: open.node,
    topic: open.topic,
    partition: open.partition,
    producerId,
    offset: open.offset,
    decidedAt: decidedAt(sim.world.clock.now()),
  });
  return { open, producerId };
}

describe("committed transactions are not left open on their leaders", () => {
  it("a transaction recorded as committed but open on its leader is reported once the bound has passed", async () => {
    const sim = await Simulation.create(activePassive(), 6);
    const { open, producerId } = await openButRecordedCommitted(sim, (now) => now);
    sim.checkTxnMarkers();
    await sim.world.time.advance(MARKER_BOUND_MS - 100);
    sim.checkTxnMarkers();
    expect(timely(sim)).toEqual([]);
    await sim.world.time.advance(100);
    sim.checkTxnMarkers();
    expect(timely(sim).map((v) => v.message)).toEqual([
      expect.stringContaining(`${open.topic}-${open.partition}: the transaction of producer ${producerId}`),
    ]);
  });

  it("a leader first seen after the commit gets the bound from the check that first sees it", async () => {
    const sim = await Simulation.create(activePassive(), 7);
    await openButRecordedCommitted(sim, (now) => now - 10 * MARKER_BOUND_MS);
    // Seen first now: a leader the watch has not seen before counts from this check.
    sim.checkTxnMarkers();
    expect(timely(sim)).toEqual([]);
    await sim.world.time.advance(MARKER_BOUND_MS);
    sim.checkTxnMarkers();
    expect(timely(sim)).toHaveLength(1);
  });

  it("a leader whose disk is full gets the bound from the moment its disk has space again", async () => {
    // The embedded broker keeps leading on a full disk, whose appends (the marker's too) fail until it has
    // space: the coordinator's retry can only land after that.
    const sim = await Simulation.create(activePassive(), 9);
    const { open } = await openButRecordedCommitted(sim, (now) => now);
    const cluster = sim.node(open.node).cluster;
    const leader = cluster.controller.image.partition(open.topic, open.partition)!.leader;
    cluster.setDiskFull(leader, true);
    sim.checkTxnMarkers();
    await sim.world.time.advance(5 * MARKER_BOUND_MS);
    sim.checkTxnMarkers();
    expect(timely(sim)).toEqual([]);
    cluster.setDiskFull(leader, false);
    await sim.world.time.advance(MARKER_BOUND_MS - 100);
    sim.checkTxnMarkers();
    expect(timely(sim)).toEqual([]);
    // Still open 2 s after the disk had space: a marker lost for good, which the watch reports.
    await sim.world.time.advance(100);
    sim.checkTxnMarkers();
    expect(timely(sim)).toHaveLength(1);
  });

  it("a transaction committed through the workload is never reported", async () => {
    const sim = await Simulation.create(activePassive(), 8);
    await txnBegin(sim, 0, 0);
    await txnEnd(sim, true);
    expect(sim.model.commits).toHaveLength(1);
    for (let i = 0; i < 5; i++) {
      await sim.world.time.advance(MARKER_BOUND_MS);
      sim.checkTxnMarkers();
    }
    expect(timely(sim)).toEqual([]);
  });
});
