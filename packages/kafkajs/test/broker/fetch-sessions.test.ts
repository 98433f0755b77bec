import type { SourceFetchPartitionResult, SourceFetchRequest } from "@cluster-mirror/mirror";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { KafkajsSourceCluster } from "../../src/index";
import { createServedTopics, kafkaClient } from "./helpers";

const TOPIC = "fetch-sessions";
const PARTITIONS = 24;
const ROUNDS = 12;

/** What a fetch gave a partition, as comparable text: error, offsets and the records' bytes. */
const seen = (r: SourceFetchPartitionResult) =>
  `${r.topic}-${r.partition} error=${r.error?.name ?? "-"} hw=${r.highWatermark} start=${r.logStartOffset} diverging=${r.divergingEpoch?.endOffset ?? "-"} records=${Buffer.concat(r.recordSlices).toString("hex")}`;

describe("incremental fetch sessions (KIP-227) against the real broker", () => {
  const client = kafkaClient("fetch-sessions-test");
  const admin = client.admin();
  const producer = client.producer();

  beforeAll(async () => {
    await admin.connect();
    await createServedTopics(admin, [{ topic: TOPIC, numPartitions: PARTITIONS }]);
    await producer.connect();
  });

  afterAll(async () => {
    await producer.disconnect();
    await admin.disconnect();
  });

  it("a session's fetches see exactly what sessionless full fetches see, while most partitions stay idle", async () => {
    const bootstrap = { "bootstrap.servers": inject("kafkaBootstrap") };
    const withSessions = new KafkajsSourceCluster("sessions", bootstrap, { fetchMaxWaitMs: 10 });
    const without = new KafkajsSourceCluster("sessionless", bootstrap, {
      fetchMaxWaitMs: 10,
      fetchSessions: false,
    });
    try {
      const leaders = await withSessions.partitionLeaders([TOPIC]);
      const topicId = (await withSessions.describeTopics()).find((t) => t.name === TOPIC)?.topicId;
      expect(topicId).toBeDefined();
      const brokers = [...new Set(leaders.map((l) => l.leaderId))];
      const position = new Map(leaders.map((l) => [l.partition, 0n]));
      for (let round = 0; round < ROUNDS; round++) {
        // A few partitions get records each round; the others stay idle (what sessions save the bytes of).
        const busy = [round % PARTITIONS, (round * 7 + 3) % PARTITIONS];
        await producer.send({
          topic: TOPIC,
          messages: busy.map((partition) => ({ partition, value: `round ${round}` })),
        });
        for (const brokerId of brokers) {
          const led = leaders.filter((l) => l.leaderId === brokerId);
          // From round 6 the fetcher drops the first partition of its list and takes it back at round 9.
          const wanted = led.filter((_l, i) => i !== 0 || round < 6 || round >= 9);
          // By id (Fetch v13, as the engine fetches) or by name alone (v12, then always sessionless).
          const request = (clientId: string, byId = true): SourceFetchRequest => ({
            clientId,
            brokerId,
            maxBytes: 1 << 20,
            partitions: wanted.map((l) => ({
              topic: TOPIC,
              partition: l.partition,
              fetchOffset: position.get(l.partition)!,
              lastFetchedEpoch: -1,
              currentLeaderEpoch: l.leaderEpoch,
              maxBytes: 1 << 20,
              ...(byId ? { topicId } : {}),
            })),
          });
          const a = await withSessions.fetch(request("sessions-fetcher-0"));
          const b = await without.fetch(request("sessionless-fetcher-0"));
          expect(a.partitions.map(seen)).toEqual(b.partitions.map(seen));
          const byName = await without.fetch(request("sessionless-fetcher-0", false));
          expect(byName.partitions.map(seen)).toEqual(b.partitions.map(seen));
          for (const p of b.partitions) {
            expect(p.error).toBeUndefined();
            if (p.recordSlices.length > 0) position.set(p.partition, p.highWatermark);
          }
        }
      }
      // Every partition was read to its end: the records of every round arrived through the session.
      const ends = await admin.fetchTopicOffsets(TOPIC);
      for (const o of ends) expect(position.get(o.partition)).toBe(BigInt(o.high));
      // One session per broker, never reset: each round moved its epoch by one (a session error would have
      // sent it back to 0 and then 1), and it holds the partitions the fetcher wants now.
      const sessions = withSessions.fetchSessions();
      expect(sessions).toHaveLength(brokers.length);
      for (const s of sessions) {
        expect(s.sessionId).not.toBe(0);
        expect(s.epoch).toBe(ROUNDS);
        expect(s.partitions).toBe(leaders.filter((l) => l.leaderId === s.brokerId).length);
      }
      expect(without.fetchSessions().every((s) => s.sessionId === 0)).toBe(true);
    } finally {
      await withSessions.close();
      await without.close();
    }
  });
});
