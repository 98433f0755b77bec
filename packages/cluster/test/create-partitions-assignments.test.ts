import { describe, expect, it } from "vitest";
import { clientCluster } from "./clients-helpers";
import { expectRefused } from "./refusals";

describe("admin.createPartitions with assignments places the added partitions as asked (Kafka's CreatePartitions)", () => {
  it("gives each added partition the replicas its assignment names, preferred leader first", async () => {
    const { kafka, run, cluster } = clientCluster();
    const admin = kafka.admin();
    await run(
      admin.createTopics({
        topics: [{ topic: "t", replicaAssignment: [{ partition: 0, replicas: [0, 1] }] }],
      }),
    );
    // The assignments were dropped before: the new partitions were placed round-robin.
    await run(
      admin.createPartitions({
        topicPartitions: [
          {
            topic: "t",
            count: 3,
            assignments: [
              [2, 1],
              [1, 0],
            ],
          },
        ],
      }),
    );
    const partitions = cluster.controller.image.topic("t")!.partitions;
    expect(partitions.map((p) => p.replicas)).toEqual([
      [0, 1],
      [2, 1],
      [1, 0],
    ]);
    expect(partitions.map((p) => p.leader)).toEqual([0, 2, 1]);
    // As kafkajs encodes it, an empty list is no assignment: the partition is placed.
    await run(admin.createPartitions({ topicPartitions: [{ topic: "t", count: 4, assignments: [] }] }));
    expect(cluster.controller.image.topic("t")!.partitions).toHaveLength(4);
  });

  it("refuses assignments that do not fit, in Kafka's words, and adds nothing", async () => {
    const { kafka, run, cluster } = clientCluster();
    const admin = kafka.admin();
    await run(admin.createTopics({ topics: [{ topic: "t", numPartitions: 1, replicationFactor: 2 }] }));
    const create = (assignments: number[][]) =>
      run(admin.createPartitions({ topicPartitions: [{ topic: "t", count: 3, assignments }] }));
    await expectRefused(
      create([[0, 1]]),
      "INVALID_REPLICA_ASSIGNMENT",
      /^Attempted to add 2 additional partition\(s\), but only 1 assignment\(s\) were specified: topic 't' gets partitions 1 to 2/,
    );
    await expectRefused(
      create([
        [0, 1],
        [2, 0, 1],
      ]),
      "INVALID_REPLICA_ASSIGNMENT",
      /^The manual partition assignment includes a partition with 3 replica\(s\), but this is not consistent with previous partitions, which have 2 replica\(s\): give partition 2 of topic 't' 2 brokers/,
    );
    await expectRefused(
      create([
        [0, 1],
        [2, 7],
      ]),
      "INVALID_REPLICA_ASSIGNMENT",
      /^partition 2: unknown brokers \[7\]/,
    );
    expect(cluster.controller.image.topic("t")!.partitions).toHaveLength(1);
  });

  it("validateOnly checks the assignments and changes nothing", () => {
    const { cluster } = clientCluster();
    cluster.controller.createTopic({ name: "t", replicaAssignment: [[0, 1]] });
    expect(() =>
      cluster.controller.createPartitions("t", 2, undefined, { validateOnly: true, assignments: [[0]] }),
    ).toThrow(/not consistent with previous partitions, which have 2 replica\(s\)/);
    cluster.controller.createPartitions("t", 2, undefined, { validateOnly: true, assignments: [[1, 2]] });
    expect(cluster.controller.image.topic("t")!.partitions).toHaveLength(1);
  });
});
