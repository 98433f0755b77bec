import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type KafkaBrokerHandle, startKafkaBroker } from "../../scripts/kafka-broker.mjs";
import { KafkajsSourceCluster } from "../../src/index";
import {
  caughtUpWithBroker,
  createServedTopics,
  destinationBatches,
  hexOf,
  kafkaClient,
  startDestination,
  storedBatches,
  until,
} from "./helpers";

/**
 * This file restarts its broker, so it runs its own (the run's shared broker serves other files in
 * parallel); the jars are already cached by the global setup.
 */
describe("the source broker restarts in the middle of mirroring", () => {
  let broker: KafkaBrokerHandle;
  const dest = startDestination(31);

  beforeAll(async () => {
    broker = await startKafkaBroker();
  });

  afterAll(async () => {
    await dest.close();
    await broker?.destroy();
  });

  it("loses nothing: the fetchers reconnect, follow the new leader epoch, and the log stays byte-identical", async () => {
    const topic = "restart-events";
    const produce = async (from: number) => {
      const kafka = kafkaClient("restart-producer", broker.bootstrap);
      const admin = kafka.admin();
      await admin.connect();
      if (from === 0) await createServedTopics(admin, [{ topic, numPartitions: 2 }]);
      const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
      await producer.connect();
      for (let i = from; i < from + 20; i++)
        await producer.send({ topic, messages: [0, 1].map((partition) => ({ partition, value: `e${i}` })) });
      await producer.disconnect();
      await admin.disconnect();
    };
    await produce(0);
    await dest.mirroring.admin.createMirror("r", { "bootstrap.servers": broker.bootstrap });
    await dest.mirroring.admin.addTopics("r", topic);
    await dest.mirroring.whenCaughtUp("r", { timeoutMs: 120_000 });
    const epochBefore = destinationBatches(dest.cluster, topic, 0).at(-1)!.partitionLeaderEpoch;

    const errorsBefore = dest.mirroring.metrics.fetchErrorCounts().find((e) => e.mirror === "r")?.count ?? 0;
    await broker.stop();
    // While the broker is down the fetchers cannot reach it: the outage shows in the fetch errors counter
    // (the lag gauge keeps the last-seen high watermark).
    await until(async () => {
      const now = dest.mirroring.metrics.fetchErrorCounts().find((e) => e.mirror === "r")?.count ?? 0;
      return now > errorsBefore ? undefined : `fetch errors still ${now}`;
    }, 30_000);
    await broker.start();
    await produce(20);
    const source = new KafkajsSourceCluster("oracle", { "bootstrap.servers": broker.bootstrap });
    await caughtUpWithBroker(dest.cluster, source, topic, [0, 1]).finally(() => source.close());

    const dataDir = path.join(broker.dir, "data");
    for (const partition of [0, 1]) {
      const stored = storedBatches(topic, partition, dataDir);
      expect(stored).toHaveLength(40);
      const mirrored = destinationBatches(dest.cluster, topic, partition);
      expect(hexOf(mirrored)).toEqual(hexOf(stored));
      // The restart moved leadership (to no one, then back): the later batches carry a newer epoch.
      expect(mirrored.at(-1)!.partitionLeaderEpoch).toBeGreaterThan(epochBefore);
    }
    const rows = await dest.mirroring.admin.describe("r");
    expect(rows.map((r) => [r.state, r.lag])).toEqual([
      ["MIRRORING", 0n],
      ["MIRRORING", 0n],
    ]);
  });
});
