import { controlTypeOf, decodeRecords } from "@cluster-mirror/protocol";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { KafkajsSourceCluster } from "../../src/index";
import {
  caughtUpWithBroker,
  compactionSettled,
  createServedTopics,
  destinationBatches,
  hexOf,
  kafkaClient,
  runJava,
  startDestination,
  storedBatches,
  until,
} from "./helpers";

describe("what real Kafka writes: Kafka's Java producer, LogAppendTime, compaction, many partitions", () => {
  const kafka = kafkaClient("topics-test");
  const admin = kafka.admin();
  const dest = startDestination(41);
  const source = new KafkajsSourceCluster("oracle", { "bootstrap.servers": inject("kafkaBootstrap") });

  /** Mirrors `topic` (mirror `mirror`) and checks every partition against the broker's segment files. */
  async function mirrorAndCompare(mirror: string, topic: string, partitions: readonly number[]) {
    if (!dest.mirroring.admin.listMirrors().some((m) => m.name === mirror))
      await dest.mirroring.admin.createMirror(mirror, { "bootstrap.servers": inject("kafkaBootstrap") });
    await dest.mirroring.admin.addTopics(mirror, topic);
    await dest.mirroring.whenState(mirror, "MIRRORING", { topic, timeoutMs: 120_000 });
    await caughtUpWithBroker(dest.cluster, source, topic, partitions);
    for (const p of partitions) {
      expect(hexOf(destinationBatches(dest.cluster, topic, p))).toEqual(hexOf(storedBatches(topic, p)));
    }
  }

  beforeAll(async () => {
    await admin.connect();
  });

  afterAll(async () => {
    await dest.close();
    await source.close();
    await admin.disconnect();
  });

  it("mirrors Kafka's Java producer byte for byte: every codec, repeated headers, a committed and an aborted transaction", async () => {
    const topic = "java-produced";
    await createServedTopics(admin, [{ topic, numPartitions: 1 }]);
    expect(await runJava("JavaProducer.java", [inject("kafkaBootstrap"), topic])).toContain("produced");
    await mirrorAndCompare("k", topic, [0]);
    const batches = destinationBatches(dest.cluster, topic, 0);
    expect(new Set(batches.filter((b) => !b.isControl).map((b) => b.compression))).toEqual(
      new Set([0, 1, 2, 3, 4]),
    );
    expect(batches.filter((b) => b.isControl).map((b) => controlTypeOf(b))).toEqual([1, 0]);
    const first = decodeRecords(batches[0]!)[0]!;
    expect(first.headers.map((h) => h.key)).toEqual(["h", "h"]);
  });

  it("keeps LogAppendTime batches as the broker stamped them", async () => {
    const topic = "log-append-time";
    await createServedTopics(admin, [
      {
        topic,
        numPartitions: 1,
        configEntries: [
          { name: "message.timestamp.type", value: "LogAppendTime" },
          { name: "retention.ms", value: "86400000" },
        ],
      },
    ]);
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    for (let i = 0; i < 5; i++)
      await producer.send({ topic, messages: [{ value: `v${i}`, timestamp: "1000" }] });
    await producer.disconnect();
    await mirrorAndCompare("k", topic, [0]);
    const batches = destinationBatches(dest.cluster, topic, 0);
    for (const b of batches) {
      expect(b.timestampType).toBe(1);
      expect(b.maxTimestamp).toBeGreaterThan(1000n);
    }
    // The source's dynamic configs came along, except message.timestamp.* (never copied, spec §7).
    const configs = dest.cluster.controller.image.topic(topic)?.configs;
    expect(configs?.get("retention.ms")).toBe("86400000");
    expect(configs?.has("message.timestamp.type")).toBe(false);
  });

  it('copies cleanup.policy="" (which Kafka accepts: neither compaction nor deletion) with the topic\'s other configs', async () => {
    const topic = "no-cleanup-policy";
    await createServedTopics(admin, [
      {
        topic,
        numPartitions: 1,
        configEntries: [
          { name: "cleanup.policy", value: "" },
          { name: "retention.ms", value: "86400000" },
        ],
      },
    ]);
    await mirrorAndCompare("k", topic, [0]);
    // Before: the destination refused "" and, the creation being all or nothing, the topic was never added.
    const configs = dest.cluster.controller.image.topic(topic)?.configs;
    expect(configs?.get("cleanup.policy")).toBe("");
    expect(configs?.get("retention.ms")).toBe("86400000");
  });

  it("mirrors a compacted topic after the broker's cleaner ran: offset gaps and a batch emptied by compaction", async () => {
    const topic = "compacted";
    await createServedTopics(admin, [
      {
        topic,
        numPartitions: 1,
        configEntries: [
          { name: "cleanup.policy", value: "compact" },
          { name: "segment.ms", value: "100" },
          { name: "min.cleanable.dirty.ratio", value: "0.01" },
          { name: "delete.retention.ms", value: "100" },
          { name: "min.compaction.lag.ms", value: "0" },
        ],
      },
    ]);
    // Producer A's last batch holds only keys that producer B overwrites later: compaction empties it but
    // keeps it (it carries A's producer state).
    const a = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    const b = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await a.connect();
    await b.connect();
    for (let i = 0; i < 5; i++) await a.send({ topic, messages: [{ key: `k${i % 2}`, value: `a${i}` }] });
    await a.send({ topic, messages: [{ key: "shared", value: "from a" }] });
    await b.send({ topic, messages: [{ key: "shared", value: "from b" }] });
    await new Promise((resolve) => setTimeout(resolve, 300));
    await b.send({ topic, messages: [{ key: "roll", value: "rolls the segment" }] });
    await until(async () => {
      const stored = storedBatches(topic, 0);
      if (stored.some((x) => x.recordCount === 0)) return undefined;
      // The cleaner only cleans closed segments, and a segment rolls only on an append: keep appending.
      await b.send({ topic, messages: [{ key: "roll", value: "rolls the segment" }] });
      return `the cleaner has not emptied producer A's last batch yet (${stored.length} batches stored)`;
    });
    await a.disconnect();
    await b.disconnect();
    // The cleaner goes on cleaning the last rolls: compare only once it has nothing left to clean.
    await until(async () => compactionSettled(topic, 0));
    const stored = storedBatches(topic, 0);
    // Offsets 0-2 (k0, k1 overwritten) are gone; the emptied batch is the producer state's last trace.
    expect(stored[0]!.baseOffset).toBeGreaterThan(0n);
    const emptied = stored.find((x) => x.recordCount === 0)!;
    expect(emptied.isControl).toBe(false);
    await mirrorAndCompare("k", topic, [0]);
  });

  it("mirrors many partitions at once", async () => {
    const topic = "wide";
    const n = 48;
    await createServedTopics(admin, [{ topic, numPartitions: n }]);
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    for (let round = 0; round < 3; round++)
      await producer.send({
        topic,
        messages: Array.from({ length: n }, (_, partition) => ({
          partition,
          value: `r${round}p${partition}`,
        })),
      });
    await producer.disconnect();
    await mirrorAndCompare(
      "wide",
      topic,
      Array.from({ length: n }, (_, p) => p),
    );
  });
});
