import { describe, expect, it } from "vitest";
import { fetcherIndexFor, mirrorFetcherClientId } from "../src/fetcher/client-id";
import { isThrottledReplica, ReplicationQuota } from "../src/fetcher/replication-quota";
import { drive, leaderLog, mirrorEnv, produce, TOPIC, valuesBatch } from "./data-helpers";

const KB = "x".repeat(1000);

describe("mirror bandwidth control (spec §8)", () => {
  it("throttles only the listed partitions to mirror.replication.throttled.rate, changeable at run time", async () => {
    const env = mirrorEnv({ sourceAssignment: [[0], [0]], config: { partitionMaxBytes: 2048 } });
    for (let i = 0; i < 60; i++) {
      await produce(env, valuesBatch([KB]), 0);
      await produce(env, valuesBatch([KB]), 1);
    }
    const broker = { type: "broker" as const, name: "0" };
    env.destination.controller.incrementalAlterConfigs(broker, [
      { name: "mirror.replication.throttled.rate", op: "SET", value: "1000" },
    ]);
    env.destination.controller.incrementalAlterConfigs({ type: "topic", name: TOPIC }, [
      { name: "mirror.replication.throttled.replicas", op: "SET", value: "0:0" },
    ]);
    env.manager.addPartition(env.key(0));
    env.manager.addPartition(env.key(1));
    await drive(env, 5000);
    expect(leaderLog(env.destination, 1).logEndOffset).toBe(60n);
    const throttled = leaderLog(env.destination, 0).logEndOffset;
    expect(throttled).toBeGreaterThan(0n);
    expect(throttled).toBeLessThan(25n);
    // Lifting the rate applies on the next round.
    env.destination.controller.incrementalAlterConfigs(broker, [
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
  });

  it("reads throttled replica lists like Kafka", () => {
    expect(isThrottledReplica("*", 3, 1)).toBe(true);
    expect(isThrottledReplica("0:1, 3:1", 3, 1)).toBe(true);
    expect(isThrottledReplica("3:2", 3, 1)).toBe(false);
    expect(isThrottledReplica(undefined, 0, 0)).toBe(false);
    let now = 0;
    const quota = new ReplicationQuota({ now: () => now, advance: () => {} } as never);
    quota.record(5000);
    expect(quota.isQuotaExceeded(1000)).toBe(false);
    quota.record(6000);
    expect(quota.isQuotaExceeded(1000)).toBe(true);
    now += 12_000;
    expect(quota.isQuotaExceeded(1000)).toBe(false);
  });
});
