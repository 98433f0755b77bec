import * as fs from "node:fs";
import * as path from "node:path";
import type { KafkaCluster } from "@cluster-mirror/cluster";
import { ControlRecordType, controlTypeOf, encodeRecordBatch } from "@cluster-mirror/protocol";
import { afterEach, describe, expect, it } from "vitest";
import { startPersistentCluster } from "../src/persistence/persistent-cluster";
import { TRANSACTION_STATE_FILE } from "../src/persistence/transaction-state-file";
import { tempDir } from "./cli-harness";
import { closePersistentNodes, leaderLog, startPersistentNode } from "./persistent-node";
import { persistentOptions } from "./persistent-options";

const start = startPersistentNode;
afterEach(closePersistentNodes);
const log = leaderLog;

const kinds = (cluster: KafkaCluster, topic: string) =>
  [...log(cluster, topic).batches()].map((b) => (b.isControl ? controlTypeOf(b) : "data"));

/** Creates t and leaves a transaction of `tx` (timing out after `timeoutMs`) open on it, one record "open". */
async function leaveOpen(node: ReturnType<typeof start>, timeoutMs = 60_000) {
  node.cluster.controller.createTopic({ name: "t", numPartitions: 1 });
  const producer = node.kafka.producer({ transactionalId: "tx", transactionTimeout: timeoutMs });
  await node.run(producer.connect());
  const txn = await node.run(producer.transaction());
  await node.run(txn.send({ topic: "t", messages: [{ value: "open" }] }));
}

/**
 * A transaction of `tx` on t-0 and u-0, committed while t-0 is read-only (a mirror partition again): its
 * t-0 marker is held. Creates t and u first unless `topicsExist`.
 */
async function commitWhileReadOnly(node: ReturnType<typeof start>, topicsExist = false) {
  if (!topicsExist) {
    node.cluster.controller.createTopic({ name: "t", numPartitions: 1 });
    node.cluster.controller.createTopic({ name: "u", numPartitions: 1 });
  }
  const producer = node.kafka.producer({ transactionalId: "tx" });
  await node.run(producer.connect());
  const txn = await node.run(producer.transaction());
  await node.run(txn.send({ topic: "t", messages: [{ value: "t1" }] }));
  await node.run(txn.send({ topic: "u", messages: [{ value: "u1" }] }));
  node.cluster.controller.setMirrorReadOnly("t", 0, true);
  await node.run(txn.commit());
  return producer;
}

