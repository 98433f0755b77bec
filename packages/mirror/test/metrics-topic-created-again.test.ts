import { describe, expect, it } from "vitest";
import { MirrorAdmin } from "../src/admin/mirror-admin";
import { MIRROR_METRIC_NAMES } from "../src/metrics/mirror-metrics";
import { embeddedApiEnv, produce, runUntil, SOURCE_BOOTSTRAP } from "./embedded-api-helpers";
import { MIRROR_CONFIG, mirrorEnv, sourceTopic } from "./meta-helpers";

// A topic failed over (STOPPED), then deleted on both clusters, created again on the source (a new id) and
// added to the mirror again: the old partition's state record stays in __mirror_state until the mirror is
// deleted, beside the new topic's.

describe("the metrics of a topic added again after the source created it anew", () => {
  it("count its partition once, in its current state, as describe shows it", async () => {
    const env = embeddedApiEnv();
    const { mirroring } = env;
    env.source.controller.createTopic({ name: "orders", replicaAssignment: [[0]], configs: {} });
    await runUntil(env, mirroring.admin.createMirror("m1", { "bootstrap.servers": SOURCE_BOOTSTRAP }));
    await runUntil(env, mirroring.admin.addTopics("m1", "orders"));
    await produce(env, env.source, "orders", 3);
    await runUntil(env, mirroring.whenCaughtUp("m1"));
    await runUntil(env, mirroring.admin.removeTopics("m1", "orders"));
    await runUntil(env, mirroring.whenState("m1", "STOPPED"));
    env.destination.controller.deleteTopic("orders");
    env.source.controller.deleteTopic("orders");
    env.source.controller.createTopic({ name: "orders", replicaAssignment: [[0]], configs: {} });
    await produce(env, env.source, "orders", 2);
    await runUntil(env, mirroring.admin.addTopics("m1", "orders"));
    await runUntil(env, mirroring.whenCaughtUp("m1"));

    const rows = await runUntil(env, mirroring.admin.describe("m1"));
    expect(rows.map((r) => [r.topic, r.partition, r.state, r.lag])).toEqual([["orders", 0, "MIRRORING", 0n]]);
    expect(mirroring.metrics.partitionCounts().filter((c) => c.count > 0)).toEqual([
      { mirror: "m1", state: "MIRRORING", count: 1 },
    ]);
    const text = mirroring.metrics.toPrometheusText();
    expect(text).toContain(`${MIRROR_METRIC_NAMES.partitionCount}{mirror="m1",state="STOPPED"} 0`);
    expect(text).toContain(`${MIRROR_METRIC_NAMES.topicCount}{mirror="m1"} 1`);
  });
});

describe("describe of a topic added again after the source created it anew", () => {
  it("shows the current topic's state, whatever order the coordinators list the two records in", async () => {
    const env = mirrorEnv();
    const topicId = sourceTopic(env.source, "t");
    await env.admin.createMirror("m1", MIRROR_CONFIG);
    await env.admin.addTopics("m1", "t");
    env.coordinators.advance("PREPARING", "MIRRORING");
    const [current] = env.coordinators.describe("m1");
    // The previous topic's record, listed after the current one's (another __mirror_state partition).
    const previousId =
      topicId === "AAAAAAAAAAAAAAAAAAAAAA" ? "BBBBBBBBBBBBBBBBBBBBBB" : "AAAAAAAAAAAAAAAAAAAAAA";
    const previous = { ...current!, key: { ...current!.key, topicId: previousId }, state: "STOPPED" };
    const coordinators: typeof env.coordinators = Object.create(env.coordinators);
    coordinators.describe = () => [current!, previous];
    const admin = new MirrorAdmin({ destination: env.destination, sources: env.sources, coordinators });

    const rows = await admin.describe("m1");
    expect(rows.map((r) => [r.topic, r.partition, r.state])).toEqual([["t", 0, "MIRRORING"]]);
  });
});
