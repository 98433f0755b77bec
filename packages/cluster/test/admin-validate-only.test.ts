import { describe, expect, it } from "vitest";
import { clientCluster } from "./clients-helpers";
import { expectRefused } from "./refusals";

describe("validateOnly of createTopics and createPartitions: every check of the change, and no change (Kafka's ReplicationControlManager)", () => {
  it("createTopics({ validateOnly }) refuses what a creation refuses, and creates nothing of what it accepts", async () => {
    const { kafka, run, cluster } = clientCluster();
    const admin = kafka.admin();
    const validate = (topic: Record<string, unknown>) =>
      run(admin.createTopics({ validateOnly: true, topics: [{ topic: "t", ...topic }] }));
    // Before: a validation looked at the name's existence only, so each of these passed.
    await expectRefused(
      validate({ numPartitions: -7 }),
      "INVALID_PARTITIONS",
      /number of partitions must be at least 1, got -7/,
    );
    await expectRefused(
      validate({ replicationFactor: 9 }),
      "INVALID_REPLICATION_FACTOR",
      /replication factor/,
    );
    await expectRefused(
      validate({ configEntries: [{ name: "retention.ms", value: "soon" }] }),
      "INVALID_CONFIG",
      /retention\.ms/,
    );
    await expectRefused(
      run(admin.createTopics({ validateOnly: true, topics: [{ topic: "bad name!" }] })),
      "INVALID_TOPIC_EXCEPTION",
      /bad name!/,
    );
    expect(
      await run(admin.createTopics({ validateOnly: true, topics: [{ topic: "t", numPartitions: 2 }] })),
    ).toBe(true);
    expect(cluster.controller.image.topic("t")).toBeUndefined();
  });

  it("createPartitions({ validateOnly }) adds no partition, and refuses what an addition refuses", async () => {
    const { kafka, run, cluster } = clientCluster();
    const admin = kafka.admin();
    await run(admin.createTopics({ topics: [{ topic: "t", numPartitions: 1, replicationFactor: 2 }] }));
    // Before: validateOnly was dropped, and the partitions were created.
    expect(
      await run(admin.createPartitions({ validateOnly: true, topicPartitions: [{ topic: "t", count: 3 }] })),
    ).toBe(true);
    expect(cluster.controller.image.topic("t")!.partitions).toHaveLength(1);
    await run(
      admin.createPartitions({
        validateOnly: true,
        topicPartitions: [{ topic: "t", count: 2, assignments: [[2, 0]] }],
      }),
    );
    expect(cluster.controller.image.topic("t")!.partitions).toHaveLength(1);
    await expectRefused(
      run(admin.createPartitions({ validateOnly: true, topicPartitions: [{ topic: "t", count: 1 }] })),
      "INVALID_PARTITIONS",
      /^Topic already has 1 partition\(s\)/,
    );
    await run(admin.createPartitions({ topicPartitions: [{ topic: "t", count: 3 }] }));
    expect(cluster.controller.image.topic("t")!.partitions).toHaveLength(3);
  });
});
