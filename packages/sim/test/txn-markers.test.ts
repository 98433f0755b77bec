import { describe, expect, it } from "vitest";
import {
  activePassive,
  batchesByOffset,
  leaderLog,
  MARKER_BOUND_MS,
  Simulation,
  transactionOutcome,
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

type OpenTxn = NonNullable<Simulation["openTxn"]>;

/** Crashes the followers of the open transaction's partition: its leader is left alone in the ISR. */
async function leaderAloneInIsr(sim: Simulation, open: OpenTxn) {
  const cluster = sim.node(open.node).cluster;
  const meta = () => cluster.controller.image.partition(open.topic, open.partition)!;
  const followers = meta().replicas.filter((id) => id !== meta().leader);
  for (const id of followers) cluster.crashBroker(id);
  await sim.world.time.advance(100);
  expect(meta().isr).toEqual([meta().leader]);
  return { cluster, followers, isr: () => meta().isr };
}

/** The bound runs from now: nothing is reported 100 ms before it ends, one transaction when it ends. */
async function reportedWhenTheBoundEnds(sim: Simulation) {
  await sim.world.time.advance(MARKER_BOUND_MS - 100);
  sim.checkTxnMarkers();
  expect(timely(sim)).toEqual([]);
  await sim.world.time.advance(100);
  sim.checkTxnMarkers();
  expect(timely(sim)).toHaveLength(1);
}

describe("committed transactions are not left open on their leaders", () => {
  it("a transaction recorded as committed but open on its leader is reported once the bound has passed", async () => {
    const sim = await Simulation.create(activePassive(), 6);
    const { open, producerId } = await openButRecordedCommitted(sim, (now) => now);
    sim.checkTxnMarkers();
    await reportedWhenTheBoundEnds(sim);
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
    // Still open 2 s after the disk had space: a marker lost for good, which the watch reports.
    await reportedWhenTheBoundEnds(sim);
  });

  it("a partition whose ISR is under min.insync.replicas gets the bound from the moment its ISR is back", async () => {
    // Its marker is refused while the ISR is under min.insync.replicas (Kafka's WriteTxnMarkers appends
    // with acks=all): it can only land after the ISR grows back.
    const sim = await Simulation.create(activePassive(), 9, { minInsyncReplicas: 2 });
    const { open } = await openButRecordedCommitted(sim, (now) => now);
    const { cluster, followers, isr } = await leaderAloneInIsr(sim, open);
    sim.checkTxnMarkers();
    await sim.world.time.advance(5 * MARKER_BOUND_MS);
    sim.checkTxnMarkers();
    expect(timely(sim)).toEqual([]);
    for (const id of followers) cluster.startBroker(id);
    for (let i = 0; i < 100 && isr().length < 2; i++) await sim.world.time.advance(10);
    expect(isr().length).toBeGreaterThanOrEqual(2);
    // Still open 2 s after the ISR was back: a marker lost for good, which the watch reports.
    await reportedWhenTheBoundEnds(sim);
  });

  it("a transaction committed through the workload while its ISR is under min.insync.replicas is committed once the ISR is back, and never reported", async () => {
    const sim = await Simulation.create(activePassive(), 10, { minInsyncReplicas: 2 });
    await txnBegin(sim, 0, 0);
    const { cluster, followers } = await leaderAloneInIsr(sim, sim.openTxn!);
    await txnEnd(sim, true);
    expect(sim.model.commits).toHaveLength(1);
    const c = sim.model.commits[0]!;
    for (let i = 0; i < 3; i++) {
      await sim.world.time.advance(MARKER_BOUND_MS);
      sim.checkTxnMarkers();
    }
    // Refused, not appended above the held high watermark.
    expect(transactionOutcome(cluster, c.topic, c.partition, c.producerId, c.offset)).toBe("OPEN");
    for (const id of followers) cluster.startBroker(id);
    for (let i = 0; i < 5; i++) {
      await sim.world.time.advance(MARKER_BOUND_MS);
      sim.checkTxnMarkers();
    }
    expect(transactionOutcome(cluster, c.topic, c.partition, c.producerId, c.offset)).toBe("COMMITTED");
    expect(timely(sim)).toEqual([]);
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
