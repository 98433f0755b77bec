import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { FileDataDir } from "../src/data-dir";
import { batch, batchesOf, testCluster } from "./helpers";

/** When set, `rmSync` (`renameSync`, `readdirSync`) of a path containing it throws, as a failing disk would (the rest of node:fs is real). */
const failing = vi.hoisted(() => ({
  rmPath: undefined as string | undefined,
  renamePath: undefined as string | undefined,
  readdirPath: undefined as string | undefined,
}));

vi.mock("node:fs", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:fs")>();
  const rmSync = (p: fs.PathLike, options?: fs.RmOptions) => {
    if (failing.rmPath !== undefined && String(p).includes(failing.rmPath)) {
      throw Object.assign(new Error(`EIO: i/o error, rmdir '${String(p)}'`), { code: "EIO" });
    }
    return real.rmSync(p, options);
  };
  const renameSync = (from: fs.PathLike, to: fs.PathLike) => {
    if (failing.renamePath !== undefined && String(from).includes(failing.renamePath)) {
      throw Object.assign(new Error(`EIO: i/o error, rename '${String(from)}'`), { code: "EIO" });
    }
    return real.renameSync(from, to);
  };
  const readdirSync = ((p: fs.PathLike, options?: unknown) => {
    if (failing.readdirPath !== undefined && String(p).includes(failing.readdirPath)) {
      throw Object.assign(new Error(`EIO: i/o error, scandir '${String(p)}'`), { code: "EIO" });
    }
    return real.readdirSync(p, options as fs.ObjectEncodingOptions);
  }) as typeof fs.readdirSync;
  const mocked = { ...real, rmSync, renameSync, readdirSync };
  return { ...mocked, default: mocked };
});

const dirs: string[] = [];
afterEach(() => {
  failing.rmPath = undefined;
  failing.renamePath = undefined;
  failing.readdirPath = undefined;
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "cm-deleted-dirs-"));
  dirs.push(d);
  return d;
}

/** One broker on a real data dir, with topic `t` of `partitions` partitions holding "old" at offset 0. */
async function oneBrokerWithTopic(partitions: number) {
  const dataDir = tempDir();
  const warnings: Record<string, unknown>[] = [];
  const t = testCluster({ dataDir, fsync: false, brokers: 1, logger: { warn: (f) => warnings.push(f) } });
  t.cluster.controller.createTopic({
    name: "t",
    replicaAssignment: Array.from({ length: partitions }, () => [0]),
  });
  t.settle();
  for (let p = 0; p < partitions; p++) {
    await t.cluster.broker(0)!.produce({ topic: "t", partition: p, batch: batch(["old"]), acks: 1 });
  }
  const brokerDir = path.join(dataDir, "broker-0");
  const entries = () =>
    fs
      .readdirSync(brokerDir)
      .filter((n) => n.startsWith("t-"))
      .sort();
  return { ...t, brokerDir, entries, warnings };
}

