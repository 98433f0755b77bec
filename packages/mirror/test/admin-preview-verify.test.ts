import { type AclBinding, ClusterError, type KafkaCluster } from "@cluster-mirror/cluster";
import { afterEach, describe, expect, it } from "vitest";
import { previewFailover } from "../src/admin/failover-preview";
import { SourceConnections } from "../src/metadata/source-connections";
import type { SourceCluster, SourceFetchRequest } from "../src/ports";
import {
  addTopicsWhenReady,
  createTopic,
  type EngineCluster,
  overrideSourceMethod,
  produce,
  twoEngineClusters,
} from "./engine-helpers";

const closers: (() => void)[] = [];
afterEach(() => {
  for (const c of closers.splice(0)) c();
});

function env() {
  const e = twoEngineClusters();
  closers.push(e.close);
  return e;
}

const log = (c: EngineCluster, topic: string, partition: number) =>
  c.cluster.leaderFor(topic, partition).replica(topic, partition)!.log;

/** Every replica's batches, every topic's configs and epochs, ACLs, groups and the metadata log, as text. */
function snapshot(cluster: KafkaCluster): string {
  const image = cluster.controller.image;
  const parts: string[] = [`metadata records ${cluster.controller.metadataLog().length}`];
  for (const t of [...image.topicsById.values()].sort((a, b) => (a.name < b.name ? -1 : 1))) {
    parts.push(`${t.name} ${JSON.stringify([...t.configs].sort())}`);
    for (const p of t.partitions) {
      parts.push(`${t.name}-${p.partition} leader ${p.leader} epoch ${p.leaderEpoch} isr ${p.isr.join(",")}`);
      for (const id of cluster.runningBrokers()) {
        const r = cluster.broker(id)?.replica(t.name, p.partition);
        if (!r) continue;
        const hex = [...r.log.batches()].map((b) => b.buffer.toString("hex")).join("|");
        parts.push(`  broker ${id} hw ${r.log.highWatermark} ${hex}`);
      }
    }
  }
  parts.push(JSON.stringify(cluster.authorizer.describeAcls()));
  return parts.join("\n");
}

async function openTransaction(c: EngineCluster, topic: string) {
  const producer = c.kafka.producer({ transactionalId: "tx-open", transactionTimeout: 900_000 });
  await producer.connect();
  const txn = await producer.transaction();
  await txn.send({
    topic,
    messages: [
      { key: "a", value: "open 1", partition: 0 },
      { key: "b", value: "open 2", partition: 0 },
    ],
  });
  return { producer, producerId: producer.producerId()! };
}

