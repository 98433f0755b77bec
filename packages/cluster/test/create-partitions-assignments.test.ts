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

  it("refuses a new partition placed only on fenced brokers, as Kafka's controller does, in createTopics too", async () => {
    const { kafka, run, cluster, settle } = clientCluster();
    const admin = kafka.admin();
    await run(admin.createTopics({ topics: [{ topic: "t", numPartitions: 1, replicationFactor: 2 }] }));
    cluster.crashBroker(1);
    cluster.crashBroker(2);
    settle(1000);
    expect(cluster.controller.image.liveBrokers()).toEqual([0]);
    // Added before, born without a leader or ISR: nothing could write to it until a broker came back.
    await expectRefused(
      run(admin.createPartitions({ topicPartitions: [{ topic: "t", count: 2, assignments: [[1, 2]] }] })),
      "INVALID_REPLICA_ASSIGNMENT",
      /^All brokers specified in the manual partition assignment for partition 1 are fenced or in controlled shutdown: brokers \[1,2\] are fenced; name at least one live broker \(live: 0\)$/,
    );
    expect(cluster.controller.image.topic("t")!.partitions).toHaveLength(1);
    await expectRefused(
      run(
        admin.createTopics({
          topics: [
            {
              topic: "u",
              replicaAssignment: [
                { partition: 0, replicas: [0, 1] },
                { partition: 1, replicas: [2, 1] },
              ],
            },
          ],
        }),
      ),
      "INVALID_REPLICA_ASSIGNMENT",
      /^All brokers specified in the manual partition assignment for partition 1 are fenced/,
    );
    expect(cluster.controller.image.topic("u")).toBeUndefined();
    // Kafka checks the topic and the assignment's shape first: an existing topic is TOPIC_ALREADY_EXISTS
    // (kafkajs's false), a broker that is not registered is named as such.
    const onlyFenced = [{ partition: 0, replicas: [1] }];
    expect(await run(admin.createTopics({ topics: [{ topic: "t", replicaAssignment: onlyFenced }] }))).toBe(
      false,
    );
    await expectRefused(
      run(admin.createPartitions({ topicPartitions: [{ topic: "t", count: 2, assignments: [[1, 7]] }] })),
      "INVALID_REPLICA_ASSIGNMENT",
      /^partition 1: unknown brokers \[7\]/,
    );
    // One live replica is enough: it leads, the fenced one joins the ISR once it is back.
    await run(admin.createPartitions({ topicPartitions: [{ topic: "t", count: 2, assignments: [[2, 0]] }] }));
    expect(cluster.controller.image.partition("t", 1)).toMatchObject({
      replicas: [2, 0],
      leader: 0,
      isr: [0],
    });
    await run(
      admin.createTopics({
        topics: [{ topic: "u", replicaAssignment: [{ partition: 0, replicas: [1, 0] }] }],
        waitForLeaders: false,
      }),
    );
    expect(cluster.controller.image.partition("u", 0)).toMatchObject({ leader: 0, isr: [0] });
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
