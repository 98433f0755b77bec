import { describe, expect, it } from "vitest";
import { mirrorFetcherClientId } from "../src/fetcher/client-id";
import { bind, drive, leaderLog, mirrorEnv, produce, valuesBatch } from "./data-helpers";

const KB = "x".repeat(1000);

describe("the source's per-client-id fetch quota (spec §8)", () => {
  it("bounds each answer to one quota window's worth, as Kafka caps a consumer's fetch", async () => {
    // Default fetch sizes (1 MiB per partition): without the cap, the first answer brings everything.
    const env = mirrorEnv();
    for (let i = 0; i < 100; i++) await produce(env, valuesBatch([KB]));
    const batchBytes = valuesBatch([KB]).length;
    env.source.quotas.setQuota("fetch", mirrorFetcherClientId("m1", 0, 0), 2000);
    env.manager.addPartition(env.key());
    for (let second = 1; second <= 150; second++) {
      await drive(env, 1000);
      const mirrored = env.manager.metrics().bytesMirrored;
      // 2000 B/s, plus one answer of 10 s' worth (Kafka's quota * (quota.window.num - 1)), one batch over.
      expect(mirrored, `after ${second} s`).toBeLessThanOrEqual(2000 * (second + 10) + batchBytes);
    }
    // And it gets there: a throttled answer brings nothing and its bytes are taken back from the quota.
    expect(leaderLog(env.destination).logEndOffset).toBe(100n);
  });

  it("waits out the throttle time the source answers before fetching from it again", async () => {
    const fetchedAt: { at: number; throttleTimeMs: number }[] = [];
    const env = mirrorEnv({
      config: { partitionMaxBytes: 2048 },
      wrapSource: (s) => ({
        ...bind(s),
        fetch: async (request) => {
          const answer = await s.fetch(request);
          const data = answer.partitions.some((p) => p.recordSlices.length > 0);
          // What a Kafka broker over the client's quota answers (KIP-219): the data, and how long to wait.
          const throttleTimeMs = data ? 3000 : 0;
          fetchedAt.push({ at: env.clock.now(), throttleTimeMs });
          return { ...answer, throttleTimeMs };
        },
      }),
    });
    for (let i = 0; i < 10; i++) await produce(env, valuesBatch([KB]));
    env.manager.addPartition(env.key());
    await drive(env, 30_000);
    expect(leaderLog(env.destination).logEndOffset).toBe(10n);
    const throttled = fetchedAt.filter((f) => f.throttleTimeMs > 0).length;
    expect(throttled).toBeGreaterThanOrEqual(5);
    for (let i = 1; i < fetchedAt.length; i++) {
      const previous = fetchedAt[i - 1]!;
      expect(fetchedAt[i]!.at - previous.at, `fetch ${i}`).toBeGreaterThanOrEqual(previous.throttleTimeMs);
    }
  });
});
