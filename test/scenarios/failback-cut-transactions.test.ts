import { describe, expect, it } from "vitest";
import {
  coordinatorBrokerOf,
  cutThen,
  layout,
  type Node,
  read,
  transactionOpenAtFailover,
} from "./cancel-transactions-helpers";

/**
 * A's application had transaction `a-tx` open on orders when B failed over (B aborted it, spec §4); A's
 * application then aborted it on A too (an ABORT marker above B's LME), and went on with a new transaction
 * of `a-tx` on another topic, so A's transaction coordinator no longer names orders-0 for it. When
 * `liveTransaction`, a second transactional id (`a-live`) also has a transaction open on orders across all
 * of it, still ongoing at A's coordinator. B's LME lookups wait while `g` is closed.
 */
async function failedOverThenAbortedOnA(options: { liveTransaction?: boolean } = {}) {
  let live: Awaited<ReturnType<ReturnType<Node["kafka"]["producer"]>["transaction"]>> | undefined;
  const { t, a, b, g, producerA, txProducer, tx, log } = await transactionOpenAtFailover(async (t, a) => {
    if (!options.liveTransaction) return;
    const liveProducer = a.kafka.producer({ transactionalId: "a-live" });
    await t.run(liveProducer.connect());
    live = await t.run(liveProducer.transaction());
    await t.run(live.send({ topic: "orders", messages: [{ value: "a-live-1" }] }));
  });
  expect(b.cluster.leaderFor("orders", 0).replica("orders", 0)!.log.ongoingTransactions()).toEqual([]);

  // A's application aborts `a-tx` on A, then runs its next transaction elsewhere.
  await t.run(tx.abort());
  const next = await t.run(txProducer.transaction());
  await t.run(next.send({ topic: "audit", messages: [{ value: "a-tx-next" }] }));
  await t.run(next.commit());
  expect(log().ongoingTransactions()).toHaveLength(options.liveTransaction ? 1 : 0);

  await t.run(a.mirroring.admin.createMirror("back", { "bootstrap.servers": "b:9092" }));
  return { t, a, g, log, producerA, live, dataLeader: a.cluster.leaderFor("orders", 0) };
}

/**
 * A fails back from B; its PREPARING truncation cuts A's log back to B's LME, dropping A's ABORT marker
 * of `a-tx` (the transaction is open again on A), and the coordinator's broker dies right then, before the
 * cut is recorded; B goes down too (the recovered PREPARING cannot truncate again). A first failback records
 * no LME on A, so the recovered partition cannot tell from its record or the LME that the log was cut. The
 * operator removes the failback: A is its own primary again.
 */
async function failbackCutThenRemoved(f: Awaited<ReturnType<typeof failedOverThenAbortedOnA>>) {
  const { t, a, g, dataLeader } = f;
  const coordinatorBroker = coordinatorBrokerOf(a, "back");
  // The coordinator's broker and the data leader: distinct brokers.
  expect(dataLeader.brokerId).not.toBe(coordinatorBroker);
  await cutThen(
    t,
    dataLeader,
    () => a.mirroring.admin.addTopics("back", "orders"),
    () => {
      a.cluster.crashBroker(coordinatorBroker);
      g.close();
    },
  );
  await t.advance(5_000);
  expect(a.mirroring.coordinators.describe("back")[0]?.state).toBe("PREPARING");
  await t.run(a.mirroring.admin.removeTopics("back", "orders"));
  await t.run(a.mirroring.whenState("back", "STOPPED", { timeoutMs: 120_000 }));
  g.open();
  a.cluster.startBroker(coordinatorBroker);
  // Past the transaction coordinator's housekeeping pass (10 s).
  await t.advance(15_000);
}

