import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startKafkaCluster } from "../../scripts/kafka-broker.mjs";
import { KafkajsSourceCluster } from "../../src/index";
import {
  caughtUpWithBroker,
  destinationBatches,
  hexOf,
  kafkaClient,
  startDestination,
  storedBatches,
  until,
} from "./helpers";

/**
 * A leader move needs a second broker: this file runs its own two-node KRaft cluster (both voters, so
 * leadership is moved by reassignment, not by stopping a node, which would lose the quorum).
 */
describe("the source partition's leader moves to another broker in the middle of mirroring", () => {
  let kafkaCluster: Awaited<ReturnType<typeof startKafkaCluster>>;
  const dest = startDestination(51);

  beforeAll(async () => {
    kafkaCluster = await startKafkaCluster({ count: 2 });
  });

  afterAll(async () => {
    await dest.close();
    await kafkaCluster?.destroy();
  });

  it("re-routes to the new leader and loses nothing", async () => {
    const topic = "moving";
    const kafka = kafkaClient("leader-move", kafkaCluster.bootstrap);
    const admin = kafka.admin();
    await admin.connect();
    const source = new KafkajsSourceCluster("oracle", { "bootstrap.servers": kafkaCluster.bootstrap });
    try {
      // kafkajs's waitForLeaders gives up when the node it asks has not heard of the topic yet (the other
      // node may lag behind the controller under load): wait on both nodes' metadata instead.
      // A fresh two-node cluster: kafkajs's metadata may not list both brokers (or the controller) yet, and
      // then createTopics throws; ask again until the topic exists.
      await until(async () => {
        try {
          await admin.createTopics({
            topics: [{ topic, replicaAssignment: [{ partition: 0, replicas: [1, 2] }] }],
            waitForLeaders: false,
          });
          return undefined;
        } catch (error) {
          if ((await admin.listTopics().catch(() => [] as string[])).includes(topic)) return undefined;
          return `createTopics: ${error instanceof Error ? error.message : String(error)}`;
        }
      });
      for (const node of kafkaCluster.nodes) {
        const one = new KafkajsSourceCluster("ready", { "bootstrap.servers": node.bootstrap });
        await until(async () => {
          // Until the topic reaches this node, its answers (configs included) may be UNKNOWN_TOPIC_OR_PARTITION.
          const topics = await one.describeTopics().catch((error: unknown) => String(error));
          if (typeof topics === "string") return `node ${node.nodeId}: ${topics}`;
          const p = topics.find((t) => t.name === topic)?.partitions[0];
          return p?.leaderId === 1 ? undefined : `node ${node.nodeId} does not see ${topic}'s leader yet`;
        }).finally(() => one.close());
      }
      const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
      await producer.connect();
      const produce = async (from: number) => {
        for (let i = from; i < from + 10; i++) await producer.send({ topic, messages: [{ value: `m${i}` }] });
      };
      await produce(0);
      await dest.mirroring.admin.createMirror("mv", { "bootstrap.servers": kafkaCluster.bootstrap });
      await dest.mirroring.admin.addTopics("mv", topic);
      await caughtUpWithBroker(dest.cluster, source, topic, [0]);
      const before = (await source.describeTopics()).find((t) => t.name === topic)!.partitions[0]!;
      expect(before.leaderId).toBe(1);

      // Broker 1 leaves the replica set: broker 2 (in sync) becomes the leader with a new epoch.
      await admin.alterPartitionReassignments({
        topics: [{ topic, partitionAssignment: [{ partition: 0, replicas: [2] }] }],
      });
      await until(async () => {
        const p = (await source.describeTopics()).find((t) => t.name === topic)!.partitions[0]!;
        return p.leaderId === 2 ? undefined : `leader still ${p.leaderId}`;
      });
      await produce(10);
      await producer.disconnect();
      await caughtUpWithBroker(dest.cluster, source, topic, [0]);

      const after = (await source.describeTopics()).find((t) => t.name === topic)!.partitions[0]!;
      expect(after.leaderEpoch).toBeGreaterThan(before.leaderEpoch);
      const node2 = kafkaCluster.nodes.find((n) => n.nodeId === 2)!;
      const stored = storedBatches(topic, 0, path.join(node2.dir, "data"));
      expect(stored).toHaveLength(20);
      expect(hexOf(destinationBatches(dest.cluster, topic, 0))).toEqual(hexOf(stored));
      expect(stored.at(-1)!.partitionLeaderEpoch).toBe(after.leaderEpoch);
      const [row] = await dest.mirroring.admin.describe("mv");
      expect(row).toMatchObject({ state: "MIRRORING", lag: 0n });
    } finally {
      await source.close();
      await admin.disconnect();
    }
  });
});