describe("transactions across a restart of the node's cluster", () => {
  it("an open transaction is still known after a restart, and aborted at its timeout: read_committed moves on", async () => {
    const dir = tempDir("cm-txn-open");
    const first = start(dir);
    await leaveOpen(first, 30_000);
    const plain = first.kafka.producer({ idempotent: true });
    await first.run(plain.connect());
    await first.run(plain.send({ topic: "t", messages: [{ value: "after" }] }));
    expect(log(first.cluster, "t").lastStableOffset).toBe(0n);
    first.pc.close();

    const second = start(dir);
    expect(second.cluster.transactions.describeTransaction("tx")).toMatchObject({
      state: "Ongoing",
      partitions: [{ topic: "t", partition: 0 }],
    });
    // Before the restart the coordinator forgot it: the transaction hung, and read_committed stopped at
    // offset 0 for good.
    await second.advance(60_000);
    expect(kinds(second.cluster, "t")).toEqual(["data", "data", ControlRecordType.ABORT]);
    expect(log(second.cluster, "t").lastStableOffset).toBe(3n);
    expect(second.cluster.transactions.describeTransaction("tx")?.state).toBe("CompleteAbort");
  });

  it("a commit decided while its partition had no leader is completed after a restart", async () => {
    const dir = tempDir("cm-txn-prepare");
    const first = start(dir);
    first.cluster.controller.createTopic({ name: "t", numPartitions: 1 });
    const producer = first.kafka.producer({ transactionalId: "tx" });
    await first.run(producer.connect());
    const txn = await first.run(producer.transaction());
    await first.run(txn.send({ topic: "t", messages: [{ value: "committed" }] }));
    const { producerId, producerEpoch } = first.cluster.transactions.describeTransaction("tx")!;
    // The broker is gone when the commit is decided: EndTxn answers (the decision is made) and the COMMIT
    // marker waits for a leader; then the process stops.
    first.cluster.stopBroker(0);
    await first.run(
      first.cluster.transactions.endTxn({ transactionalId: "tx", producerId, producerEpoch, commit: true }),
    );
    expect(first.cluster.transactions.describeTransaction("tx")?.state).toBe("PrepareCommit");
    first.pc.close();

    const second = start(dir);
    await second.advance(1000);
    expect(kinds(second.cluster, "t")).toEqual(["data", ControlRecordType.COMMIT]);
    expect(log(second.cluster, "t").lastStableOffset).toBe(2n);
    expect(second.cluster.transactions.describeTransaction("tx")?.state).toBe("CompleteCommit");
  });

  it("a transactional id keeps its producer id: the next producer fences the one from before the restart", async () => {
    const dir = tempDir("cm-txn-fence");
    const first = start(dir);
    const old = first.kafka.producer({ transactionalId: "tx" });
    await first.run(old.connect());
    await first.run(first.run(old.transaction()).then((txn) => txn.abort()));
    const before = first.cluster.transactions.describeTransaction("tx")!;
    first.pc.close();

    const second = start(dir);
    const producer = second.kafka.producer({ transactionalId: "tx" });
    await second.run(producer.connect());
    await second.run(producer.transaction());
    const after = second.cluster.transactions.describeTransaction("tx")!;
    expect(after.producerId).toBe(before.producerId);
    expect(after.producerEpoch).toBe(before.producerEpoch + 1);
    // The old producer's request (its epoch) is refused as fenced.
    expect(() =>
      second.cluster.transactions.addPartitionsToTxn({
        transactionalId: "tx",
        producerId: before.producerId,
        producerEpoch: before.producerEpoch,
        partitions: [{ topic: "t", partition: 0 }],
      }),
    ).toThrow(/fenced/);
  });

  it("keeps a marker held back from a read-only partition, and writes it once the partition is writable", async () => {
    const dir = tempDir("cm-txn-held");
    const first = start(dir);
    await commitWhileReadOnly(first);
    expect(first.cluster.heldTxnMarkers.all()).toHaveLength(1);
    first.pc.close();

    const second = start(dir);
    expect(second.cluster.heldTxnMarkers.all()).toHaveLength(1);
    second.cluster.controller.setMirrorReadOnly("t", 0, false);
    await second.advance(15_000);
    // The acknowledged commit stays committed on t: without the held marker its transaction hung there.
    expect(kinds(second.cluster, "t")).toEqual(["data", ControlRecordType.COMMIT]);
    expect(log(second.cluster, "t").lastStableOffset).toBe(2n);
  });

  it("refuses a corrupt state file by name and says what to do, changing nothing", () => {
    const dir = tempDir("cm-txn-corrupt");
    start(dir).pc.close();
    const file = path.join(dir, TRANSACTION_STATE_FILE);
    fs.writeFileSync(file, '{"transactions":[{"transactionalId":"tx"}],"heldMarkers":[]}');
    expect(() => startPersistentCluster(persistentOptions(dir))).toThrow(
      new RegExp(`${file.replace(/[/\\.]/g, "\\$&")} is corrupt .*restore it from a backup, or delete it`),
    );
    expect(fs.readFileSync(file, "utf8")).toContain('"tx"');
  });

  it("refuses a stored transaction whose parts are damaged, naming it, rather than failing later", async () => {
    const dir = tempDir("cm-txn-damaged");
    const first = start(dir);
    await leaveOpen(first);
    first.pc.close();
    const file = path.join(dir, TRANSACTION_STATE_FILE);
    const good = fs.readFileSync(file, "utf8");
    // A flipped byte that still parses: the partition's index is now a string.
    fs.writeFileSync(file, good.replace('"partition":0', '"partition":"0"'));
    expect(() => startPersistentCluster(persistentOptions(dir))).toThrow(
      /is corrupt \(bad transaction entry "tx"\)/,
    );
    fs.writeFileSync(file, good);
    expect(start(dir).cluster.transactions.describeTransaction("tx")?.state).toBe("Ongoing");
  });
});

