import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startKafkaCluster } from "../../scripts/kafka-broker.mjs";
import { KafkajsSourceCluster } from "../../src/index";
import { caughtUpWithBroker, kafkaClient, startDestination, until } from "./helpers";

/**
 * ListGroups goes to every source broker, each naming the groups it coordinates. This file runs its own
 * two-node KRaft cluster and kills the node that coordinates no group: with the quorum gone with it, no
 * controller fences it, so the other node's metadata still lists it (as during a broker's session timeout
 * on a larger cluster) and every listing asks it.
 */
describe("the group offset sync while a source broker that coordinates no group is down", () => {
  let kafkaCluster: Awaited<ReturnType<typeof startKafkaCluster>>;
  const dest = startDestination(83);

  beforeAll(async () => {
    kafkaCluster = await startKafkaCluster({ count: 2 });
  });

  afterAll(async () => {
    await dest.close();
    await kafkaCluster?.destroy();
  });

  it("syncs the groups of the broker that answers, reports the one that does not, and verify names it", async () => {
    const topic = "groups-kept";
    const kafka = kafkaClient("groups-broker-down", kafkaCluster.bootstrap);
    const admin = kafka.admin();
    await admin.connect();
    const oracle = new KafkajsSourceCluster("oracle", { "bootstrap.servers": kafkaCluster.bootstrap });
    try {
      // FindCoordinator creates __consumer_offsets (one partition, one replica): its leader coordinates
      // every group.
      await admin.describeGroups(["warm-up"]);
      let coordinator = -1;
      await until(async () => {
        const metadata = await admin
          .fetchTopicMetadata({ topics: ["__consumer_offsets"] })
          .catch((error: unknown) => String(error));
        if (typeof metadata === "string") return metadata;
        coordinator = metadata.topics[0]?.partitions[0]?.leader ?? -1;
        return coordinator >= 0 ? undefined : "__consumer_offsets has no leader yet";
      });
      const other = kafkaCluster.nodes.find((n) => n.nodeId !== coordinator)!;
      // A fresh two-node cluster: kafkajs's metadata may not list both brokers (or the controller) yet.
      await until(async () => {
        try {
          await admin.createTopics({
            topics: [{ topic, replicaAssignment: [{ partition: 0, replicas: [coordinator] }] }],
            waitForLeaders: false,
          });
          return undefined;
        } catch (error) {
          if ((await admin.listTopics().catch(() => [] as string[])).includes(topic)) return undefined;
          return `createTopics: ${error instanceof Error ? error.message : String(error)}`;
        }
      });
      const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
      await producer.connect();
      await until(async () => {
        const sent = await producer
          .send({ topic, messages: Array.from({ length: 10 }, (_, i) => ({ value: `m${i}` })) })
          .catch((error: unknown) => String(error));
        return typeof sent === "string" ? `produce: ${sent}` : undefined;
      });
      await producer.disconnect();
      const commit = (offset: number) =>
        admin.setOffsets({
          groupId: "readers",
          topic,
          partitions: [{ partition: 0, offset: String(offset) }],
        });
      await commit(3);

      await dest.mirroring.admin.createMirror("gd", {
        "bootstrap.servers": kafkaCluster.bootstrap,
        "mirror.metadata.refresh.interval.ms": "300",
      });
      await dest.mirroring.admin.addTopics("gd", topic);
      await caughtUpWithBroker(dest.cluster, oracle, topic, [0]);
      const synced = () => dest.cluster.groups.fetchOffsets("readers").get(`${topic}:0`)?.offset;
      await until(async () => (synced() === 3n ? undefined : `readers at ${synced()} on the destination`));

      // The broker that coordinates no group dies; the coordinator stays, and the group's consumers go on.
      await other.kill();
      await commit(8);

      // Kafka's ListConsumerGroupsResult: all() fails on the broker that is down, valid() has the others.
      await expect(oracle.listGroupOffsets()).rejects.toThrow(`source broker ${other.nodeId}`);
      const errors: Error[] = [];
      const valid = await oracle.listGroupOffsets({ onError: (e) => errors.push(e) });
      expect(valid.map((g) => [g.groupId, g.offsets.map((o) => o.offset)])).toEqual([["readers", [8n]]]);
      expect(errors.map((e) => e.message)).toEqual([
        expect.stringMatching(
          new RegExp(
            `^oracle: groups on source broker ${other.nodeId}: .*ECONNREFUSED.*; the groups it coordinates are left out of this listing until it answers$`,
          ),
        ),
      ]);

      // The mirror syncs the group, and reports the broker it cannot reach.
      await until(
        async () => (synced() === 8n ? undefined : `readers at ${synced()} on the destination`),
        60_000,
      );
      const reported = dest.mirroring.metrics
        .syncErrors("gd")
        .find((e) => e.kind === "ConsumerGroupOffsetSyncError");
      expect(reported?.count).toBeGreaterThan(0);
      expect(dest.warnings.join("\n")).toContain(`source broker ${other.nodeId}`);

      // verify compares the group it could list, and is not OK for the broker it could not ask.
      const v = await dest.mirroring.admin.verifyMirror("gd");
      expect(v.checks.find((c) => c.check === "batches")).toMatchObject({ ok: true });
      const groups = v.checks.find((c) => c.check === "group offsets");
      expect(groups).toMatchObject({
        ok: false,
        compared: expect.stringMatching(/^1 group, 1 committed offset; some groups not compared /),
        differences: [expect.stringContaining(`not compared: gd: groups on source broker ${other.nodeId}: `)],
      });
    } finally {
      await oracle.close();
      await admin.disconnect();
    }
  });
});
