import { ClusterError } from "@cluster-mirror/cluster";
import { describe, expect, it, vi } from "vitest";
import { SOURCE_TOPIC_DELETED, sourceTopicNotAuthorized } from "../src/metadata/mirror-metadata-manager";
import { MIRROR_CONFIG, mirrorEnv, sourceTopic } from "./meta-helpers";

async function setup(options: { leads?: boolean } = {}) {
  const env = mirrorEnv(options);
  sourceTopic(env.source, "t", 2);
  await env.admin.createMirror("m1", MIRROR_CONFIG);
  await env.admin.addTopics("m1", "t");
  env.coordinators.advance("PREPARING", "MIRRORING");
  env.coordinators.take();
  return env;
}

describe("MirrorMetadataManager: scheduling and triggers", () => {
  it("refreshes every mirror.metadata.refresh.interval.ms on the injected scheduler", async () => {
    const env = mirrorEnv();
    await env.admin.createMirror("m1", { ...MIRROR_CONFIG, "topics.include": "new.*" });
    env.manager.start();
    sourceTopic(env.source, "new-1");
    env.scheduler.run(29_999);
    await env.manager.idle();
    expect(env.destination.controller.image.topic("new-1")).toBeUndefined();
    env.scheduler.run(1);
    await env.manager.idle();
    expect(env.destination.controller.image.topic("new-1")).toBeDefined();
    sourceTopic(env.source, "new-2");
    env.scheduler.run(30_000);
    await env.manager.idle();
    expect(env.destination.controller.image.topic("new-2")).toBeDefined();
    env.manager.close();
    sourceTopic(env.source, "new-3");
    env.scheduler.run(60_000);
    await env.manager.idle();
    expect(env.destination.controller.image.topic("new-3")).toBeUndefined();
  });

  it("reports a matching source topic it skips for a local topic of that name, once until the conflict clears", async () => {
    const env = mirrorEnv();
    await env.admin.createMirror("m1", { ...MIRROR_CONFIG, "topics.include": "orders|payments" });
    await env.admin.createMirror("m2", { ...MIRROR_CONFIG, "topics.include": "payments" });
    sourceTopic(env.source, "orders");
    sourceTopic(env.source, "payments");
    env.destination.controller.createTopic({ name: "orders", replicaAssignment: [[0]], configs: {} });
    // m2 mirrors payments first: m1's pattern also matches it.
    await env.manager.refresh("m2");
    expect(env.skipped).toEqual([]);
    const first = await env.manager.refresh("m1");
    expect(first?.createdTopics).toEqual([]);
    expect(first?.skippedTopics.map((s) => s.topic)).toEqual(["orders", "payments"]);
    expect(env.skipped.map((s) => [s.mirror, s.topic])).toEqual([
      ["m1", "orders"],
      ["m1", "payments"],
    ]);
    expect(env.skipped[0]!.why).toMatch(/has a topic of that name of its own.*topics\.exclude/);
    expect(env.skipped[1]!.why).toMatch(/belongs to mirror 'm2'/);
    // Every refresh lists them; the callback heard each once.
    const second = await env.manager.refresh("m1");
    expect(second?.skippedTopics.map((s) => s.topic)).toEqual(["orders", "payments"]);
    expect(env.skipped).toHaveLength(2);
    // The local topic goes: m1 mirrors orders, and a later conflict would be reported again.
    env.destination.controller.deleteTopic("orders");
    const third = await env.manager.refresh("m1");
    expect(third?.createdTopics).toEqual(["orders"]);
    expect(third?.skippedTopics.map((s) => s.topic)).toEqual(["payments"]);
    expect(env.skipped).toHaveLength(2);
  });

  it("never advises deleting a local topic that is the source's own (same id: an old primary before its failback)", async () => {
    const env = mirrorEnv();
    await env.admin.createMirror("m1", { ...MIRROR_CONFIG, "topics.include": "orders" });
    const topicId = sourceTopic(env.source, "orders");
    env.destination.controller.createTopic({
      name: "orders",
      topicId,
      replicaAssignment: [[0]],
      configs: {},
    });
    const report = await env.manager.refresh("m1");
    expect(report?.skippedTopics.map((s) => s.topic)).toEqual(["orders"]);
    expect(env.skipped[0]!.why).toMatch(/same topic id.*add it with --add to mirror it again/);
    expect(env.skipped[0]!.why).not.toMatch(/Delete/);
  });

  it("skips a matched topic whose name differs from a local one only by '.' and '_' (Kafka refuses it), without a sync error", async () => {
    const env = mirrorEnv();
    await env.admin.createMirror("m1", { ...MIRROR_CONFIG, "topics.include": "orders.eu|payments" });
    sourceTopic(env.source, "orders.eu");
    sourceTopic(env.source, "payments");
    // Fan-in: another mirror (of another source) already copies its orders_eu here.
    env.destination.controller.createTopic({
      name: "orders_eu",
      replicaAssignment: [[0]],
      configs: { "mirror.name": "m2" },
    });
    const first = await env.manager.refresh("m1");
    expect(first?.createdTopics).toEqual(["payments"]);
    expect(first?.skippedTopics.map((s) => s.topic)).toEqual(["orders.eu"]);
    expect(first?.errors).toEqual([]);
    expect(env.skipped.map((s) => [s.mirror, s.topic])).toEqual([["m1", "orders.eu"]]);
    expect(env.skipped[0]!.why).toMatch(
      /topic 'orders_eu' \(of mirror 'm2'\).*'\.' and '_'.*topics\.exclude/,
    );
    const second = await env.manager.refresh("m1");
    expect(second?.skippedTopics.map((s) => s.topic)).toEqual(["orders.eu"]);
    expect(env.skipped).toHaveLength(1);
    expect(env.metrics.syncErrors("m1")).toEqual([]);
  });

  it("counts no sync error for a refresh that fails after its mirror was deleted", async () => {
    const env = mirrorEnv();
    await env.admin.createMirror("m1", MIRROR_CONFIG);
    env.network.reachable = false;
    const refresh = env.manager.refresh("m1");
    // Deleted while the refresh waits on the source (the admin's delete ends with this record).
    env.destination.controller.deleteMirror("m1");
    await refresh;
    expect(env.metrics.syncErrors()).toEqual([]);
    expect(env.errors).toEqual([]);
  });

  it("creates no topic for a mirror deleted while the refresh asked the source (it would stay read-only for good)", async () => {
    const env = mirrorEnv();
    await env.admin.createMirror("m1", { ...MIRROR_CONFIG, "topics.include": "orders.*" });
    sourceTopic(env.source, "orders-new");
    const refresh = env.manager.refresh("m1");
    await env.admin.deleteMirror("m1");
    expect((await refresh)?.createdTopics).toEqual([]);
    expect(env.destination.controller.image.topic("orders-new")).toBeUndefined();
    expect(env.coordinators.describe()).toEqual([]);
    // Nor for the old source's topics once the name is a mirror of another cluster (created again while
    // the old source's answer is on its way).
    await env.admin.createMirror("m1", { ...MIRROR_CONFIG, "topics.include": "orders.*" });
    const oldSource = env.sources.get("m1", env.destination.controller.image.mirrors.get("m1")!);
    const describeTopics = oldSource.describeTopics.bind(oldSource);
    let answer!: () => void;
    const answered = new Promise<void>((resolve) => {
      answer = resolve;
    });
    oldSource.describeTopics = async (options) => {
      const topics = await describeTopics(options);
      await answered;
      return topics;
    };
    const again = env.manager.refresh("m1");
    await env.admin.deleteMirror("m1");
    const other = mirrorEnv().source;
    Object.defineProperty(other, "clusterId", { value: "another-cluster-CCCCCCC" });
    env.network.target = other;
    await env.admin.createMirror("m1", { ...MIRROR_CONFIG, "topics.include": "orders.*" });
    expect(env.admin.listMirrors()).toHaveLength(1);
    answer();
    expect((await again)?.createdTopics).toEqual([]);
    expect(env.destination.controller.image.topic("orders-new")).toBeUndefined();
  });

  it("applies topic patterns changed while the refresh asked the source: a topic just excluded is not created", async () => {
    const env = mirrorEnv();
    await env.admin.createMirror("m1", { ...MIRROR_CONFIG, "topics.include": "orders.*" });
    sourceTopic(env.source, "orders-eu");
    sourceTopic(env.source, "orders-tmp");
    const refresh = env.manager.refresh("m1");
    await env.admin.alterMirrorConfig("m1", { set: { "topics.exclude": "orders-tmp" } });
    expect((await refresh)?.createdTopics).toEqual(["orders-eu"]);
    expect(env.destination.controller.image.topic("orders-tmp")).toBeUndefined();
  });

  it("picks up mirrors created after start, with their own interval", async () => {
    const env = mirrorEnv();
    env.manager.start();
    await env.admin.createMirror("m1", {
      ...MIRROR_CONFIG,
      "topics.include": "x",
      "mirror.metadata.refresh.interval.ms": "1000",
    });
    sourceTopic(env.source, "x");
    env.scheduler.run(1_000);
    await env.manager.idle();
    expect(env.destination.controller.image.topic("x")!.configs.get("mirror.name")).toBe("m1");
    expect(env.coordinators.take()).toEqual(["START x-0"]);
  });

  it("turns the mirror.name suffix into PAUSE, RESUME and STOP on the next scheduler turn, once", async () => {
    const env = await setup();
    env.manager.start();
    const setName = (value: string) =>
      env.destination.controller.incrementalAlterConfigs({ type: "topic", name: "t" }, [
        { name: "mirror.name", op: "SET", value },
      ]);
    setName("m1.paused");
    env.scheduler.runDue();
    await env.manager.idle();
    expect(env.coordinators.take()).toEqual(["PAUSE t-0", "PAUSE t-1"]);
    await env.manager.refresh("m1");
    expect(env.coordinators.take()).toEqual([]);
    env.coordinators.advance("PAUSING", "PAUSED");
    setName("m1");
    env.scheduler.runDue();
    await env.manager.idle();
    expect(env.coordinators.take()).toEqual(["RESUME t-0", "RESUME t-1"]);
    setName("m1.removed");
    env.scheduler.runDue();
    await env.manager.idle();
    expect(env.coordinators.take()).toEqual(["STOP t-0", "STOP t-1"]);
    await env.manager.refresh("m1");
    expect(env.coordinators.take()).toEqual([]);
  });

  it("drives the topics whose mirror.name changed in one turn together: the partition states are read once", async () => {
    const env = mirrorEnv();
    for (const name of ["t1", "t2", "t3"]) sourceTopic(env.source, name, 2);
    await env.admin.createMirror("m1", MIRROR_CONFIG);
    await env.admin.addTopics("m1", "t.*");
    env.coordinators.advance("PREPARING", "MIRRORING");
    env.coordinators.take();
    env.manager.start();
    const describe = vi.spyOn(env.coordinators, "describe");
    // What `--remove` writes: one `mirror.name` record per topic, all before the manager's next turn.
    for (const name of ["t1", "t2", "t3"]) {
      env.destination.controller.incrementalAlterConfigs({ type: "topic", name }, [
        { name: "mirror.name", op: "SET", value: "m1.removed" },
      ]);
    }
    env.scheduler.runDue();
    await env.manager.idle();
    expect(describe).toHaveBeenCalledTimes(1);
    expect(env.coordinators.take().sort()).toEqual(
      ["t1-0", "t1-1", "t2-0", "t2-1", "t3-0", "t3-1"].map((p) => `STOP ${p}`),
    );
  });

  it("STARTs partitions of an ACTIVE topic that have no state (after a refresh)", async () => {
    const env = await setup();
    await env.coordinators.tombstoneMirror("m1");
    const report = await env.manager.refresh("m1");
    expect(report?.commands.map((c) => `${c.command} ${c.key.topic}-${c.key.partition}`)).toEqual([
      "START t-0",
      "START t-1",
    ]);
  });

  it("leaves create and sync work to the broker leading the mirror", async () => {
    const env = await setup({ leads: false });
    sourceTopic(env.source, "t2");
    env.destination.controller.putMirror("m1", {
      ...env.destination.controller.image.mirrors.get("m1")!,
      "topics.include": "t.*",
    });
    const report = await env.manager.refresh("m1");
    expect(report).toMatchObject({ leader: false, createdTopics: [], commands: [] });
    expect(env.destination.controller.image.topic("t2")).toBeUndefined();
  });
});