describe("MirrorAdmin.previewFailover (kafka-mirrors --failover-preview)", () => {
  it("reports lag, open transactions, LME, epoch after the bump and the failback truncation, and changes nothing", async () => {
    const { source, dest } = env();
    await createTopic(source, "payments", 1);
    await produce(source, "payments", 0, 5);
    const open = await openTransaction(source, "payments");
    const admin = dest.mirroring.admin;
    await admin.createMirror("m", { "bootstrap.servers": source.bootstrap });
    await addTopicsWhenReady(dest, "m", "payments");
    await dest.mirroring.whenCaughtUp("m", { timeoutMs: 30_000 });
    await admin.pauseTopics("m", "payments");
    await dest.mirroring.whenState("m", "PAUSED", { timeoutMs: 30_000 });
    await produce(source, "payments", 0, 3); // not mirrored: the failback would truncate them on the source
    const destEnd = log(dest, "payments", 0).logEndOffset;

    const before = [snapshot(dest.cluster), snapshot(source.cluster)];
    const [row] = await admin.previewFailover("m", "payments");
    expect([snapshot(dest.cluster), snapshot(source.cluster)]).toEqual(before);

    const leaderEpoch = dest.cluster.controller.image.partition("payments", 0)!.leaderEpoch;
    const lme = log(dest, "payments", 0).latestEpoch ?? -1;
    expect(row).toEqual({
      topic: "payments",
      partition: 0,
      state: "PAUSED",
      sourceOffset: destEnd + 3n,
      destinationOffset: destEnd,
      lag: 3n,
      openTransactions: [
        {
          producerId: open.producerId.producerId,
          producerEpoch: open.producerId.producerEpoch,
          firstOffset: 5n,
        },
      ],
      lastMirrorEpoch: lme,
      leaderEpoch,
      leaderEpochAfterBump: Math.max(lme, leaderEpoch) + 10, // the failover bump: 10 above both
      failbackTruncation: { fromOffset: destEnd, records: 3n },
      failbackSupported: true,
    });

    // The real failover does what the preview said.
    await admin.removeTopics("m", "payments");
    await dest.mirroring.whenState("m", "STOPPED", { timeoutMs: 30_000 });
    expect(dest.cluster.controller.image.partition("payments", 0)!.leaderEpoch).toBe(
      row!.leaderEpochAfterBump,
    );
    expect(dest.mirroring.coordinators.describe("m")[0]!.lastMirrorEpoch).toBe(row!.lastMirrorEpoch);
    const aborts = [...log(dest, "payments", 0).batches()].filter((b) => b.isControl && b.controlType === 0);
    expect(aborts.map((b) => b.producerId)).toEqual([open.producerId.producerId]);
    await open.producer.disconnect();
  }, 60_000);

  it("predicts no failback truncation for a source that cannot fail back (a plain Kafka cluster)", async () => {
    const e = twoEngineClusters({
      wrapSources: overrideSourceMethod("source:9092", "canFailBack", () => false),
    });
    closers.push(e.close);
    const { source, dest } = e;
    await createTopic(source, "payments", 1);
    await dest.mirroring.admin.createMirror("m", { "bootstrap.servers": source.bootstrap });
    await addTopicsWhenReady(dest, "m", "payments");
    await dest.mirroring.whenCaughtUp("m", { timeoutMs: 30_000 });
    await dest.mirroring.admin.pauseTopics("m", "payments");
    await dest.mirroring.whenState("m", "PAUSED", { timeoutMs: 30_000 });
    await produce(source, "payments", 0, 3);
    const [row] = await dest.mirroring.admin.previewFailover("m", "payments");
    expect([row!.lag, row!.failbackTruncation, row!.failbackSupported]).toEqual([3n, null, false]);
  }, 60_000);

  it("still answers when the source's connection cannot be opened (not registered, a TLS file gone): unknown lag", async () => {
    const { source, dest } = env();
    await createTopic(source, "payments", 1);
    await dest.mirroring.admin.createMirror("m", { "bootstrap.servers": source.bootstrap });
    await addTopicsWhenReady(dest, "m", "payments");
    await dest.mirroring.whenCaughtUp("m", { timeoutMs: 30_000 });
    const refusing = new SourceConnections({
      connect: () => {
        throw new Error("ENOENT: no such file or directory, open '/gone/ca.pem'");
      },
    });
    const rows = await previewFailover(
      { destination: dest.cluster, sources: refusing, coordinators: dest.mirroring.coordinators },
      "m",
      "payments",
    );
    expect(
      rows.map((r) => [r.topic, r.partition, r.state, r.sourceOffset, r.lag, r.failbackSupported]),
    ).toEqual([["payments", 0, "MIRRORING", null, null, true]]);
  }, 60_000);

  it("refuses an unknown mirror and a pattern matching none of its topics", async () => {
    const { source, dest } = env();
    await createTopic(source, "payments", 1);
    await dest.mirroring.admin.createMirror("m", { "bootstrap.servers": source.bootstrap });
    await addTopicsWhenReady(dest, "m", "payments");
    await expect(dest.mirroring.admin.previewFailover("x", ".*")).rejects.toMatchObject({
      errorName: "UNKNOWN_MIRROR",
    });
    await expect(dest.mirroring.admin.previewFailover("m", "orders")).rejects.toMatchObject({
      errorName: "UNKNOWN_TOPIC_OR_PARTITION",
    });
  }, 60_000);
});

const ACL: AclBinding = {
  resourceType: "TOPIC",
  resourceName: "orders",
  patternType: "LITERAL",
  principal: "User:alice",
  host: "*",
  operation: "READ",
  permissionType: "ALLOW",
};

