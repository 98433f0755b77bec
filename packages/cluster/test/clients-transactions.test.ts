import { ControlRecordType, controlTypeOf } from "@cluster-mirror/protocol";
import { describe, expect, it } from "vitest";
import { decodeFetch, encodeMessages } from "../src/index";
import { clientCluster, expectKafkaError, values } from "./clients-helpers";
import { batch, batchesOf } from "./helpers";

async function readAll(
  t: ReturnType<typeof clientCluster>,
  topic: string,
  isolation: "read_committed" | "read_uncommitted",
  groupId = `reader-${isolation}-${Math.floor(t.clock.now())}`,
) {
  const consumer = t.kafka.consumer({ groupId, isolation });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const out = [];
  for (let i = 0; i < 10; i++) out.push(...(await t.run(consumer.poll())));
  await t.run(consumer.disconnect());
  return values(out);
}

describe("transactions", () => {
  it("commits and aborts with markers; read_committed never sees aborted records", async () => {
    const t = clientCluster();
    t.cluster.controller.createTopic({ name: "t", replicaAssignment: [[0, 1, 2]] });
    const producer = t.kafka.producer({ transactionalId: "tx" });
    await producer.connect();
    const a = await t.run(producer.transaction());
    await t.run(a.send({ topic: "t", messages: [{ value: "a1" }, { value: "a2" }] }));
    await t.run(a.commit());
    expect(a.isActive()).toBe(false);
    const b = await t.run(producer.transaction());
    await t.run(b.send({ topic: "t", messages: [{ value: "b1" }] }));
    await t.run(b.abort());
    const c = await t.run(producer.transaction());
    await t.run(c.send({ topic: "t", messages: [{ value: "c1" }] }));
    await t.run(c.commit());
    const kinds = batchesOf(t.cluster, 0, "t").map((x) => (x.isControl ? controlTypeOf(x) : "data"));
    expect(kinds).toEqual([
      "data",
      ControlRecordType.COMMIT,
      "data",
      ControlRecordType.ABORT,
      "data",
      ControlRecordType.COMMIT,
    ]);
    expect(await readAll(t, "t", "read_committed")).toEqual(["a1", "a2", "c1"]);
    expect(await readAll(t, "t", "read_uncommitted")).toEqual(["a1", "a2", "b1", "c1"]);
    await expectKafkaError(producer.send({ topic: "t", messages: [{ value: "x" }] }), "INVALID_TXN_STATE");
  });

  it("holds the LSO at an open transaction: read_committed sees nothing past it until the commit", async () => {
    const t = clientCluster();
    t.cluster.controller.createTopic({ name: "t", replicaAssignment: [[0, 1, 2]] });
    const plain = t.kafka.producer({ idempotent: true });
    await plain.connect();
    await t.run(plain.send({ topic: "t", messages: [{ value: "before" }] }));
    const producer = t.kafka.producer({ transactionalId: "tx" });
    await producer.connect();
    const txn = await t.run(producer.transaction());
    await t.run(txn.send({ topic: "t", messages: [{ value: "in-txn" }] }));
    await t.run(plain.send({ topic: "t", messages: [{ value: "after" }] }));
    const admin = t.kafka.admin();
    const offsets = await t.run(admin.fetchTopicOffsets("t"));
    expect(offsets).toEqual([{ partition: 0, offset: "3", high: "3", low: "0" }]); // the HW, not the LSO
    const consumer = t.kafka.consumer({ groupId: "rc" });
    await consumer.connect();
    await consumer.subscribe({ topic: "t", fromBeginning: true });
    expect(values(await t.run(consumer.poll()))).toEqual(["before"]);
    expect(values(await t.run(consumer.poll()))).toEqual([]);
    await t.run(txn.commit());
    expect(values(await t.run(consumer.poll()))).toEqual(["in-txn", "after"]);
  });

  it("fences a zombie: the older producer with the same transactional id can no longer commit", async () => {
    const t = clientCluster();
    t.cluster.controller.createTopic({ name: "t", replicaAssignment: [[0, 1, 2]] });
    const zombie = t.kafka.producer({ transactionalId: "tx" });
    await zombie.connect();
    const old = await t.run(zombie.transaction());
    await t.run(old.send({ topic: "t", messages: [{ value: "zombie" }] }));
    const fresh = t.kafka.producer({ transactionalId: "tx" });
    await fresh.connect();
    const txn = await t.run(fresh.transaction()); // bumps the epoch, aborts the zombie's transaction
    expect(fresh.producerId()!.producerEpoch).toBeGreaterThan(zombie.producerId()!.producerEpoch);
    await t.run(txn.send({ topic: "t", messages: [{ value: "fresh" }] }));
    await expectKafkaError(t.run(old.commit()), "PRODUCER_FENCED");
    await expectKafkaError(zombie.transaction(), "PRODUCER_FENCED");
    await t.run(txn.commit());
    expect(await readAll(t, "t", "read_committed")).toEqual(["fresh"]);
  });

  it("a second producer with the same transactional id aborts the first one's open transaction and fences it", async () => {
    const t = clientCluster();
    t.cluster.controller.createTopic({
      name: "t",
      replicaAssignment: [
        [0, 1, 2],
        [1, 2, 0],
      ],
    });
    const first = t.kafka.producer({ transactionalId: "tx" });
    await first.connect();
    const open = await t.run(first.transaction());
    await t.run(
      open.send({
        topic: "t",
        messages: [
          { value: "first-0", partition: 0 },
          { value: "first-1", partition: 1 },
        ],
      }),
    );
    const second = t.kafka.producer({ transactionalId: "tx" });
    await second.connect();
    const own = await t.run(second.transaction()); // InitProducerId: aborts the open transaction
    for (const p of [0, 1]) {
      const kinds = batchesOf(t.cluster, p, "t", p).map((x) => (x.isControl ? controlTypeOf(x) : "data"));
      expect(kinds, `partition ${p}`).toEqual(["data", ControlRecordType.ABORT]);
    }
    // The first producer is fenced: a send to a partition of its (aborted) transaction is refused for its
    // epoch, and its commit and any new transaction answer PRODUCER_FENCED.
    await expectKafkaError(
      t.run(open.send({ topic: "t", messages: [{ value: "late", partition: 0 }] })),
      "INVALID_PRODUCER_EPOCH",
    );
    await expectKafkaError(t.run(open.commit()), "PRODUCER_FENCED");
    expect(open.isActive()).toBe(false);
    await expectKafkaError(first.transaction(), "PRODUCER_FENCED");

    await t.run(own.send({ topic: "t", messages: [{ value: "second", partition: 0 }] }));
    await t.run(own.commit());
    expect(await readAll(t, "t", "read_committed")).toEqual(["second"]);
    expect((await readAll(t, "t", "read_uncommitted")).sort()).toEqual(["first-0", "first-1", "second"]);
    expect(t.cluster.transactions.describeTransaction("tx")?.state).toBe("CompleteCommit");
  });

  it("refuses a fenced producer's batch on a partition of the new producer's transaction", async () => {
    const t = clientCluster();
    t.cluster.controller.createTopic({
      name: "t",
      replicaAssignment: [
        [0, 1, 2],
        [1, 2, 0],
      ],
    });
    const first = t.kafka.producer({ transactionalId: "tx" });
    await first.connect();
    const open = await t.run(first.transaction());
    await t.run(open.send({ topic: "t", messages: [{ value: "first", partition: 0 }] }));
    const zombie = first.producerId()!;
    const second = t.kafka.producer({ transactionalId: "tx" });
    await second.connect();
    const own = await t.run(second.transaction());
    // The new producer adds partition 1 (no batch or marker of this producer id there yet) ...
    t.cluster.transactions.addPartitionsToTxn({
      transactionalId: "tx",
      ...second.producerId()!,
      partitions: [{ topic: "t", partition: 1 }],
    });
    // ... and a delayed batch of the fenced producer arrives there: it must not join that transaction.
    const late = t.cluster.leaderFor("t", 1).produce({
      topic: "t",
      partition: 1,
      transactionalId: "tx",
      batch: batch(["zombie"], { ...zombie, baseSequence: 0, isTransactional: true }),
      acks: -1,
    });
    await expectKafkaError(t.run(late), "INVALID_PRODUCER_EPOCH");
    await t.run(own.send({ topic: "t", messages: [{ value: "second", partition: 1 }] }));
    await t.run(own.commit());
    expect(await readAll(t, "t", "read_committed")).toEqual(["second"]);
  });

  it("writes a COMMIT marker lost with its leader again on the new one: the commit counts once the ISR has it", async () => {
    // The housekeeping pass that restores lost markers is out of reach: only the acknowledgement can save it.
    const t = clientCluster({ transactionAbortIntervalMs: 600_000 });
    t.cluster.controller.createTopic({ name: "t", replicaAssignment: [[0, 1, 2]] });
    const producer = t.kafka.producer({ transactionalId: "tx" });
    await producer.connect();
    const txn = await t.run(producer.transaction());
    await t.run(txn.send({ topic: "t", messages: [{ value: "committed", partition: 0 }] }));
    const leader = t.cluster.leaderFor("t", 0);
    const logOf = (id: number) => t.cluster.broker(id)!.replica("t", 0)!.log;
    const markers = (id: number) => [...logOf(id).batches()].filter((b) => b.isControl).length;
    const committing = txn.commit();
    // The marker is on the leader; the followers have not fetched it (the scheduler has not run).
    for (let i = 0; i < 20 && markers(leader.brokerId) === 0; i++) await new Promise(setImmediate);
    expect(markers(leader.brokerId)).toBe(1);
    const followers = [0, 1, 2].filter((id) => id !== leader.brokerId);
    expect(followers.map(markers)).toEqual([0, 0]);
    t.cluster.crashBroker(leader.brokerId);
    await t.run(committing);
    // A second later (the marker's retry backoff is 100 ms; the housekeeping pass is minutes away).
    await t.run(new Promise((resolve) => t.scheduler.schedule(() => resolve(undefined), 1000)));
    const next = t.cluster.leaderFor("t", 0).brokerId;
    expect(followers).toContain(next);
    expect(markers(next)).toBe(1);
    expect(logOf(next).lastStableOffset).toBe(logOf(next).highWatermark);
    expect(t.cluster.transactions.describeTransaction("tx")?.state).toBe("CompleteCommit");
    expect(await readAll(t, "t", "read_committed")).toEqual(["committed"]);
  });

  it("aborts a transaction that runs past its timeout and fences its producer", async () => {
    const t = clientCluster();
    t.cluster.controller.createTopic({ name: "t", replicaAssignment: [[0, 1, 2]] });
    const producer = t.kafka.producer({ transactionalId: "slow", transactionTimeout: 1000 });
    await producer.connect();
    const txn = await t.run(producer.transaction());
    await t.run(txn.send({ topic: "t", messages: [{ value: "late" }] }));
    t.settle(1500);
    expect(t.cluster.transactions.abortTimedOutTransactions()).toEqual(["slow"]);
    await expectKafkaError(t.run(txn.commit()), "PRODUCER_FENCED");
    const kinds = batchesOf(t.cluster, 0, "t").map((x) => (x.isControl ? controlTypeOf(x) : "data"));
    expect(kinds).toEqual(["data", ControlRecordType.ABORT]);
    expect(await readAll(t, "t", "read_committed")).toEqual([]);
  });

  it("writes no marker into a partition that became a mirror partition again (a re-add) while the transaction was open", async () => {
    const t = clientCluster();
    t.cluster.controller.createTopic({ name: "t", replicaAssignment: [[0, 1, 2]] });
    t.cluster.controller.createTopic({ name: "m", replicaAssignment: [[1, 2, 0]] });
    const producer = t.kafka.producer({ transactionalId: "local", transactionTimeout: 1000 });
    await producer.connect();
    const txn = await t.run(producer.transaction());
    await t.run(txn.send({ topic: "t", messages: [{ value: "t1" }] }));
    await t.run(txn.send({ topic: "m", messages: [{ value: "m1" }] }));
    // `m` is added to a mirror (its partitions are read-only from now on, until the mirror's truncation).
    t.cluster.controller.incrementalAlterConfigs({ type: "topic", name: "m" }, [
      { name: "mirror.name", op: "SET", value: "dr" },
    ]);
    t.settle(1500);
    expect(t.cluster.transactions.abortTimedOutTransactions()).toEqual(["local"]);
    // `t`'s marker counts once its in-sync replicas have it.
    await t.run(new Promise((resolve) => t.scheduler.schedule(() => resolve(undefined), 1000)));
    const kinds = (topic: string) =>
      batchesOf(t.cluster, topic === "t" ? 0 : 1, topic).map((x) =>
        x.isControl ? controlTypeOf(x) : "data",
      );
    expect(kinds("t")).toEqual(["data", ControlRecordType.ABORT]);
    // The mirror's log gets nothing of this cluster's: its offsets stay the source's to fill.
    expect(kinds("m")).toEqual(["data"]);
    expect(t.cluster.transactions.describeTransaction("local")?.state).toBe("CompleteAbort");
  });

  it("commits consumer offsets with the transaction (sendOffsets) and drops them on abort", async () => {
    const t = clientCluster();
    t.cluster.controller.createTopic({ name: "in", replicaAssignment: [[0]] });
    t.cluster.controller.createTopic({ name: "out", replicaAssignment: [[1]] });
    const consumer = t.kafka.consumer({ groupId: "eos" });
    await consumer.connect();
    await consumer.subscribe({ topic: "in", fromBeginning: true });
    await t.run(consumer.poll()); // joins: the group now has an active member
    const producer = t.kafka.producer({ transactionalId: "eos-tx" });
    await producer.connect();
    const aborted = await t.run(producer.transaction());
    await t.run(aborted.send({ topic: "out", messages: [{ value: "x" }] }));
    await aborted.sendOffsets({
      consumerGroupId: "eos",
      topics: [{ topic: "in", partitions: [{ partition: 0, offset: "5" }] }],
    });
    await t.run(aborted.abort());
    const admin = t.kafka.admin();
    expect((await admin.fetchOffsets({ groupId: "eos", topics: ["in"] }))[0]!.partitions[0]!.offset).toBe(
      "-1",
    );
    const txn = await t.run(producer.transaction());
    await t.run(txn.send({ topic: "out", messages: [{ value: "y" }] }));
    await txn.sendOffsets({
      consumerGroupId: "eos",
      topics: [{ topic: "in", partitions: [{ partition: 0, offset: "7" }] }],
    });
    await t.run(txn.commit());
    expect((await admin.fetchOffsets({ groupId: "eos", topics: ["in"] }))[0]!.partitions[0]!.offset).toBe(
      "7",
    );
  });
});

