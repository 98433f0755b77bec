import { describe, expect, it } from "vitest";
import { gate, holdLmeLookups, layout, read } from "./cancel-transactions-helpers";
import { topology } from "./helpers";

/**
 * B mirrored A's orders and failed over; B's application runs transaction `local-tx` over orders and audit
 * (audit: one replica, on a broker that leads neither orders nor anything the mirror needs). A's LME lookups
 * wait while `g` is closed.
 */
async function failedOverThenLocalTransactionOverTwoTopics() {
  const t = topology(["a", "b"]);
  const a = t.node("a");
  const b = t.node("b");
  const g = gate();
  holdLmeLookups(t, "a", g.wait);
  await t.run(a.kafka.admin().createTopics({ topics: [{ topic: "orders", numPartitions: 1 }] }));
  await t.advance(200);
  const producerA = a.kafka.producer({ idempotent: true });
  await t.run(producerA.connect());
  await t.run(producerA.send({ topic: "orders", messages: [{ value: "a-0" }], acks: -1 }));
  await t.run(b.mirroring.admin.createMirror("dr", { "bootstrap.servers": "a:9092" }));
  await t.run(b.mirroring.admin.addTopics("dr", "orders"));
  await t.run(b.mirroring.whenCaughtUp("dr"));
  await t.run(b.mirroring.admin.removeTopics("dr", "orders"));
  await t.run(b.mirroring.whenState("dr", "STOPPED"));

  const ordersLeader = b.cluster.leaderFor("orders", 0).brokerId;
  const auditBroker = [0, 1, 2].find((id) => id !== ordersLeader)!;
  await t.run(
    b.kafka.admin().createTopics({
      topics: [{ topic: "audit", replicaAssignment: [{ partition: 0, replicas: [auditBroker] }] }],
    }),
  );
  await t.advance(200);
  const txProducer = b.kafka.producer({ transactionalId: "local-tx" });
  await t.run(txProducer.connect());
  const tx = await t.run(txProducer.transaction());
  await t.run(tx.send({ topic: "orders", messages: [{ value: "b-tx-1" }] }));
  await t.run(tx.send({ topic: "audit", messages: [{ value: "b-audit-1" }] }));
  return { t, a, b, g, tx, txProducer, auditBroker };
}

/** B's orders holds A's a-0, the failover's PID reset and local-tx's b-tx-1 with its COMMIT: nothing open. */
async function expectLocalCommitRead(t: Setup["t"], b: Setup["b"]): Promise<void> {
  const log = b.cluster.leaderFor("orders", 0).replica("orders", 0)!.log;
  expect(log.ongoingTransactions()).toEqual([]);
  expect({
    layout: layout(b, "orders"),
    readCommitted: await read(t, b, "orders", "read_committed"),
  }).toEqual({
    layout: ["data@0", "MIRROR_PID_RESET", "data@2", "COMMIT"],
    readCommitted: ["0:a-0", "2:b-tx-1"],
  });
}

type Setup = Awaited<ReturnType<typeof failedOverThenLocalTransactionOverTwoTopics>>;

describe("a removal before the re-add's truncation leaves a transaction its coordinator is committing alone", () => {
  it("committed while PREPARING, audit's marker pending: the removal does not abort it on orders", async () => {
    const { t, b, g, tx, auditBroker } = await failedOverThenLocalTransactionOverTwoTopics();
    expect(layout(b, "orders")).toEqual(["data@0", "MIRROR_PID_RESET", "data@2"]);

    // The operator re-adds (agreeing to drop local writes): PREPARING waits for A's LME.
    g.close();
    await t.run(b.mirroring.admin.addTopics("dr", "orders", { truncateLocalWrites: true }));
    expect(b.mirroring.coordinators.describe("dr")[0]?.state).toBe("PREPARING");
    // The application commits while audit's only replica is down: B's transaction coordinator decided
    // COMMIT (acknowledged), and its audit marker waits for a leader (PrepareCommit).
    b.cluster.crashBroker(auditBroker);
    await t.run(tx.commit());
    expect(b.cluster.transactions.describeTransaction("local-tx")?.state).toBe("PrepareCommit");

    // The operator removes the re-add again before its truncation: orders is B's own log again.
    await t.run(b.mirroring.admin.removeTopics("dr", "orders"));
    await t.run(b.mirroring.whenState("dr", "STOPPED"));
    g.open();
    b.cluster.startBroker(auditBroker);
    // Past the transaction coordinator's marker retries and housekeeping pass (10 s).
    await t.advance(15_000);
    expect(b.cluster.transactions.describeTransaction("local-tx")?.state).toBe("CompleteCommit");

    // The commit was acknowledged: read_committed consumers of orders read its record.
    await expectLocalCommitRead(t, b);
  });

  it("committed while PREPARING, its marker on orders held back, then its transactional id went on: orders still gets its COMMIT", async () => {
    const { t, b, g, tx, txProducer } = await failedOverThenLocalTransactionOverTwoTopics();
    g.close();
    await t.run(b.mirroring.admin.addTopics("dr", "orders", { truncateLocalWrites: true }));
    expect(b.mirroring.coordinators.describe("dr")[0]?.state).toBe("PREPARING");
    // Committed while orders is read-only: its marker cannot go on the log now (the re-add may make it a
    // copy of A's), audit's is written; the transaction completes.
    await t.run(tx.commit());
    expect(b.cluster.transactions.describeTransaction("local-tx")?.state).toBe("CompleteCommit");
    // The application's next transaction (audit only): the coordinator's last end no longer names orders.
    const next = await t.run(txProducer.transaction());
    await t.run(next.send({ topic: "audit", messages: [{ value: "b-audit-2" }] }));
    await t.run(next.commit());

    // The re-add is removed before its truncation: orders is B's own log again, b-tx-1 still on it.
    await t.run(b.mirroring.admin.removeTopics("dr", "orders"));
    await t.run(b.mirroring.whenState("dr", "STOPPED"));
    g.open();
    await t.advance(15_000);

    await expectLocalCommitRead(t, b);
  });

  it("committed while PREPARING, then the re-add goes on: the held marker is dropped, and the copy is A's", async () => {
    const { t, a, b, g, tx } = await failedOverThenLocalTransactionOverTwoTopics();
    g.close();
    await t.run(b.mirroring.admin.addTopics("dr", "orders", { truncateLocalWrites: true }));
    await t.run(tx.commit());
    expect(b.cluster.heldTxnMarkers.on({ topic: "orders", partition: 0 })).toHaveLength(1);
    // The truncation cuts the transaction (a local write): its marker must never reach the copy.
    g.open();
    await t.run(b.mirroring.whenState("dr", "MIRRORING"));
    await t.advance(15_000);
    expect(b.cluster.heldTxnMarkers.all()).toEqual([]);
    expect(layout(b, "orders")).toEqual(layout(a, "orders"));
  });
});
