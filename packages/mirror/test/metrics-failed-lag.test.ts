import { describe, expect, it } from "vitest";
import { MIRROR_METRIC_NAMES } from "../src/metrics/mirror-metrics";
import { advance, embeddedApiEnv, produce, runUntil, SOURCE_BOOTSTRAP } from "./embedded-api-helpers";

/** Mirror `m1` of a one-partition `orders` holding 3 records, caught up, its lag scraped once. */
async function ordersCaughtUpAndScraped() {
  const env = embeddedApiEnv();
  env.source.controller.createTopic({ name: "orders", replicaAssignment: [[0]], configs: {} });
  await runUntil(env, env.mirroring.admin.createMirror("m1", { "bootstrap.servers": SOURCE_BOOTSTRAP }));
  await runUntil(env, env.mirroring.admin.addTopics("m1", "orders"));
  await produce(env, env.source, "orders", 3);
  await runUntil(env, env.mirroring.whenCaughtUp("m1"));
  expect(env.mirroring.metrics.lags()).toEqual([{ mirror: "m1", topic: "orders", partition: 0, lag: 0n }]);
  return env;
}

describe("the lag gauge of a FAILED partition", () => {
  it("grows with the source as describe's lag does, not frozen at the fetcher's view when it failed", async () => {
    const env = await ordersCaughtUpAndScraped();
    const { mirroring } = env;
    // The destination topic is deleted under the mirror: the partition fails for good, and the topic the
    // sync creates again is empty.
    env.destination.controller.deleteTopic("orders");
    await advance(env, 60_000);
    await produce(env, env.source, "orders", 5);
    await runUntil(env, mirroring.metrics.refreshPausedLags());

    const rows = await runUntil(env, mirroring.admin.describe("m1"));
    expect(rows.map((r) => [r.state, r.sourceOffset, r.destinationOffset, r.lag])).toEqual([
      ["FAILED", 8n, 0n, 8n],
    ]);
    expect(mirroring.metrics.lags()).toEqual([{ mirror: "m1", topic: "orders", partition: 0, lag: 8n }]);
    expect(mirroring.metrics.toPrometheusText()).toContain(
      `${MIRROR_METRIC_NAMES.lag}{mirror="m1",topic="orders",partition="0"} 8`,
    );
  });

  it("is not reported while the source does not answer, as describe's (not the fetcher's frozen view)", async () => {
    const env = await ordersCaughtUpAndScraped();
    const { mirroring } = env;
    env.destination.controller.deleteTopic("orders");
    await advance(env, 60_000);
    env.source.crashBroker(0);
    for (let scrape = 0; scrape < 3; scrape++) {
      await runUntil(env, mirroring.metrics.refreshPausedLags());
      expect(mirroring.metrics.lags()).toEqual([]);
    }
    const rows = await runUntil(env, mirroring.admin.describe("m1"));
    expect(rows.map((r) => [r.state, r.lag])).toEqual([["FAILED", null]]);
  });

  it("is not reported once the source no longer answers for it (its source topic is deleted)", async () => {
    const env = await ordersCaughtUpAndScraped();
    const { mirroring } = env;
    env.source.controller.deleteTopic("orders");
    await runUntil(env, mirroring.whenState("m1", "FAILED"));
    mirroring.metrics.lags();
    await runUntil(env, mirroring.metrics.refreshPausedLags());

    const rows = await runUntil(env, mirroring.admin.describe("m1"));
    expect(rows.map((r) => [r.state, r.lag])).toEqual([["FAILED", null]]);
    expect(mirroring.metrics.lags()).toEqual([]);
  });
});
