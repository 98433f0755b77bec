import { describe, expect, it } from "vitest";
import {
  type Broker,
  coordinatorBrokerOf,
  cutThen,
  gate,
  holdLmeLookups,
  layout,
  type Node,
  read,
  type Topology,
} from "./cancel-transactions-helpers";
import { topology } from "./helpers";

/**
 * B mirrored A's orders (three records), failed over, and an application opened a transaction on B (two
 * records, `local`); A's LME lookups wait while `g` is closed. `seed`: the topology's; `replicationFactor`:
 * of orders on A (and so on B).
 */
async function failedOverThenLocalTransaction(options: { seed?: number; replicationFactor?: number } = {}) {
  const t = topology(["a", "b"], options.seed === undefined ? {} : { seed: options.seed });
  const a = t.node("a");
  const b = t.node("b");
  const g = gate();
  holdLmeLookups(t, "a", g.wait);
  const rf = options.replicationFactor === undefined ? {} : { replicationFactor: options.replicationFactor };
  await t.run(a.kafka.admin().createTopics({ topics: [{ topic: "orders", numPartitions: 1, ...rf }] }));
  await t.advance(200);
  const producerA = a.kafka.producer({ idempotent: true });
  await t.run(producerA.connect());
  for (let i = 0; i < 3; i++) {
    await t.run(producerA.send({ topic: "orders", messages: [{ value: `a-${i}` }], acks: -1 }));
  }
  await t.run(b.mirroring.admin.createMirror("dr", { "bootstrap.servers": "a:9092" }));
  await t.run(b.mirroring.admin.addTopics("dr", "orders"));
  await t.run(b.mirroring.whenCaughtUp("dr"));
  await t.run(b.mirroring.admin.removeTopics("dr", "orders"));
  await t.run(b.mirroring.whenState("dr", "STOPPED"));

  // B is the primary now: an application opens a transaction there.
  const txProducer = b.kafka.producer({ transactionalId: "local-tx" });
  await t.run(txProducer.connect());
  const tx = await t.run(txProducer.transaction());
  await t.run(tx.send({ topic: "orders", messages: [{ value: "b-tx-1" }, { value: "b-tx-2" }] }));
  const local = (await read(t, b, "orders", "read_uncommitted")).filter((r) => r.includes(":b-tx-"));
  expect(local).toHaveLength(2);
  return { t, a, b, g, tx, local };
}

/**
 * A re-add (or failback) removed again while PREPARING, before its truncation: the topic keeps its own log,
 * so STOPPING must keep the topic's own producer state. ABORT markers there abort a live local transaction;
 * its producer then commits (acknowledged), and read_committed consumers never see the records.
 */
