import { KafkaError } from "@cluster-mirror/protocol";
import { afterEach, describe, expect, it } from "vitest";
import type { SourceConnector } from "../src/ports";
import {
  addTopicsWhenReady,
  createTopic,
  overrideSourceMethod,
  produce,
  twoEngineClusters,
} from "./engine-helpers";

const closers: (() => void)[] = [];
afterEach(() => {
  for (const c of closers.splice(0)) c();
});

/** `orders` (1 partition, `records` records) mirrored by `m` and caught up. */
async function mirrored(records: number, options: Parameters<typeof twoEngineClusters>[0] = {}) {
  const e = twoEngineClusters(options);
  closers.push(e.close);
  await createTopic(e.source, "orders", 1);
  await produce(e.source, "orders", 0, records);
  await e.dest.mirroring.admin.createMirror("m", { "bootstrap.servers": e.source.bootstrap });
  await addTopicsWhenReady(e.dest, "m", "orders");
  await e.dest.mirroring.whenCaughtUp("m", { timeoutMs: 30_000 });
  const config = (key: string) =>
    e.dest.mirroring.admin.describeMirrorConfig("m").configs.find((c) => c.name === key)?.value;
  const destLog = () => e.dest.cluster.leaderFor("orders", 0).replica("orders", 0)!.log;
  return { ...e, admin: e.dest.mirroring.admin, config, destLog };
}

