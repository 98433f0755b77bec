import { ControlRecordType } from "@cluster-mirror/protocol";
import { describe, expect, it } from "vitest";
import { describePartitionLog, describeProducers } from "../src/index";
import { clientCluster, expectKafkaError } from "./clients-helpers";

describe("describePartitionLog and describeProducers", () => {
  it("show batch headers (producer id, epoch, sequences, flags, CRC) and producer state with an open transaction", async () => {
    const t = clientCluster();
    t.cluster.controller.createTopic({ name: "t", replicaAssignment: [[0, 1, 2]] });
    const idempotent = t.kafka.producer({ idempotent: true });
    await idempotent.connect();
    await t.run(idempotent.send({ topic: "t", messages: [{ value: "a" }, { value: "b" }] }));
    await t.run(idempotent.send({ topic: "t", messages: [{ value: "c" }] }));
    const transactional = t.kafka.producer({ transactionalId: "tx" });
    await transactional.connect();
    const txn = await t.run(transactional.transaction());
    await t.run(txn.send({ topic: "t", messages: [{ value: "t1" }] }));

    const open = describePartitionLog(t.cluster, "t", 0);
    expect(open).toMatchObject({
      logStartOffset: 0n,
      logEndOffset: 4n,
      lastStableOffset: 3n,
      truncated: false,
    });
    const [first, second, inTxn] = open.batches;
    expect(first).toMatchObject({
      baseOffset: 0n,
      lastOffset: 1n,
      baseSequence: 0,
      lastSequence: 1,
      recordCount: 2,
      isTransactional: false,
      isControl: false,
      controlType: null,
      crcValid: true,
    });
    expect(first!.producerId).toBeGreaterThanOrEqual(0n);
    expect(second).toMatchObject({ baseOffset: 2n, baseSequence: 2, producerId: first!.producerId });
    expect(inTxn).toMatchObject({ baseOffset: 3n, isTransactional: true, baseSequence: 0 });
    expect(first!.bytes).toBeUndefined();

    const producers = describeProducers(t.cluster, "t", 0);
    expect(producers).toHaveLength(2);
    const byId = new Map(producers.map((p) => [p.producerId, p]));
    expect(byId.get(first!.producerId)).toMatchObject({ lastSequence: 2, currentTxnStartOffset: null });
    expect(byId.get(inTxn!.producerId)).toMatchObject({
      producerEpoch: inTxn!.producerEpoch,
      lastSequence: 0,
      currentTxnStartOffset: 3n,
    });

    await t.run(txn.commit());
    const committed = describePartitionLog(t.cluster, "t", 0, { fromOffset: 3n, includeBytes: true });
    expect(committed.batches.map((b) => [b.baseOffset, b.controlTypeName])).toEqual([
      [3n, null],
      [4n, "COMMIT"],
    ]);
    expect(committed.batches[1]).toMatchObject({
      isControl: true,
      controlType: ControlRecordType.COMMIT,
      producerId: inTxn!.producerId,
    });
    expect(committed.batches[1]!.bytes?.length).toBe(committed.batches[1]!.sizeInBytes);
    expect(
      describeProducers(t.cluster, "t", 0).find((p) => p.producerId === inTxn!.producerId),
    ).toMatchObject({
      currentTxnStartOffset: null,
    });
  });

  it("pages with fromOffset and maxBatches, and refuses what it cannot read", async () => {
    const t = clientCluster();
    t.cluster.controller.createTopic({ name: "t", replicaAssignment: [[0]] });
    const producer = t.kafka.producer();
    await producer.connect();
    for (const v of ["a", "b", "c", "d"])
      await t.run(producer.send({ topic: "t", messages: [{ value: v }] }));
    const page = describePartitionLog(t.cluster, "t", 0, { fromOffset: 1n, maxBatches: 2 });
    expect(page.batches.map((b) => b.baseOffset)).toEqual([1n, 2n]);
    expect(page.truncated).toBe(true);
    expect(page.batches[0]).toMatchObject({ producerId: -1n, baseSequence: -1, lastSequence: -1 });
    expect(describePartitionLog(t.cluster, "t", 0, { maxBatches: 0 })).toMatchObject({
      batches: [],
      logEndOffset: 4n,
      truncated: true,
    });
    await expectKafkaError(() => describePartitionLog(t.cluster, "nope", 0), "UNKNOWN_TOPIC_OR_PARTITION");
    await expectKafkaError(
      () => describePartitionLog(t.cluster, "t", 0, { maxBatches: -1 }),
      "INVALID_REQUEST",
    );
    t.cluster.stopBroker(0);
    await expectKafkaError(() => describeProducers(t.cluster, "t", 0), "LEADER_NOT_AVAILABLE");
  });
});