describe("a deleted topic's log directories (Kafka renames them to -delete before removing them)", () => {
  it("a removal that fails leaves no directory a topic created again under the name would open", async () => {
    const { cluster, settle, entries } = await oneBrokerWithTopic(2);
    // The disk fails while the directories are removed: the broker carries on with the next partition.
    failing.rmPath = "t-0";
    cluster.controller.deleteTopic("t");
    settle();
    expect(entries().filter((n) => /^t-\d+$/.test(n))).toEqual([]);
    failing.rmPath = undefined;
    cluster.controller.createTopic({ name: "t", replicaAssignment: [[0], [0]] });
    settle();
    // The new topic's partitions start empty: none holds the deleted topic's "old" record.
    for (const p of [0, 1]) expect(cluster.broker(0)!.replica("t", p)!.log.logEndOffset).toBe(0n);
    expect(batchesOf(cluster, 0, "t")).toEqual([]);
  });

  it("a directory that cannot be renamed away stops neither the other partitions' deletion nor the new topic", async () => {
    const { cluster, settle, entries, warnings } = await oneBrokerWithTopic(2);
    failing.renamePath = "t-0";
    cluster.controller.deleteTopic("t");
    settle();
    expect(entries()).toEqual(["t-0"]);
    expect(warnings.map((w) => [w.event, w.partition])).toEqual([["storage.delete_failed", "t-0"]]);
    failing.renamePath = undefined;
    cluster.controller.createTopic({ name: "t", replicaAssignment: [[0], [0]] });
    settle();
    for (const p of [0, 1]) expect(cluster.broker(0)!.replica("t", p)!.log.logEndOffset).toBe(0n);
  });

  it("a directory the deleted topic left behind is not opened as the new topic's log", async () => {
    const { cluster, settle, brokerDir } = await oneBrokerWithTopic(1);
    const saved = tempDir();
    fs.cpSync(path.join(brokerDir, "t-0"), path.join(saved, "t-0"), { recursive: true });
    cluster.controller.deleteTopic("t");
    settle();
    // As an older version, or a removal interrupted outside this process, would leave it.
    fs.cpSync(path.join(saved, "t-0"), path.join(brokerDir, "t-0"), { recursive: true });
    cluster.controller.createTopic({ name: "t", replicaAssignment: [[0]] });
    settle();
    expect(cluster.broker(0)!.replica("t", 0)!.log.logEndOffset).toBe(0n);
    const info = await cluster
      .broker(0)!
      .produce({ topic: "t", partition: 0, batch: batch(["new"]), acks: 1 });
    expect(info.baseOffset).toBe(0n);
  });

  it("directories renamed for deletion are removed when the data dir is opened again", async () => {
    const { cluster, settle, brokerDir, entries } = await oneBrokerWithTopic(1);
    failing.rmPath = "-delete";
    cluster.controller.deleteTopic("t");
    settle();
    const left = entries();
    expect(left).toHaveLength(1);
    expect(left[0]).toMatch(/^t-0\.[0-9a-f]{32}-delete$/);
    failing.rmPath = undefined;
    new FileDataDir(brokerDir, { fsync: false });
    expect(entries()).toEqual([]);
  });

  it("a restart's replay of a deleted topic leaves the live topic of the same name whole", async () => {
    // "same id": created again under the id it had (a mirror topic takes its source topic's id).
    for (const disk of ["file", "memory", "same id"] as const) {
      const t = disk !== "memory" ? await oneBrokerWithTopic(1) : testCluster({ brokers: 1 });
      const { cluster, settle } = t;
      if (disk === "memory") {
        cluster.controller.createTopic({ name: "t", replicaAssignment: [[0]] });
        settle();
        await cluster.broker(0)!.produce({ topic: "t", partition: 0, batch: batch(["old"]), acks: 1 });
      }
      const topicId = cluster.controller.image.topic("t")!.topicId;
      cluster.controller.deleteTopic("t");
      settle();
      cluster.controller.createTopic({
        name: "t",
        replicaAssignment: [[0]],
        ...(disk === "same id" ? { topicId } : {}),
      });
      settle();
      await cluster.broker(0)!.produce({ topic: "t", partition: 0, batch: batch(["new", "new"]), acks: 1 });
      const hex = () => batchesOf(cluster, 0, "t").map((b) => b.buffer.toString("hex"));
      const before = hex();
      expect(before).toHaveLength(1);
      cluster.stopBroker(0);
      // The replay creates the deleted topic "t" before it removes it: its replica must not be opened
      // over (or deleted with) the directory that now holds the live "t".
      cluster.startBroker(0);
      settle();
      expect(cluster.broker(0)!.replica("t", 0)!.log.logEndOffset, disk).toBe(2n);
      expect(hex(), disk).toEqual(before);
    }
  });

  it("a broker down while a topic was deleted and created again keeps none of the deleted topic's records", async () => {
    // "same id": created again under the id it had (a mirror topic takes its source topic's id).
    for (const disk of ["memory", "same id"] as const) {
      const { cluster, settle } = testCluster({
        brokers: 2,
        ...(disk === "same id" ? { dataDir: tempDir(), fsync: false } : {}),
      });
      cluster.controller.createTopic({ name: "t", replicaAssignment: [[0, 1]] });
      settle();
      await cluster.broker(0)!.produce({ topic: "t", partition: 0, batch: batch(["old"]), acks: 1 });
      settle();
      const topicId = cluster.controller.image.topic("t")!.topicId;
      cluster.stopBroker(0);
      // Broker 0 misses both: its restart's replay sees the removal with "t" live at the log's end.
      cluster.controller.deleteTopic("t");
      cluster.controller.createTopic({
        name: "t",
        replicaAssignment: [[0, 1]],
        ...(disk === "same id" ? { topicId } : {}),
      });
      settle();
      // Two batches: the stale replica's log end (1) is a batch boundary of the live topic's log, so the
      // epoch check (epoch 0 on both) sees no divergence and the follower fetches from offset 1 on.
      for (const v of ["new", "new2"]) {
        await cluster.broker(1)!.produce({ topic: "t", partition: 0, batch: batch([v]), acks: 1 });
      }
      const hex = (id: number) => batchesOf(cluster, id, "t").map((b) => b.buffer.toString("hex"));
      for (let restart = 0; restart < 2; restart++) {
        cluster.stopBroker(0);
        cluster.startBroker(0);
        settle();
        expect(hex(0), `${disk}, restart ${restart}`).toEqual(hex(1));
        expect(cluster.broker(0)!.replica("t", 0)!.log.logEndOffset, disk).toBe(2n);
      }
    }
  });

  it("a directory a deleted topic left while its broker was down goes, though the name is live again", async () => {
    const dataDir = tempDir();
    const t = testCluster({ dataDir, fsync: false, brokers: 2 });
    t.cluster.controller.createTopic({ name: "t", replicaAssignment: [[0, 1]] });
    t.settle();
    await t.cluster.broker(0)!.produce({ topic: "t", partition: 0, batch: batch(["old"]), acks: 1 });
    t.settle();
    t.cluster.stopBroker(1);
    t.cluster.controller.deleteTopic("t");
    t.cluster.controller.createTopic({ name: "t", replicaAssignment: [[0]] });
    t.settle();
    t.cluster.startBroker(1);
    t.settle();
    // Broker 1 hosts no replica of the live "t": the deleted one's directory must not stay for good.
    expect(fs.readdirSync(path.join(dataDir, "broker-1")).filter((n) => n.startsWith("t-"))).toEqual([]);
  });

  it("a directory a deleted topic left under its name is removed by the restart's replay", async () => {
    const { cluster, settle, brokerDir, entries } = await oneBrokerWithTopic(1);
    const saved = tempDir();
    fs.cpSync(path.join(brokerDir, "t-0"), path.join(saved, "t-0"), { recursive: true });
    cluster.controller.deleteTopic("t");
    settle();
    cluster.stopBroker(0);
    // A crash before the broker handled the deletion leaves it so.
    fs.cpSync(path.join(saved, "t-0"), path.join(brokerDir, "t-0"), { recursive: true });
    cluster.startBroker(0);
    settle();
    expect(entries()).toEqual([]);
  });

  it("a topic of the longest name Kafka allows (249 characters) is deleted, and its name used again", async () => {
    const dataDir = tempDir();
    const warnings: Record<string, unknown>[] = [];
    const { cluster, settle } = testCluster({
      dataDir,
      fsync: false,
      brokers: 1,
      logger: { warn: (f) => warnings.push(f) },
    });
    const name = "x".repeat(249);
    cluster.controller.createTopic({ name, replicaAssignment: [[0]] });
    settle();
    await cluster.broker(0)!.produce({ topic: name, partition: 0, batch: batch(["old"]), acks: 1 });
    cluster.controller.deleteTopic(name);
    settle();
    // The -delete name is capped at 255 characters as Kafka's is (a longer one fails with ENAMETOOLONG).
    expect(warnings).toEqual([]);
    expect(fs.readdirSync(path.join(dataDir, "broker-0")).filter((n) => n.startsWith("x"))).toEqual([]);
    cluster.controller.createTopic({ name, replicaAssignment: [[0]] });
    settle();
    expect(cluster.broker(0)!.replica(name, 0)!.log.logEndOffset).toBe(0n);
  });
});

