import { describe, expect, it } from "vitest";
import { clientCluster, eosOffsets } from "./clients-helpers";
import { expectRefused } from "./refusals";

describe("transaction.sendOffsets of a partition the cluster lacks, as Kafka's TxnOffsetCommit answers it", () => {
  it("is UNKNOWN_TOPIC_OR_PARTITION and not committed with the transaction; the existing partitions' offsets are", async () => {
    const t = clientCluster();
    t.cluster.controller.createTopic({ name: "in", replicaAssignment: [[0], [1]] });
    t.cluster.controller.createTopic({ name: "out", replicaAssignment: [[1]] });
    const producer = t.kafka.producer({ transactionalId: "eos-tx" });
    await t.run(producer.connect());
    const txn = await t.run(producer.transaction());
    await t.run(txn.send({ topic: "out", messages: [{ value: "x" }] }));
    // Before: taken, and stored in the group at commit, for a group to resume from if "gone" were created.
    await expectRefused(
      t.run(
        txn.sendOffsets(
          eosOffsets({
            in: [
              [0, "4"],
              [5, "9"],
            ],
            gone: [[0, "3"]],
          }),
        ),
      ),
      "UNKNOWN_TOPIC_OR_PARTITION",
      /^transaction\.sendOffsets\(args\): topic 'in' has partitions 0 to 1; partition 5 does not exist: group 'eos' gets no offset for it \(2 offset\(s\) of partitions the cluster does not have; the other 1 offset\(s\) were added and commit with the transaction\)/,
    );
    await expectRefused(
      t.run(txn.sendOffsets(eosOffsets({ gone: [[0, "3"]] }))),
      "UNKNOWN_TOPIC_OR_PARTITION",
      /^transaction\.sendOffsets\(args\): topic 'gone' does not exist: .*nothing was added/,
    );
    await t.run(txn.commit());
    const offsets = t.cluster.groups.fetchOffsets("eos");
    expect([...offsets.keys()]).toEqual(["in:0"]);
    expect(offsets.get("in:0")?.offset).toBe(4n);
  });

  it("is retried as kafkajs's eosManager retries it, with the client's retry settings, and thrown after the last", async () => {
    // The producer's own retry does not apply: kafkajs's eosManager retries with the cluster's (the client's).
    const t = clientCluster({}, { retry: { retries: 2, initialRetryTime: 1000, factor: 0 } });
    const producer = t.kafka.producer({ transactionalId: "eos-tx", retry: { retries: 0 } });
    await t.run(producer.connect());
    const txn = await t.run(producer.transaction());
    const before = t.clock.now();
    const failed = txn.sendOffsets(eosOffsets({ gone: [[0, "3"]] })).then(
      () => undefined,
      (error: { errorName?: string }) => ({ errorName: error.errorName, after: t.clock.now() - before }),
    );
    const outcome = await t.run(failed);
    // Before: thrown at once. Now after two backoffs (1000 + 2000 ms); a third (4000 ms) would end past 7000.
    expect(outcome?.errorName).toBe("UNKNOWN_TOPIC_OR_PARTITION");
    expect(outcome?.after).toBeGreaterThanOrEqual(3000);
    expect(outcome?.after).toBeLessThan(7000);
  });

  it("succeeds once a retry finds the partition created, and its offsets commit with the transaction", async () => {
    const t = clientCluster({}, { retry: { initialRetryTime: 100, factor: 0 } });
    const producer = t.kafka.producer({ transactionalId: "eos-tx" });
    await t.run(producer.connect());
    const txn = await t.run(producer.transaction());
    t.scheduler.schedule(
      () => t.cluster.controller.createTopic({ name: "late", replicaAssignment: [[0]] }),
      200,
    );
    // Before: UNKNOWN_TOPIC_OR_PARTITION at once, though the topic existed a moment later.
    await t.run(txn.sendOffsets(eosOffsets({ late: [[0, "7"]] })));
    await t.run(txn.commit());
    expect(t.cluster.groups.fetchOffsets("eos").get("late:0")?.offset).toBe(7n);
  });
});
