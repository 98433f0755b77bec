import { sleep } from "@cluster-mirror/cluster";
import { describe, expect, it } from "vitest";
import type { SourceCluster } from "../src/ports";
import { bind, drive, leaderLog, type MirrorEnv, mirrorEnv, produce, valuesBatch } from "./data-helpers";

/**
 * A source that long-polls as a Kafka broker does: a fetch that finds nothing is held (checked again every
 * 10 ms) until records arrive or `holdMs` (its fetch.max.wait.ms) has passed.
 */
function longPolling(holdMs: number): { env?: MirrorEnv; wrap: (s: SourceCluster) => SourceCluster } {
  const poll: { env?: MirrorEnv; wrap: (s: SourceCluster) => SourceCluster } = {
    wrap: (s) => ({
      ...bind(s),
      fetch: async (request) => {
        const env = poll.env!;
        const deadline = env.clock.now() + holdMs;
        for (;;) {
          const answer = await s.fetch(request);
          const found = answer.partitions.some((p) => p.recordSlices.length > 0 || p.error !== undefined);
          if (found || answer.throttleTimeMs > 0 || env.clock.now() >= deadline) return answer;
          await sleep(env.scheduler, 10);
        }
      },
    }),
  };
  return poll;
}

describe("a round that brought nothing lasts fetch.wait.max.ms, whoever waits it", () => {
  it("a long-polling source's hold counts: a record arriving after an empty answer comes over at once", async () => {
    const poll = longPolling(500);
    const env = mirrorEnv({ config: { fetchWaitMaxMs: 500 }, wrapSource: poll.wrap });
    poll.env = env;
    await produce(env, valuesBatch(["a"]));
    env.manager.addPartition(env.key());
    await drive(env, 2000);
    expect(leaderLog(env.destination).logEndOffset).toBe(1n);
    // Records produced at every phase of the cycle after the last record: the empty long-poll (500 ms),
    // then any wait after it.
    let slowest = 0;
    for (let i = 0; i < 10; i++) {
      await drive(env, 97 * (i + 1));
      const end = leaderLog(env.destination).logEndOffset;
      await produce(env, valuesBatch([`r${i}`]));
      let waited = 0;
      while (leaderLog(env.destination).logEndOffset === end && waited < 2000) {
        await drive(env, 10);
        waited += 10;
      }
      expect(leaderLog(env.destination).logEndOffset).toBe(end + 1n);
      slowest = Math.max(slowest, waited);
    }
    // The source answers within 10 ms of a record; the fetcher must not sleep fetch.wait.max.ms on top of
    // the 500 ms the source already held the empty fetch (a record arriving then waited up to 500 ms).
    expect(slowest).toBeLessThanOrEqual(50);
  });

  it("a source that answers at once: an empty round still waits fetch.wait.max.ms before the next fetch", async () => {
    let fetches = 0;
    const env = mirrorEnv({
      config: { fetchWaitMaxMs: 500 },
      wrapSource: (s) => ({
        ...bind(s),
        fetch: (request) => {
          fetches++;
          return s.fetch(request);
        },
      }),
    });
    await produce(env, valuesBatch(["a"]));
    env.manager.addPartition(env.key());
    await drive(env, 1000);
    const before = fetches;
    await drive(env, 10_000);
    expect(fetches - before).toBeGreaterThanOrEqual(19);
    expect(fetches - before).toBeLessThanOrEqual(21);
  });
});