describe("read_committed filtering", () => {
  it("drops every aborted transaction when several producers' aborted transactions overlap", () => {
    // Offsets: 0 P1 (txn A), 1 P2 (txn B), 2 P3 committed, 3 P1 (A), 4 P2 (B), 5 ABORT P1, 6 P2 (B), 7 ABORT P2.
    const batch = (pid: bigint, value: string, offset: bigint) => {
      const b = encodeMessages([{ value }], 0, {
        producerId: pid,
        producerEpoch: 0,
        baseSequence: 0,
        isTransactional: true,
      });
      b.writeBigInt64BE(offset, 0);
      return b;
    };
    const records = Buffer.concat([
      batch(1n, "A1", 0n),
      batch(2n, "B1", 1n),
      batch(3n, "C1", 2n),
      batch(1n, "A2", 3n),
      batch(2n, "B2", 4n),
      batch(2n, "B3", 6n),
    ]);
    const aborted = [
      { producerId: 2n, firstOffset: 1n, lastOffset: 7n },
      { producerId: 1n, firstOffset: 0n, lastOffset: 5n },
    ];
    const committed = decodeFetch(records, 0n, "read_committed", aborted);
    expect(committed.messages.map((m) => m.value?.toString())).toEqual(["C1"]);
    expect(committed.nextOffset).toBe(7n);
    const fromMiddle = decodeFetch(records, 3n, "read_committed", aborted);
    expect(fromMiddle.messages).toEqual([]);
    const uncommitted = decodeFetch(records, 2n, "read_uncommitted", aborted);
    expect(uncommitted.messages.map((m) => m.value?.toString())).toEqual(["C1", "A2", "B2", "B3"]);
  });

  it("end to end: two transactional producers interleave, both abort, a third commits", async () => {
    const t = clientCluster();
    t.cluster.controller.createTopic({ name: "t", replicaAssignment: [[0, 1, 2]] });
    const p = await Promise.all(
      ["a", "b", "c"].map(async (id) => {
        const producer = t.kafka.producer({ transactionalId: id });
        await producer.connect();
        return t.run(producer.transaction());
      }),
    );
    const [a, b, c] = p as [(typeof p)[0], (typeof p)[0], (typeof p)[0]];
    await t.run(a.send({ topic: "t", messages: [{ value: "a1" }] }));
    await t.run(b.send({ topic: "t", messages: [{ value: "b1" }] }));
    await t.run(c.send({ topic: "t", messages: [{ value: "c1" }] }));
    await t.run(a.send({ topic: "t", messages: [{ value: "a2" }] }));
    await t.run(b.send({ topic: "t", messages: [{ value: "b2" }] }));
    await t.run(a.abort());
    await t.run(b.send({ topic: "t", messages: [{ value: "b3" }] }));
    await t.run(c.commit());
    await t.run(b.abort());
    expect(await readAll(t, "t", "read_committed")).toEqual(["c1"]);
  });
});
