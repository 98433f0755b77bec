import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { KafkajsSourceCluster } from "../../src/index";
import { createServedTopics, kafkaClient } from "./helpers";

const MANY = 32;

describe("KafkajsSourceCluster's connections to the real broker", () => {
  const admin = kafkaClient("connections-test").admin();

  beforeAll(async () => {
    await admin.connect();
    await createServedTopics(admin, [
      { topic: "connections", numPartitions: 1 },
      { topic: "connections-many", numPartitions: MANY },
    ]);
    const producer = kafkaClient("connections-test").producer();
    await producer.connect();
    await producer.send({
      topic: "connections-many",
      messages: Array.from({ length: MANY }, (_, p) =>
        Array.from({ length: p + 1 }, () => ({ partition: p, value: "v" })),
      ).flat(),
    });
    await producer.disconnect();
  });

  afterAll(async () => {
    await admin.disconnect();
  });

  it("asks each broker its ApiVersions once: the fetchers' connections reuse the answer", async () => {
    const lines: string[] = [];
    const source = new KafkajsSourceCluster(
      "versions",
      { "bootstrap.servers": inject("kafkaBootstrap") },
      { debug: (line) => lines.push(line), fetchMaxWaitMs: 10 },
    );
    try {
      const [leader] = await source.partitionLeaders(["connections"]);
      expect(await source.listOffsets("connections", 0, -1n)).toBe(0n);
      for (const clientId of ["versions-fetcher-0", "versions-fetcher-1", "versions-fetcher-2"]) {
        const answer = await source.fetch({
          clientId,
          brokerId: leader!.leaderId,
          maxBytes: 1 << 20,
          partitions: [
            {
              topic: "connections",
              partition: 0,
              fetchOffset: 0n,
              lastFetchedEpoch: -1,
              currentLeaderEpoch: leader!.leaderEpoch,
              maxBytes: 1 << 20,
            },
          ],
        });
        expect(answer.partitions[0]!.error).toBeUndefined();
      }
      const requests = lines.filter((l) => /Request \w+\(key/.test(l));
      const fetches = requests.filter((l) => l.includes("Request Fetch("));
      // Three fetcher connections each sent a Fetch; ApiVersions went once to the bootstrap server and once
      // to broker 1 (the admin connection), never on the fetchers' connections.
      expect(fetches).toHaveLength(3);
      expect(requests.filter((l) => l.includes("Request ApiVersions("))).toHaveLength(2);
    } finally {
      await source.close();
    }
  });

  it("closing while a first (full) fetch is in flight still ends the session that fetch opens", async () => {
    const lines: string[] = [];
    const source = new KafkajsSourceCluster(
      "closing",
      { "bootstrap.servers": inject("kafkaBootstrap") },
      // The broker holds the fetch (nothing new to read) for up to 1 s: close() is called meanwhile.
      { debug: (line) => lines.push(line), fetchMaxWaitMs: 1_000 },
    );
    const [leader] = await source.partitionLeaders(["connections"]);
    const end = await source.listOffsets("connections", 0, -1n);
    // With its topic id: a fetch by name alone would go without a session (see fetch-sessions.test.ts).
    const topicId = (await source.describeTopics()).find((t) => t.name === "connections")?.topicId;
    const fetch = source.fetch({
      clientId: "closing-fetcher-0",
      brokerId: leader!.leaderId,
      maxBytes: 1 << 20,
      partitions: [
        {
          topic: "connections",
          partition: 0,
          fetchOffset: end,
          lastFetchedEpoch: -1,
          currentLeaderEpoch: leader!.leaderEpoch,
          maxBytes: 1 << 20,
          ...(topicId === undefined ? {} : { topicId }),
        },
      ],
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const open = source.fetchSessions();
    await source.close();
    await fetch;
    expect(open).toMatchObject([{ sessionId: 0 }]); // not yet answered when close() began
    // The full fetch, then the close of the session its answer opened (epoch -1).
    expect(lines.filter((l) => l.includes("Request Fetch("))).toHaveLength(2);
  });

  it("asks a leader once for the offsets of all the partitions looked up together, each with its own answer", async () => {
    const lines: string[] = [];
    const source = new KafkajsSourceCluster(
      "lookups",
      { "bootstrap.servers": inject("kafkaBootstrap") },
      { debug: (line) => lines.push(line) },
    );
    try {
      const partitions = Array.from({ length: MANY }, (_, p) => p);
      await source.partitionLeaders(["connections-many"]);
      const [starts, ends, epochEnds] = await Promise.all([
        Promise.all(partitions.map((p) => source.listOffsets("connections-many", p, -2n))),
        Promise.all(partitions.map((p) => source.listOffsets("connections-many", p, -1n))),
        Promise.all(partitions.map((p) => source.endOffsetForEpoch("connections-many", p, 0))),
      ]);
      const broker = await admin.fetchTopicOffsets("connections-many");
      const high = (p: number) => BigInt(broker.find((o) => o.partition === p)!.high);
      expect(starts).toEqual(partitions.map(() => 0n));
      expect(ends).toEqual(partitions.map(high));
      expect(ends).toEqual(partitions.map((p) => BigInt(p + 1)));
      expect(epochEnds).toEqual(partitions.map((p) => ({ leaderEpoch: 0, endOffset: high(p) })));
      const requests = lines.filter((l) => /Request \w+\(key/.test(l));
      // Earliest and latest of the same partitions go in two requests: Kafka refuses a partition twice in one.
      expect(requests.filter((l) => l.includes("Request ListOffsets("))).toHaveLength(2);
      expect(requests.filter((l) => l.includes("Request OffsetForLeaderEpoch("))).toHaveLength(1);
    } finally {
      await source.close();
    }
  });

  it("tries each bootstrap server in turn: a first one that is down or does not resolve hides nothing", async () => {
    for (const down of ["127.0.0.1:1", "no-such-host.invalid:9092"]) {
      const source = new KafkajsSourceCluster(
        "bootstrap-list",
        { "bootstrap.servers": `${down},${inject("kafkaBootstrap")}` },
        { connectionTimeoutMs: 2_000 },
      );
      try {
        expect(await source.clusterId()).toBe(inject("kafkaClusterId"));
        // The server that answered stays first: the next call does not try the one that is down again.
        expect(await source.listOffsets("connections", 0, -2n)).toBe(0n);
      } finally {
        await source.close();
      }
    }
  });
});