describe("MirrorMetadataManager: non-retryable failures", () => {
  it("fails every partition non-retryably when the source cluster id changes (every broker checks)", async () => {
    const env = await setup({ leads: false });
    const other = mirrorEnv().source;
    Object.defineProperty(other, "clusterId", { value: "another-cluster-CCCCCCC" });
    env.network.target = other;
    const report = await env.manager.refresh("m1");
    expect(report?.clusterIdChanged).toEqual({
      pinned: "source-cluster-AAAAAAAAA",
      seen: "another-cluster-CCCCCCC",
    });
    expect(env.coordinators.take()).toEqual(["FAIL t-0", "FAIL t-1"]);
    const view = env.coordinators.describe("m1")[0]!;
    expect(view).toMatchObject({ state: "FAILED", retryAttempt: -1 });
    expect(view.errorMessage).toContain(
      "The source cluster id changed from source-cluster-AAAAAAAAA to another-cluster-CCCCCCC",
    );
    await env.manager.refresh("m1");
    expect(env.coordinators.take()).toEqual([]);
  });

  it("fails a source topic's partitions only after it was seen deleted on two consecutive refreshes", async () => {
    const env = await setup();
    env.source.controller.deleteTopic("t");
    const first = await env.manager.refresh("m1");
    expect(first?.deletedTopics).toEqual([]);
    expect(env.coordinators.take()).toEqual([]);
    const second = await env.manager.refresh("m1");
    expect(second?.deletedTopics).toEqual(["t"]);
    expect(env.coordinators.take()).toEqual(["FAIL t-0", "FAIL t-1"]);
    expect(env.coordinators.describe("m1")[0]).toMatchObject({
      state: "FAILED",
      retryAttempt: -1,
      errorMessage: SOURCE_TOPIC_DELETED,
    });
    await env.manager.refresh("m1");
    expect(env.coordinators.take()).toEqual([]);
  });

  it("forgets a missing observation when the topic is back (once is not enough)", async () => {
    const env = await setup();
    env.network.target = mirrorEnv().source; // same cluster id, but no topic t
    Object.defineProperty(env.network.target, "clusterId", { value: "source-cluster-AAAAAAAAA" });
    await env.manager.refresh("m1");
    env.network.target = env.source;
    await env.manager.refresh("m1");
    env.network.target = mirrorEnv().source;
    Object.defineProperty(env.network.target, "clusterId", { value: "source-cluster-AAAAAAAAA" });
    await env.manager.refresh("m1");
    expect(env.coordinators.take()).toEqual([]);
  });

  it("a topic left out of the listing but refused by name is failed as not authorized, not as deleted", async () => {
    const env = await setup();
    const refusal = new ClusterError("TOPIC_AUTHORIZATION_FAILED", "Topic authorization failed.");
    env.network.hidden.set("t", refusal);
    expect((await env.manager.refresh("m1"))?.deletedTopics).toEqual([]);
    expect((await env.manager.refresh("m1"))?.deletedTopics).toEqual([]);
    expect(env.coordinators.take()).toEqual(["FAIL t-0", "FAIL t-1"]);
    expect(env.coordinators.describe("m1")[0]).toMatchObject({
      state: "FAILED",
      retryAttempt: -1,
      errorMessage: sourceTopicNotAuthorized("t", refusal),
    });
  });

  it("a topic left out of the listing is called deleted only on the source's word: not while asking it fails", async () => {
    const env = await setup();
    env.network.hidden.set("t", new ClusterError("LEADER_NOT_AVAILABLE", "no leader right now"));
    for (let i = 0; i < 3; i++) expect((await env.manager.refresh("m1"))?.deletedTopics).toEqual([]);
    expect(env.coordinators.take()).toEqual([]);
    // It answers by name after all (the listing was another broker's, behind): it is there.
    env.network.hidden.set("t", undefined);
    for (let i = 0; i < 3; i++) expect((await env.manager.refresh("m1"))?.deletedTopics).toEqual([]);
    expect(env.coordinators.take()).toEqual([]);
    // Deleted: the source says it has no such topic.
    env.network.hidden.delete("t");
    env.source.controller.deleteTopic("t");
    await env.manager.refresh("m1");
    expect((await env.manager.refresh("m1"))?.deletedTopics).toEqual(["t"]);
  });

  it("names a mirror whose source its latest refresh found back after it had not answered, until the next refresh", async () => {
    const env = await setup();
    await env.manager.refresh("m1");
    // Answering all along: nothing came back.
    expect(env.manager.sourcesJustBack()).toEqual([]);
    env.network.reachable = false;
    await env.manager.refresh("m1");
    expect(env.manager.sourcesJustBack()).toEqual([]);
    env.network.reachable = true;
    await env.manager.refresh("m1");
    expect(env.manager.sourcesJustBack()).toEqual(["m1"]);
    // The next refresh: every broker refreshed since, the coordinator before a move among them.
    await env.manager.refresh("m1");
    expect(env.manager.sourcesJustBack()).toEqual([]);
    // Back, then down again: not back any more.
    env.network.reachable = false;
    await env.manager.refresh("m1");
    env.network.reachable = true;
    await env.manager.refresh("m1");
    env.network.reachable = false;
    await env.manager.refresh("m1");
    expect(env.manager.sourcesJustBack()).toEqual([]);
  });

  it("counts an unreachable source as a sync error and carries on with other mirrors", async () => {
    const env = await setup();
    env.network.reachable = false;
    await env.manager.refresh("m1");
    expect(env.metrics.syncErrors()).toEqual([{ mirror: "m1", kind: "TopicMetadataRefreshError", count: 1 }]);
    expect(env.errors[0]!.mirror).toBe("m1");
  });
});
