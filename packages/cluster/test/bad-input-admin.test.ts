import { describe, expect, it } from "vitest";
import { clientCluster } from "./clients-helpers";
import { expectRefused } from "./refusals";

describe("the admin client refuses bad arguments as kafkajs and Kafka do", () => {
  it("createTopics with numPartitions or replicationFactor beside a replicaAssignment is INVALID_REQUEST, as Kafka's controller answers", async () => {
    const { kafka, run } = clientCluster();
    const admin = kafka.admin();
    // Made a topic of one partition before: the count was silently ignored.
    await expectRefused(
      run(
        admin.createTopics({
          topics: [{ topic: "a", numPartitions: 6, replicaAssignment: [{ partition: 0, replicas: [0] }] }],
        }),
      ),
      "INVALID_REQUEST",
      /^A manual partition assignment was specified, but numPartitions was not set to -1: topic 'a' gets its partitions and replicas from replicaAssignment/,
    );
    await expectRefused(
      run(
        admin.createTopics({
          topics: [
            { topic: "a", replicationFactor: 3, replicaAssignment: [{ partition: 0, replicas: [0] }] },
          ],
        }),
      ),
      "INVALID_REQUEST",
      /but replication factor was not set to -1/,
    );
    expect(await run(admin.listTopics())).toEqual([]);
    // -1 (kafkajs's "the broker default") beside an assignment is what Kafka expects.
    await run(
      admin.createTopics({
        topics: [
          {
            topic: "a",
            numPartitions: -1,
            replicationFactor: -1,
            replicaAssignment: [
              { partition: 0, replicas: [0] },
              { partition: 1, replicas: [1] },
            ],
          },
        ],
      }),
    );
    expect((await run(admin.fetchTopicOffsets("a"))).length).toBe(2);
  });

  it("createTopics with numPartitions or replicationFactor null is refused as Kafka refuses the 0 kafkajs sends for it", async () => {
    const { kafka, run, cluster } = clientCluster();
    const admin = kafka.admin();
    const create = (topic: Record<string, unknown>) =>
      run(admin.createTopics({ topics: [{ topic: "ok", numPartitions: 2 }, topic as never] }));
    // Made a topic with the default count before; kafkajs writes null as 0 (its -1 default is for a
    // missing field only) and Kafka refuses 0.
    await expectRefused(
      create({ topic: "a", numPartitions: null }),
      "INVALID_PARTITIONS",
      /^number of partitions must be at least 1, got 0 \(topic 'a' has numPartitions: null, which kafkajs sends as 0: leave numPartitions out, or give -1, for the broker default\)$/,
    );
    await expectRefused(
      run(admin.createTopics({ topics: [{ topic: "b", replicationFactor: null as never }] })),
      "INVALID_REPLICATION_FACTOR",
      /^replication factor must be an integer >= 1, got 0 \(topic 'b' has replicationFactor: null/,
    );
    await expectRefused(
      run(
        admin.createTopics({
          topics: [
            {
              topic: "c",
              numPartitions: null as never,
              replicaAssignment: [{ partition: 0, replicas: [0] }],
            },
          ],
        }),
      ),
      "INVALID_REQUEST",
      /^A manual partition assignment was specified, but numPartitions was not set to -1: .*\(got 0\) \(topic 'c' has numPartitions: null/,
    );
    // Each topic of the request is created or refused on its own, as Kafka's CreateTopics does.
    expect(await run(admin.listTopics())).toEqual(["ok"]);
    expect(cluster.controller.image.topic("ok")!.partitions).toHaveLength(2);
    // Left out, or -1, is the default.
    await run(
      admin.createTopics({
        topics: [{ topic: "a" }, { topic: "b", numPartitions: -1, replicationFactor: -1 }],
      }),
    );
    expect(cluster.controller.image.topic("a")!.partitions).toHaveLength(1);
    expect(cluster.controller.image.topic("b")!.partitions[0]!.replicas).toHaveLength(3);
  });

  it("createPartitions with a count not above the current one says so in Kafka's words; its arguments are checked", async () => {
    const { kafka, run } = clientCluster();
    const admin = kafka.admin();
    await run(admin.createTopics({ topics: [{ topic: "t", numPartitions: 2 }] }));
    const create = (args: unknown) => run(admin.createPartitions(args as never));
    await expectRefused(
      create({ topicPartitions: [{ topic: "t", count: 1 }] }),
      "INVALID_PARTITIONS",
      /^The topic t currently has 2 partition\(s\); 1 would not be an increase\. Kafka never removes partitions: give a count larger than 2/,
    );
    await expectRefused(
      create({ topicPartitions: [{ topic: "t", count: 2 }] }),
      "INVALID_PARTITIONS",
      /^Topic already has 2 partition\(s\)/,
    );
    // Said "topic 't' has 2 partitions; the new count must be larger, got 3" before.
    await expectRefused(
      create({ topicPartitions: [{ topic: "t", count: "3" }] }),
      "INVALID_PARTITIONS",
      /the new partition count of topic 't' must be a whole number \(the new total, larger than its 2\), got "3" \(a string\)/,
    );
    // "Cannot read properties of undefined (reading 'topicPartitions')" before.
    await expectRefused(
      create(undefined),
      "INVALID_REQUEST",
      /^admin.createPartitions\(args\): Invalid topic partitions array undefined: pass \{ topicPartitions: \[\{ topic: "orders", count: 6 \}\] \}/,
    );
    await expectRefused(create({ topicPartitions: [] }), "INVALID_REQUEST", /Empty topic partitions array/);
    await expectRefused(
      create({
        topicPartitions: [
          { topic: "t", count: 3 },
          { topic: "t", count: 4 },
        ],
      }),
      "INVALID_REQUEST",
      /it cannot have multiple entries for the same topic/,
    );
    expect((await run(admin.fetchTopicOffsets("t"))).length).toBe(2);
    await create({ topicPartitions: [{ topic: "t", count: 3 }] });
    expect((await run(admin.fetchTopicOffsets("t"))).length).toBe(3);
  });

  it("fetchTopicMetadata, fetchTopicOffsets and deleteTopicRecords with a topic or offset of the wrong shape say what to pass", async () => {
    const { kafka, run } = clientCluster();
    const admin = kafka.admin();
    await run(admin.createTopics({ topics: [{ topic: "t", numPartitions: 1 }] }));
    // "topics.map is not a function" before.
    await expectRefused(
      run(admin.fetchTopicMetadata({ topics: "t" } as never)),
      "INVALID_REQUEST",
      /^admin.fetchTopicMetadata\(args\): Invalid topics array "t" \(a string\): pass \{ topics: \["orders"\] \}/,
    );
    // "topic 'undefined' does not exist" before.
    await expectRefused(
      run(admin.fetchTopicOffsets(undefined as never)),
      "INVALID_REQUEST",
      /^admin.fetchTopicOffsets\(topic\): Invalid topic undefined: name the topic/,
    );
    // A RangeError from BigInt(NaN) before.
    await expectRefused(
      run(admin.fetchTopicOffsetsByTimestamp("t", Number.NaN)),
      "INVALID_REQUEST",
      /the timestamp is milliseconds since the epoch, a whole number 0 or more/,
    );
    // A SyntaxError "Cannot convert x to a BigInt" before.
    await expectRefused(
      run(admin.deleteTopicRecords({ topic: "t", partitions: [{ partition: 0, offset: "x" }] })),
      "INVALID_REQUEST",
      /^admin.deleteTopicRecords\(args\): Invalid offset, expected a long received "x" \(a string\)/,
    );
    const [metadata] = (await run(admin.fetchTopicMetadata({ topics: ["t"] }))).topics;
    expect(metadata?.name).toBe("t");
  });

  it("fetchOffsets, setOffsets and resetOffsets need a group and a topic, and set no offset of a partition the topic lacks", async () => {
    const { kafka, run, cluster } = clientCluster();
    const admin = kafka.admin();
    await run(admin.createTopics({ topics: [{ topic: "t", numPartitions: 2 }] }));
    // Each of these read, set or reset the offsets of a group named "undefined", or of topic "undefined".
    await expectRefused(
      run(admin.fetchOffsets({ topics: ["t"] } as never)),
      "INVALID_REQUEST",
      /^admin.fetchOffsets\(args\): Invalid groupId undefined: name the consumer group/,
    );
    await expectRefused(
      run(admin.resetOffsets({ topic: "t" } as never)),
      "INVALID_REQUEST",
      /^admin.resetOffsets\(args\): Invalid groupId undefined/,
    );
    await expectRefused(
      run(admin.setOffsets({ groupId: "g", partitions: [{ partition: 0, offset: "1" }] } as never)),
      "INVALID_REQUEST",
      /^admin.setOffsets\(args\): Invalid topic undefined/,
    );
    // "topics.map is not a function" before.
    await expectRefused(
      run(admin.fetchOffsets({ groupId: "g", topics: "t" } as never)),
      "INVALID_REQUEST",
      /Expected topics array to be set, such as \{ groupId, topics: \["orders"\] \}; got "t" \(a string\)/,
    );
    // A SyntaxError before.
    await expectRefused(
      run(admin.setOffsets({ groupId: "g", topic: "t", partitions: [{ partition: 0, offset: "abc" }] })),
      "INVALID_REQUEST",
      /Invalid offset, expected a long received "abc" \(a string\)/,
    );
    await expectRefused(
      run(admin.setOffsets({ groupId: "g", topic: "t", partitions: [] })),
      "INVALID_REQUEST",
      /Invalid partitions \[\] \(a object\): pass partitions: \[\{ partition: 0, offset: "42" \}\]/,
    );
    // Stored an offset for t-9 before; Kafka's OffsetCommit answers UNKNOWN_TOPIC_OR_PARTITION.
    await expectRefused(
      run(admin.setOffsets({ groupId: "g", topic: "t", partitions: [{ partition: 9, offset: "1" }] })),
      "UNKNOWN_TOPIC_OR_PARTITION",
      /^topic 't' has partitions 0 to 1; partition 9 does not exist: group 'g' keeps no offset for it \(1 offset\(s\) of partitions the cluster does not have; nothing was set\)\. Set offsets of existing partitions only$/,
    );
    // "groupIds.map is not a function" before.
    await expectRefused(
      run(admin.deleteGroups("g" as never)),
      "INVALID_REQUEST",
      /^admin.deleteGroups\(groupIds\): Invalid groupIds array "g" \(a string\): pass the names in an array/,
    );
    await expectRefused(run(admin.describeGroups("g" as never)), "INVALID_REQUEST", /Invalid groupIds array/);
    expect(cluster.groups.fetchOffsets("g").size).toBe(0);
    expect(cluster.groups.fetchOffsets("undefined").size).toBe(0);
    // Good arguments still set and read offsets.
    await run(admin.setOffsets({ groupId: "g", topic: "t", partitions: [{ partition: 1, offset: "0" }] }));
    const [fetched] = await run(admin.fetchOffsets({ groupId: "g", topics: ["t"] }));
    expect(fetched?.partitions.map((p) => p.offset)).toEqual(["-1", "0"]);
    // kafkajs sends `topics: []` as null, Kafka's every topic: it answered nothing before.
    for (const topics of [[], undefined]) {
      const all = await run(admin.fetchOffsets({ groupId: "g", ...(topics ? { topics } : {}) }));
      expect(all.map((t) => [t.topic, t.partitions.map((p) => p.offset)])).toEqual([["t", ["-1", "0"]]]);
    }
  });
});