async function mirroredEnv(e = env()) {
  const { source, dest } = e;
  await source.kafka.admin().createTopics({
    topics: [
      {
        topic: "orders",
        numPartitions: 2,
        replicationFactor: 1,
        configEntries: [
          { name: "retention.ms", value: "604800000" },
          { name: "min.insync.replicas", value: "1" },
        ],
      },
    ],
  });
  source.cluster.authorizer.createAcls([ACL]);
  await produce(source, "orders", 0, 10);
  await produce(source, "orders", 1, 4);
  const consumer = source.kafka.consumer({ groupId: "billing" });
  await consumer.connect();
  await consumer.subscribe({ topic: "orders", fromBeginning: true });
  let n = 0;
  for (let i = 0; i < 50 && n < 14; i++) n += (await consumer.poll()).length;
  await consumer.commitOffsets();
  await consumer.disconnect();
  const admin = dest.mirroring.admin;
  await admin.createMirror("m", {
    "bootstrap.servers": source.bootstrap,
    "mirror.metadata.refresh.interval.ms": "100",
  });
  await addTopicsWhenReady(dest, "m", "orders");
  await dest.mirroring.whenCaughtUp("m", { timeoutMs: 30_000 });
  const settled = async () => (await admin.verifyMirror("m")).checks.every((c) => c.ok || c.notCompared);
  for (let i = 0; i < 200 && !(await settled()); i++) await new Promise((r) => setTimeout(r, 25));
  return e;
}