describe("a re-add removed again before its truncation leaves the topic's own transactions alone", () => {
  it("re-add --truncate-local-writes cancelled while PREPARING: a local transaction open across it commits", async () => {
    const { t, a, b, g, tx, local } = await failedOverThenLocalTransaction();

    // The operator re-adds (agreeing to drop local writes), then removes it again before the truncation.
    g.close();
    const seen: string[] = [];
    b.mirroring.subscribeTransitions((x) => seen.push(`${x.previous.state}->${x.record.state}`));
    const readd = b.mirroring.admin.addTopics("dr", "orders", { truncateLocalWrites: true });
    const cancel = b.mirroring.admin.removeTopics("dr", "orders");
    await t.run(readd);
    await t.run(cancel);
    await t.run(b.mirroring.whenState("dr", "STOPPED"));
    g.open();
    await t.advance(1_000);
    expect(seen).toEqual(["STOPPED->PREPARING", "PREPARING->STOPPING", "STOPPING->STOPPED"]);

    // The application commits its transaction: acknowledged by B's transaction coordinator.
    await t.run(tx.commit());
    const log = b.cluster.leaderFor("orders", 0).replica("orders", 0)!.log;
    expect(log.ongoingTransactions()).toEqual([]);
    // Absolute oracle, offset by offset: what A committed (mirrored), then the transaction B committed.
    const committedOnA = await read(t, a, "orders", "read_committed");
    expect(committedOnA).toEqual(["0:a-0", "1:a-1", "2:a-2"]);
    expect({
      layout: layout(b, "orders"),
      readCommitted: await read(t, b, "orders", "read_committed"),
    }).toEqual({
      layout: ["data@0", "data@1", "data@2", "MIRROR_PID_RESET", "data@4", "COMMIT"],
      readCommitted: [...committedOnA, ...local],
    });
  });

  it("failback cancelled while PREPARING (allowed without the option): the old primary's open transaction commits", async () => {
    const t = topology(["a", "b"]);
    const a = t.node("a");
    const b = t.node("b");
    const g = gate();
    holdLmeLookups(t, "b", g.wait);
    await t.run(a.kafka.admin().createTopics({ topics: [{ topic: "orders", numPartitions: 1 }] }));
    await t.advance(200);
    const producerA = a.kafka.producer({ idempotent: true });
    await t.run(producerA.connect());
    await t.run(producerA.send({ topic: "orders", messages: [{ value: "a-0" }], acks: -1 }));
    // A's application has a transaction open; B mirrors it and fails over (aborting it on B, spec §4).
    const txProducer = a.kafka.producer({ transactionalId: "a-tx" });
    await t.run(txProducer.connect());
    const tx = await t.run(txProducer.transaction());
    await t.run(tx.send({ topic: "orders", messages: [{ value: "a-tx-1" }, { value: "a-tx-2" }] }));
    await t.run(b.mirroring.admin.createMirror("dr", { "bootstrap.servers": "a:9092" }));
    await t.run(b.mirroring.admin.addTopics("dr", "orders"));
    await t.run(b.mirroring.whenCaughtUp("dr"));
    await t.run(b.mirroring.admin.removeTopics("dr", "orders"));
    await t.run(b.mirroring.whenState("dr", "STOPPED"));

    // A fails back from B (no --truncate-local-writes needed: A wrote nothing B lacks), and the operator
    // removes it again before its truncation: A stays the topic's own primary.
    g.close();
    await t.run(a.mirroring.admin.createMirror("back", { "bootstrap.servers": "b:9092" }));
    const seen: string[] = [];
    a.mirroring.subscribeTransitions((x) => seen.push(`${x.previous.state}->${x.record.state}`));
    const failback = a.mirroring.admin.addTopics("back", "orders");
    const cancel = a.mirroring.admin.removeTopics("back", "orders");
    await t.run(failback);
    await t.run(cancel);
    await t.run(a.mirroring.whenState("back", "STOPPED"));
    g.open();
    await t.advance(1_000);
    expect(seen).toEqual(["UNKNOWN->PREPARING", "PREPARING->STOPPING", "STOPPING->STOPPED"]);

    // A's application commits its transaction on A: acknowledged by A's transaction coordinator.
    await t.run(tx.commit());
    expect({
      layout: layout(a, "orders"),
      readCommitted: await read(t, a, "orders", "read_committed"),
    }).toEqual({
      layout: ["data@0", "data@1", "COMMIT"],
      readCommitted: ["0:a-0", "1:a-tx-1", "2:a-tx-2"],
    });
  });
});

/**
 * B mirrored A's orders (RF `replicationFactor` on B) while A's application had a transaction open, and
 * failed over (aborting it on B, spec §4); A's LME lookups wait while `g` is closed.
 */
async function failedOverOverOpenTransaction(replicationFactor?: number) {
  const t = topology(["a", "b"], { seed: 3 });
  const a = t.node("a");
  const b = t.node("b");
  const g = gate();
  holdLmeLookups(t, "a", g.wait);
  await t.run(
    a.kafka.admin().createTopics({ topics: [{ topic: "orders", numPartitions: 1, replicationFactor: 3 }] }),
  );
  await t.advance(200);
  const producerA = a.kafka.producer({ idempotent: true });
  await t.run(producerA.connect());
  await t.run(producerA.send({ topic: "orders", messages: [{ value: "a-0" }], acks: -1 }));
  const txProducer = a.kafka.producer({ transactionalId: "a-tx" });
  await t.run(txProducer.connect());
  const tx = await t.run(txProducer.transaction());
  await t.run(tx.send({ topic: "orders", messages: [{ value: "a-tx-1" }] }));
  await t.run(b.mirroring.admin.createMirror("dr", { "bootstrap.servers": "a:9092" }));
  await t.run(
    b.mirroring.admin.addTopics("dr", "orders", replicationFactor === undefined ? {} : { replicationFactor }),
  );
  await t.run(b.mirroring.whenCaughtUp("dr"));
  await t.run(b.mirroring.admin.removeTopics("dr", "orders"));
  await t.run(b.mirroring.whenState("dr", "STOPPED"));
  const log = () => b.cluster.leaderFor("orders", 0).replica("orders", 0)!.log;
  expect(log().ongoingTransactions()).toEqual([]);
  expect(layout(b, "orders")).toEqual(["data@0", "data@1", "ABORT", "MIRROR_PID_RESET"]);
  return {
    t,
    b,
    g,
    log,
    coordinatorBroker: coordinatorBrokerOf(b),
    dataLeader: b.cluster.leaderFor("orders", 0),
  };
}

/**
 * Re-adds orders on B; right after its truncation cuts the data leader's log (dropping the failover's
 * markers: A's transaction is open again on B), `crash` runs, before the LastMirrorEpochs tombstone is
 * written. Returns once the re-add's call returned.
 */
function readdCutThen(t: Topology, b: Node, dataLeader: Broker, crash: () => void): Promise<void> {
  return cutThen(t, dataLeader, () => b.mirroring.admin.addTopics("dr", "orders"), crash);
}

