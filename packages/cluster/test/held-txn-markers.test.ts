import { ControlRecordType, controlTypeOf } from "@cluster-mirror/protocol";
import { describe, expect, it } from "vitest";
import { clientCluster } from "./clients-helpers";
import { batchesOf } from "./helpers";

/** A transaction open on t-0 (and u-0), committed while t-0 is read-only: t-0's marker is held. */
async function heldCommit() {
  const t = clientCluster();
  t.cluster.controller.createTopic({ name: "t", replicaAssignment: [[0, 1, 2]] });
  t.cluster.controller.createTopic({ name: "u", replicaAssignment: [[0, 1, 2]] });
  const producer = t.kafka.producer({ transactionalId: "tx" });
  await producer.connect();
  const txn = await t.run(producer.transaction());
  await t.run(txn.send({ topic: "t", messages: [{ value: "t1" }] }));
  await t.run(txn.send({ topic: "u", messages: [{ value: "u1" }] }));
  t.cluster.controller.setMirrorReadOnly("t", 0, true);
  t.settle();
  await t.run(txn.commit());
  expect(t.cluster.heldTxnMarkers.on({ topic: "t", partition: 0 })).toHaveLength(1);
  const kinds = () => batchesOf(t.cluster, 0, "t").map((x) => (x.isControl ? controlTypeOf(x) : "data"));
  return { t, kinds };
}

describe("end markers held back from a read-only partition", () => {
  it("written by the housekeeping pass once the partition is writable again", async () => {
    const { t, kinds } = await heldCommit();
    t.settle(15_000);
    expect(kinds()).toEqual(["data"]);
    t.cluster.controller.setMirrorReadOnly("t", 0, false);
    t.settle(15_000);
    expect(kinds()).toEqual(["data", ControlRecordType.COMMIT]);
    // Released once the pass after the write found the transaction closed.
    t.settle(15_000);
    expect(t.cluster.heldTxnMarkers.all()).toEqual([]);
    expect(kinds()).toEqual(["data", ControlRecordType.COMMIT]);
  });

  it("dropped when the topic is deleted, and never written into a topic created again under the name", async () => {
    const { t, kinds } = await heldCommit();
    t.cluster.controller.deleteTopic("t");
    t.cluster.controller.createTopic({ name: "t", replicaAssignment: [[0, 1, 2]] });
    t.settle();
    // The transactional id's next producer (the same producer id) opens a transaction on the new topic at
    // the offset the held one had.
    const producer = t.kafka.producer({ transactionalId: "tx" });
    await producer.connect();
    const next = await t.run(producer.transaction());
    await t.run(next.send({ topic: "t", messages: [{ value: "t2" }] }));
    t.settle(15_000);
    expect(t.cluster.heldTxnMarkers.all()).toEqual([]);
    expect(kinds()).toEqual(["data"]);
    await t.run(next.abort());
    expect(kinds()).toEqual(["data", ControlRecordType.ABORT]);
  });
});

describe("a held marker and the transactional id's next transaction", () => {
  it("written before its producer's next transaction appends to the writable partition, not over both", async () => {
    const { t, kinds } = await heldCommit();
    t.cluster.controller.setMirrorReadOnly("t", 0, false);
    t.settle();
    // Writable again, before the housekeeping pass: the transactional id (its commit acknowledged) opens
    // its next transaction on t and aborts it.
    const producer = t.kafka.producer({ transactionalId: "tx" });
    await producer.connect();
    const next = await t.run(producer.transaction());
    await t.run(next.send({ topic: "t", messages: [{ value: "t2" }] }));
    await t.run(next.abort());
    // t1's COMMIT (acknowledged) first: the ABORT ends t2 alone.
    expect(kinds()).toEqual(["data", ControlRecordType.COMMIT, "data", ControlRecordType.ABORT]);
    t.settle(15_000);
    expect(t.cluster.heldTxnMarkers.all()).toEqual([]);
    expect(kinds()).toEqual(["data", ControlRecordType.COMMIT, "data", ControlRecordType.ABORT]);
  });
});

describe("a held marker and a leader lost before its followers copied it", () => {
  it("is kept until the ISR has the marker: the next leader, without it, gets it again", async () => {
    const { t } = await heldCommit();
    const kindsOn = (id: number) =>
      batchesOf(t.cluster, id, "t").map((x) => (x.isControl ? controlTypeOf(x) : "data"));
    // Followers get what the leader appends 20 s later (they stay in the ISR: replica.lag.time.max.ms is 30 s).
    t.cluster.setReplicationLatency(20_000);
    t.cluster.controller.setMirrorReadOnly("t", 0, false);
    t.settle();
    const leader = t.cluster.leaderFor("t", 0).brokerId;
    expect(kindsOn(leader)).toEqual(["data", ControlRecordType.COMMIT]);
    // The housekeeping pass finds the transaction closed on the leader, whose followers lack the marker.
    t.settle(10_500);
    const followers = [0, 1, 2].filter((id) => id !== leader);
    expect(followers.map(kindsOn)).toEqual([["data"], ["data"]]);
    expect(t.cluster.controller.image.partition("t", 0)?.isr).toHaveLength(3);
    t.cluster.crashBroker(leader);
    t.cluster.setReplicationLatency(0);
    t.settle(100);
    const next = t.cluster.leaderFor("t", 0).brokerId;
    expect(followers).toContain(next);
    // The transactional id's next transaction (on u alone) before the next housekeeping pass: the
    // coordinator no longer checks the last transaction's partitions.
    const producer = t.kafka.producer({ transactionalId: "tx" });
    await producer.connect();
    const txn = await t.run(producer.transaction());
    await t.run(txn.send({ topic: "u", messages: [{ value: "u2" }] }));
    await t.run(txn.commit());
    t.settle(30_000);
    // t1's transaction ends on the new leader: nothing holds its last stable offset.
    expect(kindsOn(next)).toEqual(["data", ControlRecordType.COMMIT]);
    const log = t.cluster.broker(next)!.replica("t", 0)!.log;
    expect(log.ongoingTransactions()).toEqual([]);
    expect(log.lastStableOffset).toBe(log.logEndOffset);
    expect(t.cluster.heldTxnMarkers.all()).toEqual([]);
  });
});
