import { describe, expect, it } from "vitest";
import type { DescribeTopicsOptions, SourceCluster } from "../src/ports";
import { acl, appendRecords, MIRROR_CONFIG, mirrorEnv, sourceTopic } from "./meta-helpers";

type Env = ReturnType<typeof mirrorEnv>;

async function setup(config: Record<string, string> = {}) {
  const env = mirrorEnv();
  await env.admin.createMirror("m1", { ...MIRROR_CONFIG, ...config });
  return env;
}

const configsOf = (env: Env, topic: string) =>
  Object.fromEntries(env.destination.controller.image.topic(topic)!.configs);

/** Wraps the network's connect so the next source connection's methods can be intercepted. */
function interceptSource(env: Env, wrap: (s: SourceCluster) => SourceCluster) {
  const original = env.network.connect.bind(env.network);
  env.network.connect = (() => wrap(original())) as typeof env.network.connect;
  env.sources.drop("m1");
}

describe("config sync: configs the source did not describe are unknown, not deleted", () => {
  it("an --add that lands while a refresh asks the source keeps the new topic's configs", async () => {
    const env = await setup();
    sourceTopic(env.source, "t", 1, { "cleanup.policy": "compact", "retention.ms": "-1" });
    let gate: (() => void) | undefined;
    let first = true;
    interceptSource(env, (s) => ({
      ...s,
      describeTopics: async (options?: DescribeTopicsOptions) => {
        if (first) {
          first = false;
          // The refresh's describeTopics: a network round trip, during which the operator runs --add.
          await new Promise<void>((resolve) => {
            gate = resolve;
          });
        }
        return s.describeTopics(options);
      },
    }));
    const refresh = env.manager.refresh("m1");
    await new Promise((r) => setImmediate(r));
    expect(gate).toBeDefined();
    await env.admin.addTopics("m1", "t", { replicationFactor: 1 });
    expect(configsOf(env, "t")).toEqual({
      "cleanup.policy": "compact",
      "retention.ms": "-1",
      "mirror.name": "m1",
    });
    gate!();
    const report = await refresh;
    // Before: both configs were deleted (the refresh had not asked for the new topic's configs).
    expect(report?.alteredConfigs).toEqual([]);
    expect(configsOf(env, "t")).toEqual({
      "cleanup.policy": "compact",
      "retention.ms": "-1",
      "mirror.name": "m1",
    });
  });

  it("a source that could not describe a topic's configs (DescribeConfigs refused) deletes nothing", async () => {
    const env = await setup();
    sourceTopic(env.source, "t", 1, { "cleanup.policy": "compact", "retention.ms": "-1" });
    await env.admin.addTopics("m1", "t", { replicationFactor: 1 });
    // What a source answers for a topic whose DescribeConfigs failed (TOPIC_AUTHORIZATION_FAILED): no configs.
    // Before: they came as `{}`, and the sync deleted every config it had copied (retention.ms=-1 fell back
    // to 7 days on the destination).
    interceptSource(env, (s) => ({
      ...s,
      describeTopics: async (options?: DescribeTopicsOptions) =>
        (await s.describeTopics(options)).map(({ configs: _refused, ...t }) => t),
    }));
    // Unknown configs are not an error of the sync either: the refresh skips them.
    expect((await env.manager.refresh("m1"))?.errors).toEqual([]);
    expect(configsOf(env, "t")).toEqual({
      "cleanup.policy": "compact",
      "retention.ms": "-1",
      "mirror.name": "m1",
    });
  });
});

describe("group offset sync", () => {
  it("does not overwrite offsets of a topic failed over while the sync read the source's groups", async () => {
    const env = await setup();
    sourceTopic(env.source, "t");
    await env.admin.addTopics("m1", "t", { replicationFactor: 1 });
    env.coordinators.advance("PREPARING", "MIRRORING");
    appendRecords(env.destination, "t", 0, 10);
    env.source.groups.commitOffsets({ groupId: "app", offsets: [{ topic: "t", partition: 0, offset: 2n }] });
    let gate: (() => void) | undefined;
    interceptSource(env, (s) => ({
      ...s,
      listGroupOffsets: async () => {
        const answer = await s.listGroupOffsets();
        await new Promise<void>((resolve) => {
          gate = resolve;
        });
        return answer;
      },
    }));
    const refresh = env.manager.refresh("m1");
    for (let i = 0; i < 5 && !gate; i++) await new Promise((r) => setImmediate(r));
    expect(gate).toBeDefined();
    // Failover while the answer is on its way; the app then commits on the now-writable topic.
    await env.admin.removeTopics("m1", "t");
    env.coordinators.advance("STOPPING", "STOPPED");
    env.destination.groups.commitOffsets({
      groupId: "app",
      offsets: [{ topic: "t", partition: 0, offset: 9n }],
    });
    gate!();
    await refresh;
    expect(env.destination.groups.fetchOffsets("app").get("t:0")?.offset).toBe(9n);
  });
});

describe("group offset sync: metadata", () => {
  it("copies a committed offset's metadata (Kafka Streams keeps its partition time there)", async () => {
    const env = await setup();
    sourceTopic(env.source, "t");
    await env.admin.addTopics("m1", "t", { replicationFactor: 1 });
    appendRecords(env.destination, "t", 0, 10);
    env.source.groups.commitOffsets({
      groupId: "streams-app",
      offsets: [{ topic: "t", partition: 0, offset: 4n, metadata: "AQAAAYtime" }],
    });
    await env.manager.refresh("m1");
    expect(env.destination.groups.fetchOffsets("streams-app").get("t:0")).toMatchObject({
      offset: 4n,
      metadata: "AQAAAYtime",
    });
  });
});

describe("ACL sync: a source without an authorizer", () => {
  it("changes nothing: the bindings the mirror created stay (its ACLs are unknown, not empty)", async () => {
    const env = await setup();
    sourceTopic(env.source, "t");
    await env.admin.addTopics("m1", "t", { replicationFactor: 1 });
    const binding = acl("TOPIC", "t");
    env.source.authorizer.createAcls([binding]);
    await env.manager.refresh("m1");
    expect(env.destination.authorizer.describeAcls()).toEqual([binding]);
    // The source is rolled without an authorizer: DescribeAcls answers SECURITY_DISABLED.
    interceptSource(env, (s) => ({ ...s, describeAcls: async () => undefined }));
    expect((await env.manager.refresh("m1"))?.errors).toEqual([]);
    // Before: taken as "no bindings", and the mirror deleted every binding it had created.
    expect(env.destination.authorizer.describeAcls()).toEqual([binding]);
  });
});
