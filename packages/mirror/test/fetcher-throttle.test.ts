import { describe, expect, it } from "vitest";
import { fetcherIndexFor, mirrorFetcherClientId } from "../src/fetcher/client-id";
import {
  bind,
  drive,
  leaderLog,
  mirrorEnv,
  produce,
  throttleMirrorReplication,
  valuesBatch,
} from "./data-helpers";

const KB = "x".repeat(1000);

describe("mirror bandwidth control (spec §8)", () => {
  it("throttles only the listed partitions to mirror.replication.throttled.rate, changeable at run time", async () => {
    const env = mirrorEnv({ sourceAssignment: [[0], [0]], config: { partitionMaxBytes: 2048 } });
    for (let i = 0; i < 60; i++) {
      await produce(env, valuesBatch([KB]), 0);
      await produce(env, valuesBatch([KB]), 1);
    }
    throttleMirrorReplication(env, 1000, "0:0");
    env.manager.addPartition(env.key(0));
    env.manager.addPartition(env.key(1));
    await drive(env, 5000);
    expect(leaderLog(env.destination, 1).logEndOffset).toBe(60n);
    const throttled = leaderLog(env.destination, 0).logEndOffset;
    expect(throttled).toBeGreaterThan(0n);
    expect(throttled).toBeLessThan(25n);
    // Lifting the rate applies on the next round.
    env.destination.controller.incrementalAlterConfigs({ type: "broker", name: "0" }, [
      { name: "mirror.replication.throttled.rate", op: "DELETE" },
    ]);
    await drive(env, 1000);
    expect(leaderLog(env.destination, 0).logEndOffset).toBe(60n);
  });

  it("presents its client id to the source, whose per-client fetch quota throttles it", async () => {
    const env = mirrorEnv({ config: { partitionMaxBytes: 2048 } });
    for (let i = 0; i < 60; i++) await produce(env, valuesBatch([KB]));
    const clientId = mirrorFetcherClientId("m1", 0, 0);
    env.source.quotas.setQuota("fetch", clientId, 2000);
    env.manager.addPartition(env.key());
    const states = new Set<string>();
    for (let t = 0; t < 50; t++) {
      await drive(env, 100);
      for (const f of env.manager.metrics().fetchers) states.add(f.state);
    }
    expect(states.has("throttled")).toBe(true);
    const slow = leaderLog(env.destination).logEndOffset;
    expect(slow).toBeLessThan(45n);
    env.source.quotas.setQuota("fetch", clientId, undefined);
    await drive(env, 30_000);
    expect(leaderLog(env.destination).logEndOffset).toBe(60n);
  });

  it("names fetchers deterministically and spreads partitions over fetcher indexes", () => {
    expect(mirrorFetcherClientId("us-east", 2, 1)).toBe("cluster-mirror-us-east-broker-2-fetcher-1");
    const indexes = new Set(Array.from({ length: 32 }, (_, p) => fetcherIndexFor("orders", p, 4)));
    expect([...indexes].sort()).toEqual([0, 1, 2, 3]);
    expect(fetcherIndexFor("orders", 5, 4)).toBe(fetcherIndexFor("orders", 5, 4));
    expect(fetcherIndexFor("orders", 5, 1)).toBe(0);
    // Kafka's getFetcherId (Utils.abs(31 * topic.hashCode + partition) % n), as Java computes it, also where
    // that sum is negative.
    const kafka: [string, number, number][] = [
      ["orders", 0, 2],
      ["orders", 1, 1],
      ["payments", 0, 2],
      ["events", 0, 0],
      ["events", 1, 2],
      ["topic-a", 1, 0],
      ["my-topic", 0, 0],
      ["clicks", 1, 1],
    ];
    for (const [topic, partition, index] of kafka)
      expect(fetcherIndexFor(topic, partition, 3), `${topic}-${partition}`).toBe(index);
  });

  it("holds the rate from its first second (no burst of ten seconds' worth), and never starves the partition", async () => {
    const env = mirrorEnv({ config: { partitionMaxBytes: 4096 } });
    for (let i = 0; i < 100; i++) await produce(env, valuesBatch([KB]), 0);
    throttleMirrorReplication(env, 2000);
    env.manager.addPartition(env.key(0));
    for (let second = 1; second <= 30; second++) {
      await drive(env, 1000);
      const mirrored = env.manager.metrics().bytesMirrored;
      // At most the rate over the time so far, plus the one response that crossed it (4 KiB at most).
      expect(mirrored, `after ${second} s`).toBeLessThanOrEqual(2000 * second + 4096);
      // And it keeps going: at least the rate, less two responses, once its first window is past.
      if (second > 1) expect(mirrored, `after ${second} s`).toBeGreaterThanOrEqual(2000 * second - 2 * 4096);
    }
  });

  it("fetches from the source only what it mirrors: the fetch sent ahead counts the response's throttled bytes", async () => {
    const served = new Map<number, number>();
    const env = mirrorEnv({
      sourceAssignment: [[0], [0]],
      config: { partitionMaxBytes: 4096 },
      wrapSource: (s) => ({
        ...bind(s),
        fetch: async (request) => {
          const answer = await s.fetch(request);
          for (const p of answer.partitions) {
            const bytes = p.recordSlices.reduce((sum, slice) => sum + slice.length, 0);
            served.set(p.partition, (served.get(p.partition) ?? 0) + bytes);
          }
          return answer;
        },
      }),
    });
    for (let i = 0; i < 60; i++) {
      await produce(env, valuesBatch([KB]), 0);
      await produce(env, valuesBatch([KB]), 1);
    }
    throttleMirrorReplication(env, 2000, "0:0");
    env.manager.addPartition(env.key(0));
    env.manager.addPartition(env.key(1));
    await drive(env, 20_000);
    // Partition 1 is not throttled: all of it, fetched in the same fetcher as the throttled one.
    expect(leaderLog(env.destination, 1).logEndOffset).toBe(60n);
    const throttled = env.manager.metrics().partitions.find((p) => p.key.partition === 0)!;
    expect(throttled.bytesMirrored).toBeGreaterThan(0);
    expect(throttled.bytesMirrored).toBeLessThanOrEqual(2000 * 20 + 4096);
    // Nothing fetched for the throttled partition was thrown away (twice the rate on the network before).
    expect(served.get(0)).toBe(throttled.bytesMirrored);
  });
});
