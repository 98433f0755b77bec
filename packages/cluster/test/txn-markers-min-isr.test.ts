import { ControlRecordType, controlTypeOf } from "@cluster-mirror/protocol";
import { describe, expect, it } from "vitest";
import { clientCluster } from "./clients-helpers";
import { batchesOf } from "./helpers";

/**
 * A cluster of 3 at min.insync.replicas=2 whose housekeeping pass is out of reach (only a marker's own
 * retries write it), `t-0` on all three, and a transaction of producer `tx` with one record there.
 */
async function openTransactionOnT(value: string) {
  const t = clientCluster({ minInsyncReplicas: 2, transactionAbortIntervalMs: 600_000 });
  t.cluster.controller.createTopic({ name: "t", replicaAssignment: [[0, 1, 2]] });
  const producer = t.kafka.producer({ transactionalId: "tx" });
  await producer.connect();
  const txn = await t.run(producer.transaction());
  await t.run(txn.send({ topic: "t", messages: [{ value, partition: 0 }] }));
  return { t, txn };
}

/** Crashes t-0's followers, leaving its leader alone in the ISR; `kinds()` lists the leader's batches. */
function leaderAlone(t: ReturnType<typeof clientCluster>) {
  const leader = t.cluster.leaderFor("t", 0).brokerId;
  const followers = [0, 1, 2].filter((id) => id !== leader);
  for (const id of followers) t.cluster.crashBroker(id);
  t.settle(1000);
  expect(t.cluster.controller.image.partition("t", 0)?.isr).toEqual([leader]);
  const kinds = () => batchesOf(t.cluster, leader, "t").map((b) => (b.isControl ? controlTypeOf(b) : "data"));
  const log = () => t.cluster.broker(leader)!.replica("t", 0)!.log;
  return { followers, kinds, log };
}

describe("transaction markers under min.insync.replicas", () => {
  it("refuses the marker while the ISR is under min.insync.replicas and appends it once, when the ISR is back", async () => {
    const { t, txn } = await openTransactionOnT("committed");
    const { followers, kinds, log } = leaderAlone(t);

    // The decision is made; the marker is refused before it is appended (Kafka's WriteTxnMarkers appends
    // with acks=all), so nothing waits above the held high watermark.
    await t.run(txn.commit());
    expect(t.cluster.transactions.describeTransaction("tx")?.state).toBe("PrepareCommit");
    expect(kinds()).toEqual(["data"]);
    // Past the 30 s an acks=all write waits for its ISR: still nothing appended, still PrepareCommit.
    t.settle(40_000);
    expect(kinds()).toEqual(["data"]);
    expect(t.cluster.transactions.describeTransaction("tx")?.state).toBe("PrepareCommit");

    for (const id of followers) t.cluster.startBroker(id);
    await t.run(
      new Promise<void>((resolve) => {
        const poll = () => {
          if (t.cluster.transactions.describeTransaction("tx")?.state === "CompleteCommit") resolve();
          else t.scheduler.schedule(poll, 100);
        };
        poll();
      }),
    );
    expect(kinds()).toEqual(["data", ControlRecordType.COMMIT]);
    expect(log().lastStableOffset).toBe(log().logEndOffset);
  });

  it("a held marker is refused too while the ISR is under min.insync.replicas, and written soon after it is back", async () => {
    const { t, txn } = await openTransactionOnT("t1");
    // A re-add made t-0 read-only: the commit's marker is held.
    t.cluster.controller.setMirrorReadOnly("t", 0, true);
    t.settle();
    await t.run(txn.commit());
    expect(t.cluster.heldTxnMarkers.on({ topic: "t", partition: 0 })).toHaveLength(1);
    const { followers, kinds, log } = leaderAlone(t);

    // Writable again (the re-add removed) while the ISR is under min.insync.replicas: refused, still held.
    t.cluster.controller.setMirrorReadOnly("t", 0, false);
    t.settle(5000);
    expect(kinds()).toEqual(["data"]);
    expect(t.cluster.heldTxnMarkers.on({ topic: "t", partition: 0 })).toHaveLength(1);

    for (const id of followers) t.cluster.startBroker(id);
    // Within a second of the ISR growing back, not at a housekeeping pass minutes away.
    t.settle(1000);
    expect(t.cluster.controller.image.partition("t", 0)?.isr).toHaveLength(3);
    expect(kinds()).toEqual(["data", ControlRecordType.COMMIT]);
    expect(log().lastStableOffset).toBe(log().logEndOffset);
  });
});
