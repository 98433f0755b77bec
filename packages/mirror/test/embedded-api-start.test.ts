import { describe, expect, it } from "vitest";
import { advance, embeddedApiEnv, runUntil, SOURCE_BOOTSTRAP } from "./embedded-api-helpers";

describe("ClusterMirroring right after start", () => {
  it("addTopics waits for the coordinators to load instead of failing with COORDINATOR_NOT_AVAILABLE", async () => {
    const env = embeddedApiEnv();
    env.source.controller.createTopic({ name: "orders", replicaAssignment: [[0], [0], [0]], configs: {} });
    const { mirroring } = env;
    await runUntil(env, mirroring.admin.createMirror("m1", { "bootstrap.servers": SOURCE_BOOTSTRAP }));
    // No scheduler turn yet: every `__mirror_state` shard is still LOADING.
    const result = await runUntil(env, mirroring.admin.addTopics("m1", "orders"));
    expect(result.topics).toEqual(["orders"]);
    await runUntil(env, mirroring.whenState("m1", "MIRRORING"));
    const rows = await mirroring.admin.describe("m1");
    expect(rows.map((r) => `${r.topic}-${r.partition} ${r.state}`)).toEqual([
      "orders-0 MIRRORING",
      "orders-1 MIRRORING",
      "orders-2 MIRRORING",
    ]);
  });

  it("fails with a retriable COORDINATOR_NOT_AVAILABLE naming the timeout when the load never completes", async () => {
    const env = embeddedApiEnv({
      coordinatorLoadTimeoutMs: 5_000,
      destinationBrokers: 2,
      // Every `__mirror_state` partition lives on broker 1 alone, which is down: nobody can load them.
      beforeStart: (destination) => {
        destination.controller.createTopic({
          name: "__mirror_state",
          replicaAssignment: [[1], [1], [1], [1]],
          configs: {},
        });
        destination.stopBroker(1);
      },
    });
    env.source.controller.createTopic({ name: "orders", replicaAssignment: [[0]], configs: {} });
    const { mirroring } = env;
    await runUntil(env, mirroring.admin.createMirror("m1", { "bootstrap.servers": SOURCE_BOOTSTRAP }));
    await advance(env, 100);
    const started = env.clock.now();
    const error = await runUntil(env, mirroring.admin.addTopics("m1", "orders")).then(
      () => undefined,
      (e: unknown) => e as { errorName?: string; retriable?: boolean; message: string },
    );
    expect(error?.errorName).toBe("COORDINATOR_NOT_AVAILABLE");
    expect(error?.retriable).toBe(true);
    expect(error?.message).toMatch(/5000 ms/);
    expect(error?.message).toMatch(/__mirror_state-\d/);
    expect(env.clock.now() - started).toBeGreaterThanOrEqual(5_000);
  });
});