describe("MirrorAdmin.verifyMirror (cluster-mirror verify)", () => {
  it("agrees on a caught-up mirror: batches, offsets, ids, configs, ACLs, group offsets", async () => {
    const { dest } = await mirroredEnv();
    const v = await dest.mirroring.admin.verifyMirror("m");
    expect(v.topics).toEqual(["orders"]);
    expect(v.checks.map((c) => [c.check, c.ok, c.differences])).toEqual([
      ["batches", true, []],
      ["offsets", true, []],
      ["topic ids", true, []],
      ["configs", true, []],
      ["acls", true, []],
      ["group offsets", true, []],
    ]);
    expect(v.ok).toBe(true);
    expect(v.checks[1]!.compared).toBe("2 partitions (log start, log end), 14 offsets");
    expect(v.checks[3]!.compared).toMatch(/^1 topic, 1 synced dynamic config /); // min.insync.replicas is excluded
    expect(v.checks[4]!.compared).toBe("1 binding the mirror syncs");
    expect(v.checks[5]!.compared).toBe("1 group, 2 committed offsets");
  }, 60_000);

  it("names every difference: a diverged batch, log end, config, ACL and group offset", async () => {
    const { source, dest } = await mirroredEnv();
    const admin = dest.mirroring.admin;
    await admin.pauseTopics("m", "orders");
    await dest.mirroring.whenState("m", "PAUSED", { timeoutMs: 30_000 });
    // The source's partition 1 diverges: its records are rewritten with other content, plus one more.
    source.cluster.broker(0)!.replica("orders", 1)!.log.truncateTo(0n);
    await produce(source, "orders", 1, 5);
    dest.cluster.controller.incrementalAlterConfigs({ type: "topic", name: "orders" }, [
      { name: "retention.ms", op: "SET", value: "1000" },
    ]);
    dest.cluster.authorizer.createAcls([{ ...ACL, principal: "User:mallory" }]);
    dest.cluster.groups.alterOffsets("billing", [
      { topic: "orders", partition: 0, offset: 3n, leaderEpoch: -1 },
    ]);

    const v = await admin.verifyMirror("m");
    expect(v.ok).toBe(false);
    const byName = new Map(v.checks.map((c) => [c.check, c]));
    expect(byName.get("batches")!.differences).toEqual(["orders-1: batch at offset 0 differs"]);
    expect(byName.get("offsets")!.differences).toEqual(["orders-1: log end 4 here, source high watermark 5"]);
    expect(byName.get("topic ids")!.ok).toBe(true);
    expect(byName.get("configs")!.differences).toEqual([
      "orders: retention.ms=1000 here, 604800000 on the source",
    ]);
    expect(byName.get("acls")!.differences).toEqual([
      "only here: ALLOW User:mallory READ on TOPIC LITERAL orders",
    ]);
    expect(byName.get("group offsets")!.differences).toEqual(["billing orders-0: 3 here, 10 on the source"]);
  }, 60_000);

  it("leaves a group with members on the destination to them, as the sync does, rather than reporting it", async () => {
    const { source, dest } = await mirroredEnv();
    // The group's consumers moved to the destination ahead of the failover; the source's offset moves back.
    dest.cluster.groups.joinGroup({ groupId: "billing", topics: ["orders"] });
    source.cluster.groups.commitOffsets({
      groupId: "billing",
      offsets: [{ topic: "orders", partition: 0, offset: 5n }],
    });
    const report = await dest.mirroring.refreshNow("m");
    expect(report.groups?.skippedActive).toEqual(["billing"]);
    expect(dest.cluster.groups.fetchOffsets("billing").get("orders:0")?.offset).toBe(10n);

    const v = await dest.mirroring.admin.verifyMirror("m");
    const groups = v.checks.find((c) => c.check === "group offsets")!;
    expect(groups).toMatchObject({
      ok: true,
      differences: [],
      compared: "0 groups, 0 committed offsets; 1 group with members here not compared",
    });
    expect(v.ok).toBe(true);
  }, 60_000);

  it("agrees after a DeleteRecords inside a batch: the copy follows the log start, the batch holding it is compared", async () => {
    const { source, dest } = await mirroredEnv();
    // orders-0's ten records are one batch (offsets 0-9): the new log start falls inside it.
    await source.kafka
      .admin()
      .deleteTopicRecords({ topic: "orders", partitions: [{ partition: 0, offset: "3" }] });
    const admin = dest.mirroring.admin;
    const log = dest.cluster.leaderFor("orders", 0).replica("orders", 0)!.log;
    for (let i = 0; i < 400 && log.logStartOffset !== 3n; i++) await new Promise((r) => setTimeout(r, 10));
    expect(log.logStartOffset).toBe(3n);

    // Before: the batch was fetched from the source at its base offset 0, below the source's log start,
    // and verify reported "the source refused the fetch at offset 0: ... OFFSET_OUT_OF_RANGE" for good.
    const v = await admin.verifyMirror("m");
    const byName = new Map(v.checks.map((c) => [c.check, c]));
    expect(byName.get("batches")).toMatchObject({ ok: true, differences: [] });
    expect(byName.get("batches")!.compared).toMatch(/2 partitions, 2 batches byte for byte/);
    expect(byName.get("offsets")).toMatchObject({ ok: true, differences: [] });
  }, 60_000);

  it("compares batches only from the source's log start, and reports the moved log start", async () => {
    const { source, dest } = await mirroredEnv();
    await dest.mirroring.admin.pauseTopics("m", "orders");
    await dest.mirroring.whenState("m", "PAUSED", { timeoutMs: 30_000 });
    await source.kafka
      .admin()
      .deleteTopicRecords({ topic: "orders", partitions: [{ partition: 0, offset: "10" }] });

    const v = await dest.mirroring.admin.verifyMirror("m");
    const byName = new Map(v.checks.map((c) => [c.check, c]));
    expect(byName.get("batches")!.ok).toBe(true);
    expect(byName.get("offsets")!.differences).toEqual(["orders-0: log start 0 here, 10 on the source"]);
    expect(v.ok).toBe(false);
  }, 60_000);

  it("with log.start.offset.sync.enable=false, a copy that keeps what the source deleted agrees; one that lost more does not", async () => {
    const { source, dest } = await mirroredEnv();
    const admin = dest.mirroring.admin;
    await admin.alterMirrorConfig("m", { set: { "log.start.offset.sync.enable": "false" } });
    await source.kafka
      .admin()
      .deleteTopicRecords({ topic: "orders", partitions: [{ partition: 0, offset: "4" }] });
    // The copy keeps offsets 0-3 as asked, while it goes on mirroring.
    await produce(source, "orders", 0, 2);
    await dest.mirroring.whenCaughtUp("m", { timeoutMs: 30_000 });
    expect([log(dest, "orders", 0).logStartOffset, log(dest, "orders", 0).logEndOffset]).toEqual([0n, 12n]);

    // Before: "orders-0: log start 0 here, 4 on the source", for good, though the mirror was told to keep them.
    const v = await admin.verifyMirror("m");
    const byName = new Map(v.checks.map((c) => [c.check, c]));
    expect(byName.get("offsets")).toMatchObject({ ok: true, differences: [] });
    expect(byName.get("batches")).toMatchObject({ ok: true, differences: [] });

    // A copy that holds less than its source at the start (records the source still has) still differs.
    log(dest, "orders", 1).deleteRecordsBefore(2n);
    const lost = await admin.verifyMirror("m");
    expect(lost.checks.find((c) => c.check === "offsets")!.differences).toEqual([
      "orders-1: log start 2 here, 0 on the source",
    ]);
    expect(lost.ok).toBe(false);
  }, 60_000);
});

