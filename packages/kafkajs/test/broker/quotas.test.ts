import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { KafkajsSourceCluster } from "../../src/index";
import {
  caughtUpWithBroker,
  createServedTopics,
  destinationBatches,
  hexOf,
  kafkaClient,
  runJava,
  startDestination,
  storedBatches,
  until,
} from "./helpers";

/** Sets (rate) or removes (undefined) the source's fetch byte-rate quota of `clientIds`. */
async function setFetchQuota(rate: number | undefined, clientIds: readonly string[]): Promise<void> {
  const printed = await runJava("JavaClientQuota.java", [
    inject("kafkaBootstrap"),
    rate === undefined ? "-" : String(rate),
    ...clientIds,
  ]);
  expect(printed).toContain(`for ${clientIds.length} client id(s)`);
}

describe("source quotas (spec §8): the source throttles one mirror by its fetchers' client ids", () => {
  const kafka = kafkaClient("quota-test");
  const admin = kafka.admin();
  const throttledDest = startDestination(61);
  const freeDest = startDestination(62);
  const topic = "quota-orders";
  // Every client id mirror 'throttled' can present: one fetcher (the default) on each destination broker.
  const throttledIds = [0, 1, 2].map((b) => `cluster-mirror-throttled-broker-${b}-fetcher-0`);

  beforeAll(async () => {
    await admin.connect();
    await createServedTopics(admin, [{ topic, numPartitions: 1 }]);
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    // 4 MiB in 64 KiB records: several fetches of 1 MiB (the mirror's partition fetch size) each.
    for (let i = 0; i < 8; i++)
      await producer.send({
        topic,
        messages: Array.from({ length: 8 }, (_, j) => ({ value: Buffer.alloc(64 << 10, i * 8 + j) })),
      });
    await producer.disconnect();
    await setFetchQuota(20_000, throttledIds);
  });

  afterAll(async () => {
    await throttledDest.close();
    await freeDest.close();
    await admin.disconnect();
  });

  it("a quota on one mirror's client ids holds it back while another mirror of the same topic copies it all; nothing is lost", async () => {
    const source = { "bootstrap.servers": inject("kafkaBootstrap") };
    await throttledDest.mirroring.admin.createMirror("throttled", source);
    await freeDest.mirroring.admin.createMirror("free", source);
    await throttledDest.mirroring.admin.addTopics("throttled", topic);
    await freeDest.mirroring.admin.addTopics("free", topic);
    const lagOf = async (dest: typeof freeDest, mirror: string) =>
      (await dest.mirroring.admin.describe(mirror)).find((r) => r.topic === topic)?.lag;
    await until(async () => ((await lagOf(freeDest, "free")) === 0n ? undefined : "the free mirror lags"));
    // The quota (20 kB/s) lets about one fetch through per window; by now the throttled one is behind.
    const behind = await lagOf(throttledDest, "throttled");
    expect(behind == null || behind > 0n, `throttled mirror lag ${behind}`).toBe(true);
    expect(destinationBatches(throttledDest.cluster, topic, 0).length).toBeLessThan(
      destinationBatches(freeDest.cluster, topic, 0).length,
    );

    await setFetchQuota(undefined, throttledIds);
    await until(async () =>
      (await lagOf(throttledDest, "throttled")) === 0n ? undefined : "the throttled mirror lags",
    );
    const oracle = new KafkajsSourceCluster("oracle", source);
    try {
      for (const dest of [throttledDest, freeDest]) {
        await caughtUpWithBroker(dest.cluster, oracle, topic, [0]);
        expect(hexOf(destinationBatches(dest.cluster, topic, 0))).toEqual(hexOf(storedBatches(topic, 0)));
      }
    } finally {
      await oracle.close();
    }
  });
});
