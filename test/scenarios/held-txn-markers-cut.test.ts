import { describe, expect, it } from "vitest";
import { coordinatorBrokerOf, layout, read, transactionOpenAtFailover } from "./cancel-transactions-helpers";

/**
 * As failback-cut-transactions: A's `a-tx` had a transaction open on orders when B failed over (B aborted
 * it); A aborted it too, then `a-tx` (the same producer id) ran its next transaction on orders again. A
 * fails back from B (B's LME lookups wait while `g` is closed, so PREPARING waits before its truncation).
 */
async function failedOverThenNextTransactionOnA() {
  const { t, a, g, producerA, txProducer, tx, log } = await transactionOpenAtFailover();
  await t.run(tx.abort());
  const next = await t.run(txProducer.transaction());
  await t.run(next.send({ topic: "orders", messages: [{ value: "a-tx-2" }] }));
  expect(layout(a, "orders")).toEqual(["data@0", "data@1", "ABORT", "data@3"]);
  await t.run(a.mirroring.admin.createMirror("back", { "bootstrap.servers": "b:9092" }));
  return { t, a, g, log, producerA, txProducer, next, dataLeader: a.cluster.leaderFor("orders", 0) };
}

/** Runs `crash` right after the next truncation of `dataLeader`'s orders-0; resolves once it cut. */
function onCut(f: Awaited<ReturnType<typeof failedOverThenNextTransactionOnA>>, crash: () => void) {
  const { dataLeader } = f;
  const cut = dataLeader.truncateTo.bind(dataLeader);
  let cuts = 0;
  dataLeader.truncateTo = (topic: string, partition: number, offset: bigint) => {
    cut(topic, partition, offset);
    if (topic !== "orders" || cuts++ > 0) return;
    crash();
  };
  return () => cuts > 0;
}

/** The failback is removed (before its cut was recorded), then A's coordinator broker comes back. */
async function removeAndRecover(
  f: Awaited<ReturnType<typeof failedOverThenNextTransactionOnA>>,
  coordinatorBroker: number,
): Promise<void> {
  const { t, a, g } = f;
  await t.run(a.mirroring.admin.removeTopics("back", "orders"));
  await t.run(a.mirroring.whenState("back", "STOPPED", { timeoutMs: 120_000 }));
  g.open();
  a.cluster.startBroker(coordinatorBroker);
  await t.advance(15_000);
}

describe("a marker held back from a failback's PREPARING, then the truncation cut, unrecorded, then removed", () => {
  it("committed before the cut: the held marker does not keep the transaction the cut reopened (same producer id) open", async () => {
    const f = await failedOverThenNextTransactionOnA();
    const { t, a, g, log, next, txProducer, producerA } = f;
    const coordinatorBroker = coordinatorBrokerOf(a, "back");
    expect(f.dataLeader.brokerId).not.toBe(coordinatorBroker);
    g.close();
    await t.run(a.mirroring.admin.addTopics("back", "orders"));
    expect(a.mirroring.coordinators.describe("back")[0]?.state).toBe("PREPARING");
    // Committed while orders is read-only: the marker is held (a-tx-2 open at 3).
    await t.run(next.commit());
    expect(a.cluster.heldTxnMarkers.on({ topic: "orders", partition: 0 })).toHaveLength(1);
    // `a-tx` goes on elsewhere: A's transaction coordinator no longer names orders for it.
    const third = await t.run(txProducer.transaction());
    await t.run(third.send({ topic: "audit", messages: [{ value: "a-tx-3" }] }));
    await t.run(third.commit());

    // The truncation cuts A's log back to B's (a-tx-2 is gone, a-tx-1's transaction open again), and the
    // coordinator's broker dies before the cut is recorded.
    const cut = onCut(f, () => {
      a.cluster.crashBroker(coordinatorBroker);
      g.close();
    });
    g.open();
    await t.until(cut, "the PREPARING truncation's cut");
    expect(layout(a, "orders")).toEqual(["data@0", "data@1"]);
    await removeAndRecover(f, coordinatorBroker);

    // Nothing ends a-tx-1's transaction but the failover's abort: it must not hang.
    expect(log().ongoingTransactions()).toEqual([]);
    await t.run(producerA.send({ topic: "orders", messages: [{ value: "a-1" }], acks: -1 }));
    expect(await read(t, a, "orders", "read_committed")).toEqual(["0:a-0", "3:a-1"]);
  });

  it("committed after the cut: the held marker is not written over the transaction the cut reopened (A aborted it)", async () => {
    const f = await failedOverThenNextTransactionOnA();
    const { t, a, g, log, next, txProducer, producerA } = f;
    const coordinatorBroker = coordinatorBrokerOf(a, "back");
    expect(f.dataLeader.brokerId).not.toBe(coordinatorBroker);
    const cut = onCut(f, () => {
      a.cluster.crashBroker(coordinatorBroker);
      g.close();
    });
    await t.run(a.mirroring.admin.addTopics("back", "orders"));
    await t.until(cut, "the PREPARING truncation's cut");
    expect(layout(a, "orders")).toEqual(["data@0", "data@1"]);
    // A's application commits a-tx-2 (cut away) while orders is read-only: a-tx's producer id is open
    // there, at a-tx-1's transaction.
    await t.run(next.commit());
    const third = await t.run(txProducer.transaction());
    await t.run(third.send({ topic: "audit", messages: [{ value: "a-tx-3" }] }));
    await t.run(third.commit());

    await removeAndRecover(f, coordinatorBroker);

    // a-tx-1 was aborted by A's application (and by B's failover): read_committed never reads it.
    expect(log().ongoingTransactions()).toEqual([]);
    await t.run(producerA.send({ topic: "orders", messages: [{ value: "a-1" }], acks: -1 }));
    expect({
      layout: layout(a, "orders"),
      readCommitted: await read(t, a, "orders", "read_committed"),
    }).toEqual({ layout: ["data@0", "data@1", "ABORT", "data@3"], readCommitted: ["0:a-0", "3:a-1"] });
  });
});
