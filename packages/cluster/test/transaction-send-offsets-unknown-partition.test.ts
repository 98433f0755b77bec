import { describe, expect, it } from "vitest";
import { clientCluster } from "./clients-helpers";
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
      txn.sendOffsets({
        consumerGroupId: "eos",
        topics: [
          {
            topic: "in",
            partitions: [
              { partition: 0, offset: "4" },
              { partition: 5, offset: "9" },
            ],
          },
          { topic: "gone", partitions: [{ partition: 0, offset: "3" }] },
        ],
      }),
      "UNKNOWN_TOPIC_OR_PARTITION",
      /^transaction\.sendOffsets\(args\): topic 'in' has partitions 0 to 1; partition 5 does not exist: group 'eos' gets no offset for it \(2 offset\(s\) of partitions the cluster does not have; the other 1 offset\(s\) were added and commit with the transaction\)/,
    );
    await expectRefused(
      txn.sendOffsets({
        consumerGroupId: "eos",
        topics: [{ topic: "gone", partitions: [{ partition: 0, offset: "3" }] }],
      }),
      "UNKNOWN_TOPIC_OR_PARTITION",
      /^transaction\.sendOffsets\(args\): topic 'gone' does not exist: .*nothing was added/,
    );
    await t.run(txn.commit());
    const offsets = t.cluster.groups.fetchOffsets("eos");
    expect([...offsets.keys()]).toEqual(["in:0"]);
    expect(offsets.get("in:0")?.offset).toBe(4n);
  });
});
