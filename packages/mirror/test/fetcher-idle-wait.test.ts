import { describe, expect, it } from "vitest";
import type { SourceCluster } from "../src/ports";
import {
  bind,
  drive,
  leaderLog,
  type MirrorEnv,
  mirrorEnv,
  produce,
  throttleMirrorReplication,
  valuesBatch,
} from "./data-helpers";

const KB = "x".repeat(1000);

/** Counts the fetches the fetchers send to the source. */
function countingFetches(): { fetches: number; wrap: (s: SourceCluster) => SourceCluster } {
  const counter = {
    fetches: 0,
    wrap: (s: SourceCluster): SourceCluster => ({
      ...bind(s),
      fetch: (request) => {
        counter.fetches++;
        return s.fetch(request);
      },
    }),
  };
  return counter;
}

/** The fetcher states `metrics()` shows, sampled every 100 ms for `ms`. */
async function statesSeen(env: MirrorEnv, ms: number): Promise<Set<string>> {
  const states = new Set<string>();
  for (let t = 0; t < ms; t += 100) {
    await drive(env, 100);
    for (const f of env.manager.metrics().fetchers) states.add(f.state);
  }
  return states;
}

/**
 * Produces 30 batches of 1 KB, throttles the destination to 1000 B/s, adds the partition and returns the
 * fetcher states seen over 5 s: every partition over the quota from the first fetch.
 */
async function statesOverQuota(env: MirrorEnv): Promise<Set<string>> {
  for (let i = 0; i < 30; i++) await produce(env, valuesBatch([KB]));
  throttleMirrorReplication(env, 1000);
  env.manager.addPartition(env.key());
  return statesSeen(env, 5000);
}

describe("a fetcher with nothing to fetch waits; only a quota throttles it", () => {
  it("an idle mirror (caught up, no quota) shows waiting, never throttled", async () => {
    const env = mirrorEnv();
    for (let i = 0; i < 5; i++) await produce(env, valuesBatch([KB]));
    env.manager.addPartition(env.key());
    const states = await statesSeen(env, 5000);
    expect(leaderLog(env.destination).logEndOffset).toBe(5n);
    expect(states.has("waiting")).toBe(true);
    expect(states.has("throttled")).toBe(false);
  });

  it("every partition over the destination's quota shows throttled", async () => {
    const env = mirrorEnv({ config: { partitionMaxBytes: 2048 } });
    const states = await statesOverQuota(env);
    expect(states.has("throttled")).toBe(true);
    expect(leaderLog(env.destination).logEndOffset).toBeLessThan(30n);
  });

  it("fetch.wait.max.ms 0: a round that brought nothing waits fetch.backoff.ms, not fetching again at once", async () => {
    const counter = countingFetches();
    const env = mirrorEnv({ config: { fetchWaitMaxMs: 0, backoffMs: 1000 }, wrapSource: counter.wrap });
    for (let i = 0; i < 5; i++) await produce(env, valuesBatch([KB]));
    env.manager.addPartition(env.key());
    await drive(env, 1000);
    expect(leaderLog(env.destination).logEndOffset).toBe(5n);
    const before = counter.fetches;
    await drive(env, 10_000); // ended at all: virtual time moves
    // One empty fetch per fetch.backoff.ms (and one at its edge).
    expect(counter.fetches - before).toBeGreaterThanOrEqual(9);
    expect(counter.fetches - before).toBeLessThanOrEqual(11);
    // New records still come over within a wait.
    await produce(env, valuesBatch([KB]));
    await drive(env, 1000);
    expect(leaderLog(env.destination).logEndOffset).toBe(6n);
  });

  it("fetch.wait.max.ms and fetch.backoff.ms both 0: at most one empty fetch per millisecond", async () => {
    const counter = countingFetches();
    const env = mirrorEnv({ config: { fetchWaitMaxMs: 0, backoffMs: 0 }, wrapSource: counter.wrap });
    await produce(env, valuesBatch([KB]));
    env.manager.addPartition(env.key());
    await drive(env, 100);
    expect(leaderLog(env.destination).logEndOffset).toBe(1n);
    expect(counter.fetches).toBeLessThanOrEqual(102);
  });

  it("fetch.wait.max.ms 0 with every partition over the destination's quota: throttled, and time moves", async () => {
    const counter = countingFetches();
    const env = mirrorEnv({
      config: { fetchWaitMaxMs: 0, backoffMs: 1000, partitionMaxBytes: 2048 },
      wrapSource: counter.wrap,
    });
    const states = await statesOverQuota(env);
    expect(states.has("throttled")).toBe(true);
    const mirrored = leaderLog(env.destination).logEndOffset;
    expect(mirrored).toBeGreaterThan(0n);
    expect(mirrored).toBeLessThan(30n);
    // A fetch per quota wait at most (2 KiB each at 1000 B/s), not one per scheduler turn.
    expect(counter.fetches).toBeLessThanOrEqual(10);
  });
});