/**
 * A re-add whose PREPARING cut the log (reopening the source's transactions that the earlier failover had
 * aborted), and whose coordinator is lost before the LastMirrorEpochs tombstone is durable: the new
 * coordinator recovers PREPARING with the old LME. A removal that reaches it before its truncation runs
 * again (the source is down: a disaster failover) must still close the source's transactions.
 */
describe("a re-add cut, then its coordinator lost before the cut is recorded, then removed", () => {
  it("the failover aborts the source's transactions the cut reopened", async () => {
    const { t, b, g, log, coordinatorBroker, dataLeader } = await failedOverOverOpenTransaction();
    // The coordinator's broker and the data leader: distinct brokers.
    expect(dataLeader.brokerId).not.toBe(coordinatorBroker);
    await readdCutThen(t, b, dataLeader, () => {
      b.cluster.crashBroker(coordinatorBroker);
      // A goes down with it: the recovered PREPARING cannot truncate again (its LME lookup waits).
      g.close();
    });
    expect(log().ongoingTransactions()).toHaveLength(1);
    await t.advance(5_000);
    const recovered = b.mirroring.coordinators.describe("dr")[0];
    expect(recovered?.state).toBe("PREPARING");

    // The operator fails over to B again.
    await t.run(b.mirroring.admin.removeTopics("dr", "orders"));
    await t.run(b.mirroring.whenState("dr", "STOPPED", { timeoutMs: 120_000 }));
    g.open();
    b.cluster.startBroker(coordinatorBroker);
    await t.advance(1_000);

    // The source's transaction the cut reopened is closed by the failover: nothing hangs on B.
    expect(log().ongoingTransactions()).toEqual([]);
    expect(log().lastStableOffset).toBe(log().highWatermark);
    expect(layout(b, "orders")).toEqual(["data@0", "data@1", "ABORT", "MIRROR_PID_RESET"]);
  });

  it("the data partition offline when the coordinator loads: the failover still aborts the reopened transaction", async () => {
    // One replica on B: while its broker is down, the partition has no leader.
    const { t, b, g, log, coordinatorBroker, dataLeader } = await failedOverOverOpenTransaction(1);
    // The coordinator's broker and the data partition's only replica die at the cut; A goes down too.
    await readdCutThen(t, b, dataLeader, () => {
      b.cluster.crashBroker(coordinatorBroker);
      if (dataLeader.brokerId !== coordinatorBroker) b.cluster.crashBroker(dataLeader.brokerId);
      g.close();
    });
    // The new coordinator loads while the data partition has no leader: it cannot read the log then.
    await t.advance(5_000);
    expect(b.cluster.controller.image.partition("orders", 0)!.leader).toBe(-1);

    // The operator fails over to B again; the data partition's broker comes back meanwhile.
    const removal = b.mirroring.admin.removeTopics("dr", "orders");
    await t.advance(1_000);
    b.cluster.startBroker(dataLeader.brokerId);
    await t.run(removal);
    await t.run(b.mirroring.whenState("dr", "STOPPED", { timeoutMs: 120_000 }));
    g.open();
    if (dataLeader.brokerId !== coordinatorBroker) b.cluster.startBroker(coordinatorBroker);
    await t.advance(1_000);

    // The source's transaction the cut reopened is closed by the failover: nothing hangs on B.
    expect(log().ongoingTransactions()).toEqual([]);
    expect(log().lastStableOffset).toBe(log().highWatermark);
  });

  it("lost before the cut: the recovered PREPARING leaves the topic's own open transaction alone", async () => {
    const { t, a, b, g, tx, local } = await failedOverThenLocalTransaction({ seed: 3, replicationFactor: 3 });

    const coordinatorBroker = coordinatorBrokerOf(b);
    expect(b.cluster.leaderFor("orders", 0).brokerId).not.toBe(coordinatorBroker);

    // The re-add waits for A's LME answer; its coordinator's broker dies meanwhile (nothing was cut).
    g.close();
    await t.run(b.mirroring.admin.addTopics("dr", "orders", { truncateLocalWrites: true }));
    b.cluster.crashBroker(coordinatorBroker);
    await t.advance(5_000);
    expect(b.mirroring.coordinators.describe("dr")[0]?.state).toBe("PREPARING");
    await t.run(b.mirroring.admin.removeTopics("dr", "orders"));
    await t.run(b.mirroring.whenState("dr", "STOPPED", { timeoutMs: 120_000 }));
    g.open();
    b.cluster.startBroker(coordinatorBroker);
    await t.advance(1_000);

    // The application commits its transaction: it reads as committed.
    await t.run(tx.commit());
    const committedOnA = await read(t, a, "orders", "read_committed");
    expect({
      layout: layout(b, "orders"),
      readCommitted: await read(t, b, "orders", "read_committed"),
    }).toEqual({
      layout: ["data@0", "data@1", "data@2", "MIRROR_PID_RESET", "data@4", "COMMIT"],
      readCommitted: [...committedOnA, ...local],
    });
  });
});
