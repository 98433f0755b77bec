import { afterEach, describe, expect, it } from "vitest";
import type { SourceConnector } from "../src/ports";
import { addTopicsWhenReady, createTopic, produce, twoEngineClusters } from "./engine-helpers";

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
});