describe("MirrorAdmin.verifyMirror: a copy that holds less than its source", () => {
  it("reports a batch missing in the middle of the copy, though every batch it holds matches", async () => {
    const { source, dest } = await mirroredEnv();
    await produce(source, "orders", 0, 2); // offsets 10-11
    await produce(source, "orders", 0, 2); // offsets 12-13
    await dest.mirroring.whenCaughtUp("m", { timeoutMs: 30_000 });
    await dest.mirroring.admin.pauseTopics("m", "orders");
    await dest.mirroring.whenState("m", "PAUSED", { timeoutMs: 30_000 });
    // The copy loses the batch at 10-11 and keeps the one after it, at its offsets: a gap, as a lost append leaves.
    const copy = log(dest, "orders", 0);
    const last = [...copy.batches()].find((b) => b.baseOffset === 12n)!;
    const bytes = Buffer.from(last.buffer);
    copy.truncateTo(10n);
    copy.appendAsIs(bytes);
    copy.updateHighWatermark(14n);
    expect([...copy.batches()].map((b) => b.baseOffset)).toEqual([0n, 12n]);

    // Before: only the copy's own batches were looked up on the source, both equal, and the log ends
    // agreed (14): verify said the mirror was whole.
    const v = await dest.mirroring.admin.verifyMirror("m");
    const byName = new Map(v.checks.map((c) => [c.check, c]));
    expect(byName.get("batches")!.differences).toEqual([
      "orders-0: batch at offset 10 of the source missing here",
    ]);
    expect(byName.get("offsets")!.ok).toBe(true);
    expect(v.ok).toBe(false);
  }, 60_000);
});

/**
 * A caught-up mirror whose destination followers are slow: the leader holds the fetched tail (offsets
 * 10-11 of orders-0) before they have it, so its high watermark stays at 10.
 */
async function tailNotReplicated() {
  const { source, dest } = await mirroredEnv();
  dest.cluster.setReplicationLatency(60_000);
  await produce(source, "orders", 0, 2); // offsets 10-11
  const copy = log(dest, "orders", 0);
  for (let i = 0; i < 400 && copy.logEndOffset !== 12n; i++) await new Promise((r) => setTimeout(r, 10));
  expect([copy.logEndOffset, copy.highWatermark]).toEqual([12n, 10n]);
  return { source, dest };
}

describe("MirrorAdmin.verifyMirror: a copy whose tail is not replicated yet", () => {
  it("reports a high watermark below the log end, though the log end equals the source's", async () => {
    const { dest } = await tailNotReplicated();

    // Before: the batches check stopped at the high watermark (10) and the offsets check read the log
    // end (12, as the source's): verify said the copy was whole, the tail neither compared nor replicated.
    const v = await dest.mirroring.admin.verifyMirror("m");
    const byName = new Map(v.checks.map((c) => [c.check, c]));
    expect(byName.get("offsets")!.differences).toEqual([
      "orders-0: high watermark 10 here, below its log end 12 (not yet replicated to the ISR), source high watermark 12",
    ]);
    expect(v.ok).toBe(false);
  }, 60_000);
});

describe("ClusterMirroring.whenCaughtUp: a copy whose tail is not replicated yet", () => {
  it("waits for the destination's high watermark, not only its leader's log end", async () => {
    const { dest } = await tailNotReplicated();

    // Before: resolved here, the tail on the leader alone: a leader lost now would take it along.
    await expect(dest.mirroring.whenCaughtUp("m", { timeoutMs: 500, intervalMs: 50 })).rejects.toThrow(
      /orders-0 MIRRORING lag 0, high watermark 10 \(not yet replicated to the ISR\)/,
    );
    // (Once replicated it resolves, as every other test of a caught-up mirror shows.)
  }, 60_000);
});

