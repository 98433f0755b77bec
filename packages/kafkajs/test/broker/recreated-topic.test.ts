import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { KafkajsSourceCluster } from "../../src/index";
import {
  caughtUpWithBroker,
  createServedTopics,
  destinationBatches,
  hexOf,
  kafkaClient,
  startDestination,
  until,
} from "./helpers";

/**
 * A source topic deleted and created again under the same name while it is mirrored (KIP-516's case for
 * topic ids): fetches name the topic by id (Fetch v13), so the broker answers UNKNOWN_TOPIC_ID and the
 * new topic's records never land in the copy of the old one.
 */
describe("a real broker's topic deleted and created again while mirrored", () => {
  const kafka = kafkaClient("recreated-topic-test");
  const admin = kafka.admin();
  const dest = startDestination(61);
  const source = new KafkajsSourceCluster("oracle", { "bootstrap.servers": inject("kafkaBootstrap") });
  const topic = "recreated";

  async function produce(tag: string, count: number): Promise<void> {
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    for (let i = 0; i < count; i++)
      await producer.send({ topic, messages: [{ key: `k${i}`, value: `${tag}${i}` }] });
    await producer.disconnect();
  }

  async function topicId(): Promise<string | undefined> {
    const [info] = (await source.describeTopics()).filter((t) => t.name === topic);
    return info?.topicId;
  }

  beforeAll(async () => {
    await admin.connect();
  });

  afterAll(async () => {
    await dest.close();
    await source.close();
    await admin.disconnect();
  });

  it("never copies the new topic's records into the old one's mirror; the partition fails, then for good", async () => {
    await createServedTopics(admin, [{ topic, numPartitions: 1 }]);
    await produce("old", 5);
    await dest.mirroring.admin.createMirror("r", {
      "bootstrap.servers": inject("kafkaBootstrap"),
      "mirror.metadata.refresh.interval.ms": "1000",
    });
    await dest.mirroring.admin.addTopics("r", topic);
    await dest.mirroring.whenState("r", "MIRRORING", { topic, timeoutMs: 120_000 });
    await caughtUpWithBroker(dest.cluster, source, topic, [0]);
    const mirrored = hexOf(destinationBatches(dest.cluster, topic, 0));
    expect(mirrored).toHaveLength(5);
    const oldId = await topicId();
    expect(oldId).toBeDefined();

    await admin.deleteTopics({ topics: [topic] });
    // While the broker deletes it, the topic may still be listed but its configs already gone
    // (UNKNOWN_TOPIC_OR_PARTITION from DescribeConfigs): not deleted yet, ask again.
    await until(async () => {
      try {
        return (await topicId()) === undefined ? undefined : "still there";
      } catch (error) {
        return `being deleted: ${error instanceof Error ? error.message : String(error)}`;
      }
    });
    await until(async () => {
      try {
        await createServedTopics(admin, [{ topic, numPartitions: 1 }]);
        return undefined;
      } catch (error) {
        return `create again: ${error instanceof Error ? error.message : String(error)}`;
      }
    });
    const newId = await topicId();
    expect(newId).not.toBe(oldId);
    await produce("new", 20);

    // The adapter itself: the old id is refused, the new id (or the name alone) reads the new records.
    const leader = (await source.partitionLeaders([topic]))[0]!;
    const fetchBy = (id: string | undefined) =>
      source.fetch({
        clientId: "oracle-fetch",
        brokerId: leader.leaderId,
        maxBytes: 1 << 20,
        partitions: [
          {
            topic,
            partition: 0,
            fetchOffset: 5n,
            lastFetchedEpoch: -1,
            currentLeaderEpoch: -1,
            maxBytes: 1 << 20,
            ...(id === undefined ? {} : { topicId: id }),
          },
        ],
      });
    const byOld = (await fetchBy(oldId)).partitions[0]!;
    expect(byOld.error?.errorName).toBe("UNKNOWN_TOPIC_ID");
    expect(byOld.error?.message).toMatch(/deleted, or deleted and created again/);
    expect(byOld.recordSlices).toEqual([]);
    expect((await fetchBy(newId)).partitions[0]!.recordSlices.length).toBeGreaterThan(0);
    expect((await fetchBy(undefined)).partitions[0]!.recordSlices.length).toBeGreaterThan(0);

    // Reads by name (ListOffsets, OffsetsForLeaderEpoch) with the expected id: confirmed, or refused.
    await expect(source.listOffsets(topic, 0, -1n, oldId)).rejects.toMatchObject({
      errorName: "UNKNOWN_TOPIC_ID",
    });
    await expect(source.endOffsetForEpoch(topic, 0, 0, oldId)).rejects.toMatchObject({
      errorName: "UNKNOWN_TOPIC_ID",
    });
    expect(await source.listOffsets(topic, 0, -1n, newId)).toBe(20n);

    // The mirror, checked on every poll until its metadata refresh fails the partition for good.
    await until(async () => {
      expect(hexOf(destinationBatches(dest.cluster, topic, 0))).toEqual(mirrored);
      const [row] = await dest.mirroring.admin.describe("r");
      return row?.state === "FAILED" && row.retryAttempt === -1
        ? undefined
        : `${row?.state}: ${row?.errorMessage}`;
    });
    expect(hexOf(destinationBatches(dest.cluster, topic, 0))).toEqual(mirrored);
  });
});
