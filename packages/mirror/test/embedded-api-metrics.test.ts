import { describe, expect, it } from "vitest";
import { embeddedApiEnv, produce, runUntil, SOURCE_BOOTSTRAP } from "./embedded-api-helpers";

describe("the metrics of a deleted mirror", () => {
  it("leave the exposition; another mirror's stay", async () => {
    const env = embeddedApiEnv();
    const { mirroring } = env;
    for (const name of ["orders", "payments"])
      env.source.controller.createTopic({ name, replicaAssignment: [[0]], configs: {} });
    await runUntil(env, mirroring.admin.createMirror("m1", { "bootstrap.servers": SOURCE_BOOTSTRAP }));
    await runUntil(env, mirroring.admin.createMirror("m10", { "bootstrap.servers": SOURCE_BOOTSTRAP }));
    await runUntil(env, mirroring.admin.addTopics("m1", "orders"));
    await runUntil(env, mirroring.admin.addTopics("m10", "payments"));
    await produce(env, env.source, "orders", 3);
    await produce(env, env.source, "payments", 2);
    await runUntil(env, mirroring.whenCaughtUp("m1"));
    await runUntil(env, mirroring.whenCaughtUp("m10"));
    mirroring.metrics.recordFetchError("m1");
    const mirrorsIn = (text: string) => new Set([...text.matchAll(/mirror="([^"]+)"/g)].map((m) => m[1]));
    expect(mirrorsIn(mirroring.metrics.toPrometheusText())).toEqual(new Set(["m1", "m10"]));

    await runUntil(env, mirroring.admin.removeTopics("m1", "orders"));
    await runUntil(env, mirroring.whenState("m1", "STOPPED"));
    await runUntil(env, mirroring.admin.deleteMirror("m1"));
    await runUntil(env, Promise.resolve());

    const text = mirroring.metrics.toPrometheusText();
    expect(mirrorsIn(text)).toEqual(new Set(["m10"]));
    expect(mirroring.metrics.fetchErrorCounts()).toEqual([]);
    expect(text).toMatch(/kafka_server_cluster_mirror_bytes_total\{mirror="m10",topic="payments"\} [1-9]/);
  });
});