describe("transactions across a restart: deleted and recreated topics, cuts, closing, torn writes", () => {
  it("a transaction on a topic deleted before the restart still ends: its transactional id is not blocked for good", async () => {
    const dir = tempDir("cm-txn-deleted-topic");
    const first = start(dir);
    await leaveOpen(first, 30_000);
    first.cluster.controller.deleteTopic("t");
    first.pc.close();

    const second = start(dir);
    await second.advance(60_000);
    // Kafka's coordinator drops the marker of a partition that no longer exists and completes the abort.
    expect(second.cluster.transactions.describeTransaction("tx")?.state).toBe("CompleteAbort");
    const next = second.kafka.producer({ transactionalId: "tx" });
    await second.run(next.connect());
  });

  it("a cut of a deleted topic's partition does not keep a topic created again under its name from holding a marker after a restart", async () => {
    const dir = tempDir("cm-txn-cut-recreated");
    const first = start(dir);
    first.cluster.controller.createTopic({ name: "t", numPartitions: 1 });
    first.cluster.controller.createTopic({ name: "u", numPartitions: 1 });
    // The old t: a mirror partition whose truncation was recorded (a re-add's cut).
    first.cluster.controller.setMirrorReadOnly("t", 0, true);
    const meta = first.cluster.controller.image.partition("t", 0)!;
    first.cluster.controller.recordReplicaTruncation("t", 0, {
      leader: meta.leader,
      leaderEpoch: meta.leaderEpoch,
      truncationOffset: 0n,
      full: false,
      previousLogEndOffset: 0n,
    });
    first.cluster.controller.deleteTopic("t");
    first.cluster.controller.createTopic({ name: "t", numPartitions: 1 });
    // A transaction commits on the new, writable t: nothing of the old t's cut is left in memory.
    const other = first.kafka.producer({ transactionalId: "other" });
    await first.run(other.connect());
    const o = await first.run(other.transaction());
    await first.run(o.send({ topic: "t", messages: [{ value: "o" }] }));
    await first.run(o.commit());
    first.pc.close();

    const second = start(dir);
    await commitWhileReadOnly(second, true);
    // As without the restart: the new t was never cut, so the acknowledged commit's marker is held...
    expect(second.cluster.heldTxnMarkers.all()).toHaveLength(1);
    second.cluster.controller.setMirrorReadOnly("t", 0, false);
    await second.advance(15_000);
    // ...and written once t is writable: t1 is not left open for good.
    expect(kinds(second.cluster, "t")).toEqual([
      "data",
      ControlRecordType.COMMIT,
      "data",
      ControlRecordType.COMMIT,
    ]);
  });

  it("a marker released by a mirror's cut stays released after a restart that came before the state file's write", async () => {
    const dir = tempDir("cm-txn-held-cut");
    const first = start(dir);
    const producer = await commitWhileReadOnly(first);
    const [held] = first.cluster.heldTxnMarkers.all();
    expect(held).toMatchObject({ firstOffset: 0n });
    // `tx` goes on elsewhere: its coordinator no longer names t (no lost-marker check of t is left).
    const next = await first.run(producer.transaction());
    await first.run(next.send({ topic: "u", messages: [{ value: "u2" }] }));
    await first.run(next.commit());
    const file = path.join(dir, TRANSACTION_STATE_FILE);
    const beforeCut = fs.readFileSync(file);
    // The mirror's truncation cuts t1 (recorded in metadata.log first: the held marker is released), and
    // the log takes the source's batches: a transaction of the source's producer that has, by chance, the
    // same producer id (each cluster hands them out from 0) at the same offset.
    const leader = first.cluster.leaderFor("t", 0);
    leader.truncateTo("t", 0, 0n);
    expect(first.cluster.heldTxnMarkers.all()).toEqual([]);
    leader.appendAsIs(
      "t",
      0,
      encodeRecordBatch({
        baseOffset: 0n,
        partitionLeaderEpoch: 0,
        isTransactional: true,
        producerId: held!.producerId,
        producerEpoch: 0,
        baseSequence: 0,
        records: [
          {
            attributes: 0,
            offsetDelta: 0,
            timestampDelta: 0n,
            key: null,
            value: Buffer.from("source"),
            headers: [],
          },
        ],
      }),
    );
    first.pc.close();
    // The process died right after the truncation's metadata record, before transactions.json was written
    // again (or that write failed: "stored with the next change").
    fs.writeFileSync(file, beforeCut);

    const second = start(dir);
    // The re-add is removed: t is writable again.
    second.cluster.controller.setMirrorReadOnly("t", 0, false);
    await second.advance(15_000);
    // This cluster's COMMIT of a transaction the cut removed must not end the source's transaction.
    expect(kinds(second.cluster, "t")).toEqual(["data"]);
    expect(second.cluster.heldTxnMarkers.all()).toEqual([]);
  });

  it("a closed node writes nothing more to transactions.json: the next node on the dir keeps its own state", async () => {
    const dir = tempDir("cm-txn-late-write");
    const node = start(dir, (o) => ({ ...o, brokers: 3 }));
    const { pc, kafka } = node;
    pc.cluster.controller.createTopic({ name: "t", numPartitions: 1, replicationFactor: 3 });
    const producer = kafka.producer({ transactionalId: "tx" });
    await node.run(producer.connect());
    const txn = await node.run(producer.transaction());
    await node.run(txn.send({ topic: "t", messages: [{ value: "x" }], acks: -1 }));
    const { producerId, producerEpoch } = pc.cluster.transactions.describeTransaction("tx")!;
    // The COMMIT marker waits for its followers when the node stops.
    const commit = pc.cluster.transactions.endTxn({
      transactionalId: "tx",
      producerId,
      producerEpoch,
      commit: true,
    });
    pc.close();

    // The next node takes the dir (its lock is free) and stores a transactional id of its own.
    const second = start(dir);
    const other = second.cluster.transactions.initProducerId({ transactionalId: "other" });
    await commit;
    for (let i = 0; i < 5; i++) await new Promise<void>((resolve) => setImmediate(resolve));
    second.pc.close();

    const third = start(dir);
    expect(third.cluster.transactions.describeTransaction("other")).toMatchObject(other);
  });
});
