import { afterEach, describe, expect, it } from "vitest";
import { KafkajsSourceCluster } from "../src/kafkajs-source";
import { fakeBroker } from "./fixtures/fake-fetch-broker";

const closing: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

/**
 * KIP-320: Kafka's clients keep the highest leader epoch seen for each partition and ignore a Metadata
 * answer with an older one (`Metadata.updateLatestMetadata`): it comes from a broker whose metadata lags,
 * such as a deposed leader cut off from the controller, which still names itself. Taken, it would route
 * the partition back to that broker and its old epoch.
 */
describe("a Metadata answer with an older leader epoch than one already seen", () => {
  async function source(topic: {
    name: string;
    errorCode: number;
    partitions: number;
    topicId?: string;
    leaderId?: number;
    leaderEpoch?: number;
  }) {
    const broker = await fakeBroker(() => ({ topics: [] }), [topic]);
    const source = new KafkajsSourceCluster("m", { "bootstrap.servers": `127.0.0.1:${broker.port}` });
    closing.push(broker.close, () => source.close());
    return source;
  }

  it("leaves the newer leader in place; a newer epoch still moves it", async () => {
    const topic = { name: "t", errorCode: 0, partitions: 1, leaderId: 2, leaderEpoch: 7 };
    const s = await source(topic);
    expect(await s.partitionLeaders(["t"])).toEqual([
      { topic: "t", partition: 0, leaderId: 2, leaderEpoch: 7 },
    ]);
    // A lagging broker's view: the deposed leader 1 at epoch 6.
    Object.assign(topic, { leaderId: 1, leaderEpoch: 6 });
    expect(await s.partitionLeaders(["t"])).toEqual([
      { topic: "t", partition: 0, leaderId: 2, leaderEpoch: 7 },
    ]);
    expect((await s.describeTopics({ configsOf: () => false }))[0]?.partitions).toEqual([
      { partition: 0, leaderId: 2, leaderEpoch: 7 },
    ]);
    // The same epoch (a leader that went offline within it) and newer ones are taken.
    Object.assign(topic, { leaderId: -1, leaderEpoch: 7 });
    expect(await s.partitionLeaders(["t"])).toEqual([
      { topic: "t", partition: 0, leaderId: -1, leaderEpoch: 7 },
    ]);
    Object.assign(topic, { leaderId: 1, leaderEpoch: 8 });
    expect(await s.partitionLeaders(["t"])).toEqual([
      { topic: "t", partition: 0, leaderId: 1, leaderEpoch: 8 },
    ]);
  });

  it("is taken for a topic created again under the name (another id: epochs start over)", async () => {
    const topic = {
      name: "t",
      errorCode: 0,
      partitions: 1,
      topicId: "00000000-0000-0000-0000-00000000000a",
      leaderId: 2,
      leaderEpoch: 7,
    };
    const s = await source(topic);
    await s.partitionLeaders(["t"]);
    Object.assign(topic, { topicId: "00000000-0000-0000-0000-00000000000b", leaderId: 1, leaderEpoch: 0 });
    expect(await s.partitionLeaders(["t"])).toEqual([
      { topic: "t", partition: 0, leaderId: 1, leaderEpoch: 0 },
    ]);
  });
});
