import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { KafkajsSourceCluster } from "../../src/index";
import { createServedTopics, kafkaClient } from "./helpers";

describe("KafkajsSourceCluster's connections to the real broker", () => {
  const admin = kafkaClient("connections-test").admin();

  beforeAll(async () => {
    await admin.connect();
    await createServedTopics(admin, [{ topic: "connections", numPartitions: 1 }]);
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
});