describe("MirrorAdmin.verifyMirror: a source whose leader moves while it runs", () => {
  it("asks the partition's new leader instead of reporting a difference", async () => {
    // Armed after the setup: verify's next two fetches reach a broker that no longer leads (it is gone,
    // then it answers NOT_LEADER_OR_FOLLOWER), as in a source's leader election mid-run.
    let moves = 0;
    const moved = (real: SourceCluster, ...args: unknown[]) => {
      const request = args[0] as SourceFetchRequest;
      if (request.clientId !== "cluster-mirror-verify" || moves === 0) return real.fetch(request);
      moves--;
      if (moves === 1) throw new ClusterError("BROKER_NOT_AVAILABLE", "source broker 0 is not reachable");
      const error = new ClusterError("NOT_LEADER_OR_FOLLOWER", "broker 0 does not lead orders-0");
      return Promise.resolve({
        throttleTimeMs: 0,
        partitions: request.partitions.map((p) => ({
          topic: p.topic,
          partition: p.partition,
          error,
          recordSlices: [],
          highWatermark: -1n,
          lastStableOffset: -1n,
          logStartOffset: -1n,
        })),
      });
    };
    const e = twoEngineClusters({ wrapSources: overrideSourceMethod("source:9092", "fetch", moved) });
    closers.push(e.close);
    const { dest } = await mirroredEnv(e);
    moves = 2;

    // Before: "orders-0: the source refused the fetch at offset 0: source broker 0 is not reachable"
    // thrown out of verify as a whole (the broker gone), or listed as a difference (NOT_LEADER_OR_FOLLOWER).
    const v = await dest.mirroring.admin.verifyMirror("m");
    expect(moves).toBe(0);
    expect(v.checks[0]).toMatchObject({ check: "batches", ok: true, differences: [] });
    expect(v.ok).toBe(true);
  }, 60_000);
});

describe("MirrorAdmin.verifyMirror: a source topic created again with fewer partitions", () => {
  it("reports each partition the source lacks instead of failing as a whole", async () => {
    const { source, dest } = await mirroredEnv();
    await dest.mirroring.admin.pauseTopics("m", "orders");
    await dest.mirroring.whenState("m", "PAUSED", { timeoutMs: 30_000 });
    const admin = source.kafka.admin();
    await admin.deleteTopics({ topics: ["orders"] });
    await createTopic(source, "orders", 1);
    await produce(source, "orders", 0, 10);

    // Before: ListOffsets of orders-1, which the source no longer has, was thrown out of verify, as
    // "Cannot reach the source cluster": no check answered.
    const v = await dest.mirroring.admin.verifyMirror("m");
    const byName = new Map(v.checks.map((c) => [c.check, c]));
    expect(byName.get("topic ids")!.differences).toHaveLength(1);
    expect(byName.get("topic ids")!.differences[0]).toMatch(/^orders: id \S+ here, \S+ on the source$/);
    expect(byName.get("batches")!.differences).toEqual([
      "orders-0: batch at offset 0 differs",
      "orders-1: not on the source",
    ]);
    expect(byName.get("offsets")!.differences).toEqual(["orders-1: not on the source"]);
    expect(v.ok).toBe(false);
  }, 60_000);
});

describe("MirrorAdmin.verifyMirror: a source that refuses DescribeAcls", () => {
  it("marks the ACLs not compared and still gives every other verdict", async () => {
    // As Kafka (and the embedded source) answers a principal without DESCRIBE on the CLUSTER.
    const refused = () => {
      throw new ClusterError(
        "CLUSTER_AUTHORIZATION_FAILED",
        "User:mirror may not DESCRIBE CLUSTER 'kafka-cluster'",
      );
    };
    const e = twoEngineClusters({
      wrapSources: overrideSourceMethod("source:9092", "describeAcls", refused),
    });
    closers.push(e.close);
    const { dest } = await mirroredEnv(e);

    // Before: the refusal was thrown out of verify as a whole, and no check answered.
    const v = await dest.mirroring.admin.verifyMirror("m");
    expect(v.checks.map((c) => [c.check, c.ok])).toEqual([
      ["batches", true],
      ["offsets", true],
      ["topic ids", true],
      ["configs", true],
      ["acls", false],
      ["group offsets", true],
    ]);
    expect(v.checks[4]).toEqual({
      check: "acls",
      ok: false,
      notCompared: true,
      compared: "not compared (the source refused DescribeAcls: CLUSTER_AUTHORIZATION_FAILED)",
      differences: [
        "grant the mirror's principal DESCRIBE on the source's CLUSTER (the ACL sync needs it too), or set acls.sync.enable=false",
      ],
    });
    expect(v.ok).toBe(false); // not everything was compared: not a clean bill
  }, 60_000);
});