describe("alterMirrorConfig (kafka-mirrors --alter)", () => {
  it("moves a mirror to its source's new address; mirroring goes on there", async () => {
    // Which addresses the engine opened connections to, and which connections it closed.
    const opened: string[] = [];
    const closed: string[] = [];
    const wrapSources = (inner: SourceConnector): SourceConnector => ({
      connect: (mirror, configs) => {
        const bootstrap = configs["bootstrap.servers"] ?? "";
        opened.push(bootstrap);
        const source = inner.connect(mirror, configs);
        const close = source.close?.bind(source);
        source.close = async () => {
          closed.push(bootstrap);
          await close?.();
        };
        return source;
      },
    });
    const e = await mirrored(5, { wrapSources });
    e.registry.register("source-new:9092", e.source.cluster, e.source.mirroring.asSource());
    const after = await e.admin.alterMirrorConfig("m", { set: { "bootstrap.servers": "source-new:9092" } });
    expect(after.configs.find((c) => c.name === "bootstrap.servers")?.value).toBe("source-new:9092");
    // The old address answers no more: what is copied from now on comes through the new one.
    e.registry.unregister(e.source.bootstrap);
    await produce(e.source, "orders", 0, 4);
    await e.dest.mirroring.whenCaughtUp("m", { timeoutMs: 30_000 });
    expect(e.destLog().logEndOffset).toBe(9n);
    expect(e.admin.listMirrors()[0]!.sourceBootstrap).toBe("source-new:9092");
    expect(opened).toContain("source-new:9092");
    expect(closed).toContain(e.source.bootstrap);
  }, 60_000);

  it("refuses an address that reaches another cluster, or none, and changes nothing", async () => {
    const e = await mirrored(3);
    const pinned = e.config("source.cluster.id");
    await expect(
      e.admin.alterMirrorConfig("m", { set: { "bootstrap.servers": e.dest.bootstrap } }),
    ).rejects.toThrow(
      new RegExp(
        `reaches cluster ${e.dest.cluster.clusterId}, but mirror 'm' copies cluster ${pinned}.*Nothing was changed`,
      ),
    );
    await expect(
      e.admin.alterMirrorConfig("m", { set: { "bootstrap.servers": "nowhere:9092" } }),
    ).rejects.toMatchObject({ errorName: "INVALID_CONFIG" });
    expect(e.config("bootstrap.servers")).toBe(e.source.bootstrap);
    // The running mirror was not disturbed.
    await produce(e.source, "orders", 0, 2);
    await e.dest.mirroring.whenCaughtUp("m", { timeoutMs: 30_000 });
    expect(e.destLog().logEndOffset).toBe(5n);
  }, 60_000);

  it("refuses unknown keys, deleting what a mirror needs, and another source.cluster.id", async () => {
    const e = await mirrored(1);
    const pinned = e.config("source.cluster.id")!;
    const refusals: [Parameters<typeof e.admin.alterMirrorConfig>[1], RegExp][] = [
      [
        { set: { "topic.include": "x" } },
        /Unknown mirror config 'topic\.include'.*Did you mean 'topics\.include'/,
      ],
      [
        { delete: ["topic.exclude"] },
        /Unknown mirror config 'topic\.exclude'.*Did you mean 'topics\.exclude'/,
      ],
      [{ delete: ["bootstrap.servers"] }, /bootstrap\.servers cannot be deleted/],
      [{ delete: ["source.cluster.id"] }, /source\.cluster\.id cannot be deleted/],
      [{ set: { "source.cluster.id": "other" } }, new RegExp(`pinned to ${pinned}.*create another mirror`)],
      [{ set: { "topics.include": "a" }, delete: ["topics.include"] }, /both set and deleted/],
      [{ set: { "log.start.offset.sync.enable": "maybe" } }, /log\.start\.offset\.sync\.enable/],
    ];
    const before = e.admin.describeMirrorConfig("m");
    for (const [changes, message] of refusals) {
      await expect(e.admin.alterMirrorConfig("m", changes), JSON.stringify(changes)).rejects.toThrow(message);
    }
    expect(e.admin.describeMirrorConfig("m")).toEqual(before);
    await expect(e.admin.alterMirrorConfig("nope", { set: {} })).rejects.toMatchObject({
      errorName: "UNKNOWN_MIRROR",
    });
    // Setting the pinned id again is no change.
    await e.admin.alterMirrorConfig("m", { set: { "source.cluster.id": pinned } });
  }, 60_000);

  it("a changed engine setting applies to the running mirror: log start sync off, then on again", async () => {
    const e = await mirrored(10);
    await e.admin.alterMirrorConfig("m", { set: { "log.start.offset.sync.enable": "false" } });
    const purge = (offset: string) =>
      e.source.kafka.admin().deleteTopicRecords({ topic: "orders", partitions: [{ partition: 0, offset }] });
    await purge("4");
    await produce(e.source, "orders", 0, 1);
    await e.dest.mirroring.whenCaughtUp("m", { timeoutMs: 30_000 });
    expect([e.destLog().logStartOffset, e.destLog().logEndOffset]).toEqual([0n, 11n]);
    const after = await e.admin.alterMirrorConfig("m", { set: { "log.start.offset.sync.enable": "true" } });
    expect(after.configs.find((c) => c.name === "log.start.offset.sync.enable")).toMatchObject({
      value: "true",
      isDefault: false,
    });
    await produce(e.source, "orders", 0, 1);
    await e.dest.mirroring.whenCaughtUp("m", { timeoutMs: 30_000 });
    expect([e.destLog().logStartOffset, e.destLog().logEndOffset]).toEqual([4n, 12n]);
  }, 60_000);

  it("refuses a change whose principal may not describe the mirror's topics, before anything changes", async () => {
    // Connections to `limited` present a principal the source refuses DESCRIBE on the topics.
    const wrapSources = overrideSourceMethod("limited:9092", "listOffsets", async (_real, topic) => {
      throw new KafkaError(
        "TOPIC_AUTHORIZATION_FAILED",
        29,
        false,
        `Not authorized to access topics: [${topic}]`,
      );
    });
    const e = await mirrored(3, { wrapSources });
    e.registry.register("limited:9092", e.source.cluster, e.source.mirroring.asSource());
    await expect(
      e.admin.alterMirrorConfig("m", { set: { "bootstrap.servers": "limited:9092" } }),
    ).rejects.toThrow(
      /may not describe 1 of mirror 'm''s topics \(orders: Not authorized.*Nothing was changed/,
    );
    expect(e.config("bootstrap.servers")).toBe(e.source.bootstrap);
  }, 60_000);

  it("a deletion asked while a change is tried waits for it, so a mirror created again keeps its new definition", async () => {
    // Connections to `slow` hang on the cluster id until released.
    const held: (() => void)[] = [];
    const wrapSources = overrideSourceMethod("slow:9092", "clusterId", async (real) => {
      await new Promise<void>((resolve) => held.push(resolve));
      return real.clusterId();
    });
    const e = twoEngineClusters({ wrapSources });
    closers.push(e.close);
    e.registry.register("slow:9092", e.source.cluster, e.source.mirroring.asSource());
    const admin = e.dest.mirroring.admin;
    await admin.createMirror("m", { "bootstrap.servers": e.source.bootstrap });
    const altering = admin.alterMirrorConfig("m", { set: { "bootstrap.servers": "slow:9092" } });
    while (held.length === 0) await new Promise((r) => setTimeout(r, 5));
    // The deletion runs in the mirror's command queue, after the change: the mirror still exists meanwhile.
    let deleted = false;
    const deleting = admin.deleteMirror("m").then(() => {
      deleted = true;
    });
    await new Promise((r) => setTimeout(r, 20));
    expect(deleted).toBe(false);
    await expect(
      admin.createMirror("m", { "bootstrap.servers": e.source.bootstrap, "topics.include": "orders" }),
    ).rejects.toThrow(/already exists/);
    for (const release of held.splice(0)) release();
    await altering;
    await deleting;
    await admin.createMirror("m", { "bootstrap.servers": e.source.bootstrap, "topics.include": "orders" });
    // Before the queue: the change stored its copy of the deleted mirror's definition over the new one.
    const shown = admin.describeMirrorConfig("m").configs;
    expect(shown.find((c) => c.name === "bootstrap.servers")?.value).toBe(e.source.bootstrap);
    expect(shown.find((c) => c.name === "topics.include")?.value).toBe("orders");
  }, 60_000);

  it("a mirror stored without source.cluster.id (an earlier version) is pinned by a change, and never to this cluster", async () => {
    const e = await mirrored(1);
    const stored = { ...e.dest.cluster.controller.image.mirrors.get("m")! };
    const id = stored["source.cluster.id"]!;
    delete stored["source.cluster.id"];
    e.dest.cluster.controller.putMirror("m", stored);
    // Before: with nothing pinned, any cluster was accepted, this very one too.
    await expect(
      e.admin.alterMirrorConfig("m", { set: { "bootstrap.servers": e.dest.bootstrap } }),
    ).rejects.toThrow(/this very cluster; a mirror needs another cluster as its source. Nothing was changed/);
    await expect(e.admin.alterMirrorConfig("m", { set: { "source.cluster.id": "bogus" } })).rejects.toThrow(
      new RegExp(`reaches cluster ${id}, but mirror 'm' copies cluster bogus`),
    );
    e.registry.register("source-new:9092", e.source.cluster, e.source.mirroring.asSource());
    await e.admin.alterMirrorConfig("m", { set: { "bootstrap.servers": "source-new:9092" } });
    expect(e.config("source.cluster.id")).toBe(id);
  }, 60_000);

  it("new topic patterns apply at once, not after the next refresh interval", async () => {
    const e = await mirrored(1);
    const unrelated = await e.admin.alterMirrorConfig("m", {
      set: { "mirror.metadata.refresh.interval.ms": "600000" },
    });
    expect(unrelated.unmatchedTopics).toEqual([]);
    await createTopic(e.source, "payments", 1);
    const narrowed = await e.admin.alterMirrorConfig("m", { set: { "topics.include": "payments" } });
    // orders was matched by the old include (its --add pattern) and still is mirrored: the answer says so.
    expect(narrowed.unmatchedTopics).toEqual(["orders"]);
    // The refresh the change starts adds the source topic matching the new pattern (10 minutes early).
    const deadline = Date.now() + 15_000;
    while (e.dest.cluster.controller.image.topic("payments")?.configs.get("mirror.name") !== "m") {
      if (Date.now() > deadline) throw new Error("payments was not added by the refresh the change started");
      await new Promise((r) => setTimeout(r, 20));
    }
  }, 60_000);

  it("names the mirrored topics (paused ones too) that new patterns no longer match: they stay mirrored", async () => {
    const e = await mirrored(1);
    await createTopic(e.source, "order-audit", 1);
    await addTopicsWhenReady(e.dest, "m", "order-audit");
    await e.dest.mirroring.whenCaughtUp("m", { timeoutMs: 30_000 });
    await e.admin.pauseTopics("m", "order-audit");
    const excluded = await e.admin.alterMirrorConfig("m", { set: { "topics.exclude": "__.*,order.*" } });
    expect(excluded.unmatchedTopics).toEqual(["order-audit", "orders"]);
    // Still mirrored: their mirror.name is unchanged, and a new record on orders is copied.
    for (const t of ["orders", "order-audit"])
      expect(e.dest.cluster.controller.image.topic(t)?.configs.get("mirror.name")).toMatch(/^m(\.paused)?$/);
    await produce(e.source, "orders", 0, 2);
    const deadline = Date.now() + 15_000;
    while (e.destLog().logEndOffset < 3n && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    expect(e.destLog().logEndOffset).toBe(3n);
    // Matched again: nothing to report.
    const back = await e.admin.alterMirrorConfig("m", { delete: ["topics.exclude"] });
    expect(back.unmatchedTopics).toEqual([]);
  }, 60_000);

  it("names them too when the stored config has a value a later validation refuses, fixed by the same change", async () => {
    const e = await mirrored(1);
    // As stored by an earlier version that did not check it: the whole old config no longer parses.
    e.dest.cluster.controller.putMirror("m", {
      ...e.dest.cluster.controller.image.mirrors.get("m")!,
      "mirror.num.replica.fetchers": "0",
    });
    const fixed = await e.admin.alterMirrorConfig("m", {
      set: { "mirror.num.replica.fetchers": "2", "topics.include": "payments" },
    });
    expect(fixed.unmatchedTopics).toEqual(["orders"]);
  }, 60_000);

  it("names none when an old exclude pattern no longer compiles: the old filter is not known", async () => {
    const e = await mirrored(1);
    e.dest.cluster.controller.putMirror("m", {
      ...e.dest.cluster.controller.image.mirrors.get("m")!,
      "topics.exclude": "orders(",
    });
    const fixed = await e.admin.alterMirrorConfig("m", {
      set: { "topics.exclude": "tmp.*", "topics.include": "payments" },
    });
    expect(fixed.unmatchedTopics).toEqual([]);
  }, 60_000);
});
