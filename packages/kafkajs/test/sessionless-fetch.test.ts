import { afterEach, describe, expect, it } from "vitest";
import { KafkajsSourceCluster } from "../src/kafkajs-source";
import { fakeBroker, type SeenFetch } from "./fixtures/fake-fetch-broker";

const closing: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

const fetchOf = (clientId: string, sessionless?: boolean) => ({
  clientId,
  brokerId: 1,
  maxBytes: 1,
  ...(sessionless === undefined ? {} : { sessionless }),
  partitions: [
    { topic: "t", partition: 0, fetchOffset: 5n, lastFetchedEpoch: -1, currentLeaderEpoch: -1, maxBytes: 1 },
  ],
});

/** A broker that opens session 7 for every full fetch asking for one (epoch 0), as Kafka's does. */
async function sessionOpeningSource(): Promise<{ source: KafkajsSourceCluster; seen: SeenFetch[] }> {
  const broker = await fakeBroker((fetch) => ({
    sessionId: fetch.epoch === 0 ? 7 : fetch.sessionId === 7 ? 7 : 0,
    topics: [{ topic: "t", partitions: [{ partition: 0, hw: 5n }] }],
  }));
  const source = new KafkajsSourceCluster("m", { "bootstrap.servers": `127.0.0.1:${broker.port}` });
  await source.metadata([]); // learns node 1's address
  closing.push(broker.close, () => source.close());
  return { source, seen: broker.seen };
}

describe("a sessionless fetch (a probe, such as --recover's READ check)", () => {
  it("is sent with session id 0 and epoch -1, and leaves no fetch session behind", async () => {
    const { source, seen } = await sessionOpeningSource();
    const { partitions } = await source.fetch(fetchOf("cluster-mirror-m-recover", true));
    expect(partitions[0]).toMatchObject({ topic: "t", partition: 0, highWatermark: 5n });
    expect(partitions[0]?.error).toBeUndefined();
    await source.fetch(fetchOf("cluster-mirror-m-recover", true));
    expect(seen.map((f) => [f.sessionId, f.epoch])).toEqual([
      [0, -1],
      [0, -1],
    ]);
    expect(source.fetchSessions()).toEqual([]);
  });

  it("leaves a fetcher's session with the same broker as it was", async () => {
    const { source, seen } = await sessionOpeningSource();
    await source.fetch(fetchOf("fetcher"));
    await source.fetch(fetchOf("cluster-mirror-m-recover", true));
    await source.fetch(fetchOf("fetcher"));
    // The fetcher's second fetch is incremental in its session (id 7, epoch 1): the probe did not move it.
    expect(seen.map((f) => [f.sessionId, f.epoch])).toEqual([
      [0, 0],
      [0, -1],
      [7, 1],
    ]);
    expect(source.fetchSessions()).toEqual([
      { brokerId: 1, clientId: "fetcher", sessionId: 7, epoch: 2, partitions: 1 },
    ]);
  });
});
