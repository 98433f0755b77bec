import { describe, expect, it } from "vitest";
import { topicConfigSyncOps } from "../src/metadata/topic-configs";
import type { DescribeTopicsOptions } from "../src/ports";
import { MIRROR_CONFIG, mirrorEnv, sourceTopic } from "./meta-helpers";

type Env = ReturnType<typeof mirrorEnv>;

async function setup(config: Record<string, string> = {}) {
  const env = mirrorEnv();
  await env.admin.createMirror("m1", { ...MIRROR_CONFIG, ...config });
  return env;
}

const configsOf = (env: Env, topic: string) =>
  Object.fromEntries(env.destination.controller.image.topic(topic)!.configs);

/**
 * The source's describeTopics answers `extra` on top of `topic`'s own configs: values a newer Kafka source
 * holds that this cluster refuses (our embedded source would refuse them itself). Change `extra` to change
 * the answer.
 */
function sourceAlsoHolds(env: Env, topic: string, extra: Record<string, string>) {
  const original = env.network.connect.bind(env.network);
  env.network.connect = (() => {
    const s = original();
    return {
      ...s,
      describeTopics: async (options?: DescribeTopicsOptions) =>
        (await s.describeTopics(options)).map((t) =>
          t.name === topic && t.configs !== undefined ? { ...t, configs: { ...t.configs, ...extra } } : t,
        ),
    };
  }) as typeof env.network.connect;
  env.sources.drop("m1");
}

const configErrors = (env: Env) => env.errors.filter((e) => e.kind === "TopicConfigSyncError");

describe("config sync: a source value this cluster refuses does not block the topic's other configs", () => {
  it("syncs the others, keeps the topic's value, and reports the refused one once, saying what to do", async () => {
    const env = await setup();
    sourceTopic(env.source, "t", 1, { "retention.ms": "1000", "compression.type": "gzip" });
    await env.admin.addTopics("m1", "t", { replicationFactor: 1 });
    const extra: Record<string, string> = { "compression.type": "brotli" };
    sourceAlsoHolds(env, "t", extra);
    env.source.controller.incrementalAlterConfigs({ type: "topic", name: "t" }, [
      { name: "retention.ms", op: "SET", value: "2000" },
      { name: "segment.bytes", op: "SET", value: "100000" },
    ]);
    const first = await env.manager.refresh("m1");
    // Before: one all-or-nothing alter with the refused value; nothing synced, the same error every refresh.
    expect(first?.alteredConfigs).toEqual(["t"]);
    expect(configsOf(env, "t")).toEqual({
      "retention.ms": "2000",
      "segment.bytes": "100000",
      "compression.type": "gzip", // the last value synced, not the default: the source never had that either
      "mirror.name": "m1",
    });
    expect(first?.errors).toEqual([
      {
        kind: "TopicConfigSyncError",
        message: expect.stringMatching(
          /topic 't'.*refuses the source's compression.type="brotli".*keeps compression.type="gzip".*topic.properties.exclude/,
        ),
      },
    ]);
    expect(configErrors(env)).toHaveLength(1);
    expect(configErrors(env)[0]!.error).toMatchObject({ errorName: "INVALID_CONFIG" });

    // Once, not every refresh; later changes on the source still sync.
    env.source.controller.incrementalAlterConfigs({ type: "topic", name: "t" }, [
      { name: "retention.ms", op: "SET", value: "3000" },
    ]);
    expect((await env.manager.refresh("m1"))?.errors).toEqual([]);
    expect(configsOf(env, "t")["retention.ms"]).toBe("3000");
    expect(env.metrics.syncErrors("m1")).toEqual([{ mirror: "m1", kind: "TopicConfigSyncError", count: 1 }]);

    // Another refused value is news: reported again.
    extra["compression.type"] = "lzma";
    expect((await env.manager.refresh("m1"))?.errors).toEqual([
      { kind: "TopicConfigSyncError", message: expect.stringMatching(/compression.type="lzma"/) },
    ]);

    // A value this cluster takes is synced as any other.
    extra["compression.type"] = "zstd";
    expect((await env.manager.refresh("m1"))?.errors).toEqual([]);
    expect(configsOf(env, "t")["compression.type"]).toBe("zstd");
    expect(configErrors(env)).toHaveLength(2);
  });

  it("a new topic whose source holds a refused value is created and mirrored with its other configs", async () => {
    const env = await setup({ "topics.include": "orders" });
    sourceTopic(env.source, "orders", 1, { "retention.ms": "1000" });
    sourceAlsoHolds(env, "orders", { "compression.type": "brotli" });
    const report = await env.manager.refresh("m1");
    // Before: the creation was refused (INVALID_CONFIG) and the topic never mirrored.
    expect(report?.createdTopics).toEqual(["orders"]);
    expect(configsOf(env, "orders")).toEqual({ "retention.ms": "1000", "mirror.name": "m1" });
    expect(env.coordinators.take()).toEqual(["START orders-0"]);
    expect(report?.errors).toEqual([
      {
        kind: "TopicConfigSyncError",
        message: expect.stringMatching(/compression.type="brotli".*keeps its default/),
      },
    ]);
  });

  it("--add of a topic whose source holds a refused value adds it, with its other configs", async () => {
    const env = await setup();
    sourceTopic(env.source, "t", 1, { "retention.ms": "1000" });
    sourceAlsoHolds(env, "t", { "compression.type": "brotli" });
    await env.admin.addTopics("m1", "t", { replicationFactor: 1 });
    expect(configsOf(env, "t")).toEqual({ "retention.ms": "1000", "mirror.name": "m1" });
  });

  it("an excluded config is neither synced nor reported, whatever its value", async () => {
    const env = await setup({ "topic.properties.exclude": "compression.type" });
    sourceTopic(env.source, "t", 1, { "retention.ms": "1000" });
    await env.admin.addTopics("m1", "t", { replicationFactor: 1 });
    sourceAlsoHolds(env, "t", { "compression.type": "brotli" });
    expect((await env.manager.refresh("m1"))?.errors).toEqual([]);
    expect(configErrors(env)).toEqual([]);
  });

  it("the alter neither sets a refused value nor deletes the topic's own value of that config", () => {
    const destination = new Map([
      ["compression.type", "gzip"],
      ["retention.ms", "5"],
    ]);
    expect(topicConfigSyncOps({ "compression.type": "brotli", "retention.ms": "6" }, destination)).toEqual([
      { name: "retention.ms", op: "SET", value: "6" },
    ]);
  });

  it('copies cleanup.policy="" (accepted by Kafka 3.9) with the topic\'s other configs', async () => {
    const env = await setup();
    sourceTopic(env.source, "t", 1, { "cleanup.policy": "", "retention.ms": "1000" });
    await env.admin.addTopics("m1", "t", { replicationFactor: 1 });
    expect(configsOf(env, "t")).toEqual({
      "cleanup.policy": "",
      "retention.ms": "1000",
      "mirror.name": "m1",
    });
    env.source.controller.incrementalAlterConfigs({ type: "topic", name: "t" }, [
      { name: "retention.ms", op: "SET", value: "2000" },
    ]);
    expect((await env.manager.refresh("m1"))?.errors).toEqual([]);
    expect(configsOf(env, "t")).toEqual({
      "cleanup.policy": "",
      "retention.ms": "2000",
      "mirror.name": "m1",
    });
  });
});
