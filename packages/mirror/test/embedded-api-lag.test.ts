import { describe, expect, it } from "vitest";
import { MIRROR_METRIC_NAMES } from "../src/metrics/mirror-metrics";
import { advance, embeddedApiEnv, produce, runUntil, SOURCE_BOOTSTRAP } from "./embedded-api-helpers";

/** Mirror `m1` of a one-partition `orders` holding 3 records, caught up. */
async function ordersCaughtUp() {
  const env = embeddedApiEnv();
  env.source.controller.createTopic({ name: "orders", replicaAssignment: [[0]], configs: {} });
  await runUntil(env, env.mirroring.admin.createMirror("m1", { "bootstrap.servers": SOURCE_BOOTSTRAP }));
  await runUntil(env, env.mirroring.admin.addTopics("m1", "orders"));
  await produce(env, env.source, "orders", 3);
  await runUntil(env, env.mirroring.whenCaughtUp("m1"));
  return env;
}

describe("the lag gauge of a MIRRORING partition", () => {
  it("is the source high watermark of the fetchers' last round: it trails describe's live lag until the next round", async () => {
    // As Kafka's fetcher lag gauge (AbstractFetcherThread: highWatermark of the fetch response - next
    // offset), no ListOffsets per scrape. An idle fetcher fetches again after fetch.wait.max.ms (500 ms).
    const env = await ordersCaughtUp();
    const { mirroring } = env;
    const gauge = () => mirroring.metrics.lags().map((l) => l.lag);
    const liveLag = async () => (await runUntil(env, mirroring.admin.describe("m1"))).map((r) => r.lag);
    await advance(env, 100); // the fetcher is waiting out its idle round
    await produce(env, env.source, "orders", 2);
    expect(await liveLag()).toEqual([2n]);
    expect(gauge()).toEqual([0n]); // what the last round saw
    await advance(env, 500); // the next round copies the records, and sees the source's high watermark
    expect(await liveLag()).toEqual([0n]);
    expect(gauge()).toEqual([0n]);
  });
});

describe("the lag gauge of a PAUSED partition", () => {
  it("reports source HW - destination LEO while paused, growing with the source", async () => {
    const env = await ordersCaughtUp();
    const { mirroring } = env;
    expect(mirroring.metrics.lags()).toEqual([{ mirror: "m1", topic: "orders", partition: 0, lag: 0n }]);

    await runUntil(env, mirroring.admin.pauseTopics("m1", "orders"));
    await runUntil(env, mirroring.whenState("m1", "PAUSED"));
    await produce(env, env.source, "orders", 5);
    await runUntil(env, mirroring.metrics.refreshPausedLags());

    expect(mirroring.metrics.lags()).toEqual([{ mirror: "m1", topic: "orders", partition: 0, lag: 5n }]);
    expect(mirroring.metrics.toPrometheusText()).toContain(
      `${MIRROR_METRIC_NAMES.lag}{mirror="m1",topic="orders",partition="0"} 5`,
    );
  });
});

describe("describe's lag when the source does not answer", () => {
  it("is unknown (null), never a 0 computed from the fetcher's last view (soak FC_SEED=18)", async () => {
    // An operator reading LAG 0 before a planned failover would lose what the source acknowledged since
    // the fetcher last heard from it.
    const env = await ordersCaughtUp();
    const { mirroring } = env;
    const live = await runUntil(env, mirroring.admin.describe("m1"));
    expect(live.map((r) => [r.sourceOffset, r.lag])).toEqual([[3n, 0n]]);

    env.source.crashBroker(0);
    const rows = await runUntil(env, mirroring.admin.describe("m1"));
    // The last-seen high watermark is shown; the lag is not claimed.
    expect(rows.map((r) => [r.sourceOffset, r.destinationOffset, r.lag])).toEqual([[3n, 3n, null]]);
  });
});

describe("describe's lag of a STOPPED partition", () => {
  it("is none (null): a failed-over topic takes its own writes and no longer follows the source", async () => {
    const env = await ordersCaughtUp();
    const { mirroring } = env;
    await runUntil(env, mirroring.admin.removeTopics("m1", "orders"));
    await runUntil(env, mirroring.whenState("m1", "STOPPED"));
    await produce(env, env.source, "orders", 4);
    const rows = await runUntil(env, mirroring.admin.describe("m1"));
    expect(rows.map((r) => [r.state, r.sourceOffset, r.lag])).toEqual([["STOPPED", 7n, null]]);
  });
});