describe("a deleted topic's log that stays on disk (a failing disk) and a topic created again under its id", () => {
  // A mirror topic takes its source topic's id: partition.metadata cannot tell the two topics apart.
  it("a directory that could not be renamed away is deleted before the topic created again opens it", async () => {
    const { cluster, settle, entries } = await oneBrokerWithTopic(1);
    const topicId = cluster.controller.image.topic("t")!.topicId;
    failing.renamePath = "t-0";
    cluster.controller.deleteTopic("t");
    settle();
    expect(entries()).toEqual(["t-0"]);
    failing.renamePath = undefined;
    cluster.controller.createTopic({ name: "t", replicaAssignment: [[0]], topicId });
    settle();
    expect(cluster.broker(0)!.replica("t", 0)!.log.logEndOffset).toBe(0n);
    expect(batchesOf(cluster, 0, "t")).toEqual([]);
  });

  it("the removed-topics checkpoint does not move past a removal whose directory is still there", async () => {
    const { cluster, settle, entries } = await oneBrokerWithTopic(1);
    const topicId = cluster.controller.image.topic("t")!.topicId;
    cluster.controller.createTopic({ name: "u", replicaAssignment: [[0]] });
    settle();
    failing.renamePath = "t-0";
    cluster.controller.deleteTopic("t");
    // Another topic created again under its name would write the checkpoint past t's removal.
    cluster.controller.deleteTopic("u");
    cluster.controller.createTopic({ name: "u", replicaAssignment: [[0]] });
    settle();
    expect(entries()).toEqual(["t-0"]);
    cluster.stopBroker(0);
    failing.renamePath = undefined;
    cluster.controller.createTopic({ name: "t", replicaAssignment: [[0]], topicId });
    cluster.startBroker(0);
    settle(1000);
    expect(cluster.broker(0)!.replica("t", 0)!.log.logEndOffset).toBe(0n);
    expect(batchesOf(cluster, 0, "t")).toEqual([]);
    expect(cluster.broker(0)!.replica("u", 0)).toBeDefined();
  });

  it("a hosted log that could not be opened when its topic was deleted is deleted with it", async () => {
    const { cluster, settle, entries } = await oneBrokerWithTopic(1);
    const topicId = cluster.controller.image.topic("t")!.topicId;
    cluster.stopBroker(0);
    // The restart cannot read the directory: the replica stays closed, retried after the backoff.
    failing.readdirPath = "t-0";
    cluster.startBroker(0);
    settle(1000);
    expect(cluster.broker(0)!.replica("t", 0)).toBeUndefined();
    cluster.controller.deleteTopic("t");
    settle();
    failing.readdirPath = undefined;
    expect(entries()).toEqual([]);
    cluster.controller.createTopic({ name: "t", replicaAssignment: [[0]], topicId });
    settle();
    expect(cluster.broker(0)!.replica("t", 0)!.log.logEndOffset).toBe(0n);
  });
});

describe("the removed-topics checkpoint", () => {
  it("an empty checkpoint file is no checkpoint: the restart keeps the live topic of a removed name", async () => {
    const { cluster, settle, brokerDir } = await oneBrokerWithTopic(1);
    cluster.controller.deleteTopic("t");
    cluster.controller.createTopic({ name: "t", replicaAssignment: [[0]] });
    settle();
    await cluster.broker(0)!.produce({ topic: "t", partition: 0, batch: batch(["new", "new"]), acks: 1 });
    cluster.stopBroker(0);
    // What a power loss can leave of a file renamed in place without fsync (`fsync: false`).
    fs.writeFileSync(path.join(brokerDir, "removed-topics-checkpoint"), "");
    cluster.startBroker(0);
    settle();
    expect(cluster.broker(0)!.replica("t", 0)!.log.logEndOffset).toBe(2n);
  });
});
