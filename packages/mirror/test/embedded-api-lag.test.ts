import { describe, expect, it } from "vitest";
import { MIRROR_METRIC_NAMES } from "../src/metrics/mirror-metrics";
import { embeddedApiEnv, produce, runUntil, SOURCE_BOOTSTRAP } from "./embedded-api-helpers";

describe("the lag gauge of a PAUSED partition", () => {
  it("reports source HW - destination LEO while paused, growing with the source", async () => {
    const env = embeddedApiEnv();
    const { mirroring } = env;
    env.source.controller.createTopic({ name: "orders", replicaAssignment: [[0]], configs: {} });
    await runUntil(env, mirroring.admin.createMirror("m1", { "bootstrap.servers": SOURCE_BOOTSTRAP }));
    await runUntil(env, mirroring.admin.addTopics("m1", "orders"));
    await produce(env, env.source, "orders", 3);
    await runUntil(env, mirroring.whenCaughtUp("m1"));
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