describe("a failback cut, then its coordinator lost before the cut is recorded, then removed", () => {
  it("no transaction the cut reopened stays open on the old primary: read_committed reads past it", async () => {
    const f = await failedOverThenAbortedOnA();
    const { t, a, log, producerA } = f;
    expect(layout(a, "orders")).toEqual(["data@0", "data@1", "ABORT"]);
    await failbackCutThenRemoved(f);

    // Nothing will ever end `a-tx`'s transaction on orders-0 but the failover: it aborted it.
    expect(log().ongoingTransactions()).toEqual([]);
    expect(log().lastStableOffset).toBe(log().highWatermark);
    // A's application writes on: read_committed consumers read past the cut transaction.
    await t.run(producerA.send({ topic: "orders", messages: [{ value: "a-1" }], acks: -1 }));
    expect({
      layout: layout(a, "orders"),
      readCommitted: await read(t, a, "orders", "read_committed"),
    }).toEqual({
      layout: ["data@0", "data@1", "ABORT", "data@3"],
      readCommitted: ["0:a-0", "3:a-1"],
    });
  });

  it("a transaction A's coordinator still runs on orders is left alone, and its commit reads", async () => {
    const f = await failedOverThenAbortedOnA({ liveTransaction: true });
    const { t, a, log, live } = f;
    expect(layout(a, "orders")).toEqual(["data@0", "data@1", "data@2", "ABORT"]);
    await failbackCutThenRemoved(f);

    // The failover aborted `a-tx` (nothing else would) but not `a-live`, ongoing at A's coordinator.
    expect(log().ongoingTransactions()).toHaveLength(1);
    expect(layout(a, "orders")).toEqual(["data@0", "data@1", "data@2", "ABORT"]);
    await t.run(live!.commit());
    expect(log().ongoingTransactions()).toEqual([]);
    expect(await read(t, a, "orders", "read_committed")).toEqual(["0:a-0", "2:a-live-1"]);
  });
});

describe("a failback cut then removed: the failover's ABORT marker counts once its in-sync replicas have it", () => {
  it("the data leader crashes right after the ABORT is appended: the new leader closes the transaction too", async () => {
    const f = await failedOverThenAbortedOnA();
    const { t, a, g, log, dataLeader } = f;
    const coordinatorBroker = coordinatorBrokerOf(a, "back");
    expect(dataLeader.brokerId).not.toBe(coordinatorBroker);
    await cutThen(
      t,
      dataLeader,
      () => a.mirroring.admin.addTopics("back", "orders"),
      () => {
        a.cluster.crashBroker(coordinatorBroker);
        g.close();
      },
    );
    await t.advance(5_000);
    expect(a.mirroring.coordinators.describe("back")[0]?.state).toBe("PREPARING");
    expect(log().ongoingTransactions()).toHaveLength(1);
    // The coordinator's broker comes back and leads `__mirror_state` again: the data leader's crash below
    // leaves the failover's coordinator alone.
    a.cluster.startBroker(coordinatorBroker);
    await t.advance(2_000);
    a.cluster.controller.electPreferredLeaders();
    await t.advance(2_000);
    expect(coordinatorBrokerOf(a, "back")).not.toBe(dataLeader.brokerId);
    expect(a.cluster.leaderFor("orders", 0).brokerId).toBe(dataLeader.brokerId);
    expect(a.mirroring.coordinators.describe("back")[0]?.state).toBe("PREPARING");

    // The data leader crashes right after appending the failover's ABORT, before its followers copy it.
    const append = dataLeader.appendControlBatch.bind(dataLeader);
    let crashed = false;
    dataLeader.appendControlBatch = (topic: string, partition: number, batch: Buffer) => {
      const info = append(topic, partition, batch);
      if (topic === "orders" && !crashed) {
        crashed = true;
        a.cluster.crashBroker(dataLeader.brokerId);
      }
      return info;
    };
    const seen: string[] = [];
    a.mirroring.subscribeTransitions((x) => seen.push(`${x.previous.state}->${x.record.state}`));
    await t.run(a.mirroring.admin.removeTopics("back", "orders"));
    await t.run(a.mirroring.whenState("back", "STOPPED", { timeoutMs: 120_000 }));
    expect(crashed).toBe(true);
    g.open();
    a.cluster.startBroker(dataLeader.brokerId);
    await t.advance(15_000);

    // Nothing will ever end `a-tx`'s transaction on orders-0 but the failover: its leader has the ABORT.
    expect(a.cluster.leaderFor("orders", 0).brokerId).not.toBe(dataLeader.brokerId);
    expect(log().ongoingTransactions()).toEqual([]);
    expect(log().lastStableOffset).toBe(log().highWatermark);
    // It ran again on the new leader before STOPPED: its first try was not acknowledged.
    expect(seen).toContain("STOPPING->FAILED");
  });
});
