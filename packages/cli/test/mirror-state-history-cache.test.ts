import { KafkaCluster, ManualClock, ManualScheduler, SeededRandom } from "@cluster-mirror/cluster";
import { MIRROR_STATE_TOPIC, type StateHistoryPage } from "@cluster-mirror/mirror";
import type * as protocol from "@cluster-mirror/protocol";
import { encodeMirrorStateRecord, encodeRecordBatch } from "@cluster-mirror/protocol";
import fc from "fast-check";
import { pino } from "pino";
import { afterEach, describe, expect, it, vi } from "vitest";
import { historyCursorOf } from "../src/node/history-cursor";
import { buildAdminServer } from "../src/node/http-server";
import { readMirrorStateHistory } from "../src/node/mirror-state-history";
import { MirrorStateHistoryCache } from "../src/node/mirror-state-history-cache";
import { mirroringNode } from "./in-process-node";

// Every `__mirror_state` record decoded, counted (the real decoder runs).
const decodes = vi.hoisted(() => ({ count: 0 }));
vi.mock("@cluster-mirror/protocol", async (original) => {
  const actual = await original<typeof protocol>();
  return {
    ...actual,
    decodeMirrorStateRecord: (...args: Parameters<typeof actual.decodeMirrorStateRecord>) => {
      decodes.count++;
      return actual.decodeMirrorStateRecord(...args);
    },
  };
});

const open: { close(): unknown }[] = [];
const SECURITY = { adminToken: "history-cache-test-token", principals: [], allowedHosts: [] };
const AUTH = { authorization: `Bearer ${SECURITY.adminToken}` };
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

/** What `cache` answers, numbered as the route numbers it: must equal a from-scratch read. */
function expectSameAsFullRead(cache: MirrorStateHistoryCache, cluster: KafkaCluster) {
  const { records, partitions } = cache.read(cluster);
  const full = readMirrorStateHistory(cluster);
  expect(records.map((r, position) => ({ position, ...r }))).toEqual(full.records);
  expect(partitions).toEqual(full.partitions);
  return full.records;
}

/** The offsets of `partition`'s records in `records`, ascending. */
const offsetsOf = (records: readonly { partition: number; offset: number }[], partition: number) =>
  records
    .filter((r) => r.partition === partition)
    .map((r) => r.offset)
    .sort((a, b) => a - b);

/**
 * A cluster of `brokers` (manual clock) with its own 2-partition, compacted `__mirror_state` (a segment per
 * record: segment.ms 1 s), and a writer of LastMirrorEpochs records for topic id `topicId`, partition `key`.
 */
function stateTopicCluster(brokers = 1) {
  const clock = new ManualClock(1_700_000_000_000);
  const scheduler = new ManualScheduler(clock);
  const cluster = KafkaCluster.start({ brokers, clock, scheduler, random: new SeededRandom(7) });
  open.push(cluster);
  const settle = (ms = 0) => scheduler.run(ms);
  const create = () => {
    cluster.controller.createTopic({
      name: MIRROR_STATE_TOPIC,
      numPartitions: 2,
      configs: {
        "cleanup.policy": "compact",
        "segment.ms": "1000",
        "delete.retention.ms": "60000",
        "unclean.leader.election.enable": "true",
      },
    });
    settle();
  };
  create();
  const topicId = "0f0e0d0c-0b0a-4908-8706-050403020100";
  /**
   * One batch on `partition` of a record per entry (key: the mirrored partition `key`; an epoch of null, a
   * tombstone), each a second after the one before, the first stamped `at` (default: now).
   */
  const writeBatch = async (
    partition: number,
    entries: readonly { key: number; epoch: number | null }[],
    at = clock.now(),
  ) => {
    const records = entries.map(({ key, epoch }, i) => {
      const encoded = encodeMirrorStateRecord({
        key: { kind: "LastMirrorEpochs", mirrorName: "m", topicId, partition: key },
        value: { lastMirrorEpoch: epoch ?? 0 },
      });
      const value = epoch === null ? null : encoded.value;
      return {
        attributes: 0,
        offsetDelta: i,
        timestampDelta: BigInt(i * 1000),
        key: encoded.key,
        value,
        headers: [],
      };
    });
    const batch = encodeRecordBatch({ baseTimestamp: BigInt(at), records });
    await cluster.leaderFor(MIRROR_STATE_TOPIC, partition).produce({
      topic: MIRROR_STATE_TOPIC,
      partition,
      batch,
      acks: 1,
    });
    settle(1_500); // each batch in a segment of its own
  };
  /** One record on `partition` (key: the mirrored partition `key`), stamped `at` (default: now). */
  const write = (partition: number, key: number, epoch: number, at = clock.now()) =>
    writeBatch(partition, [{ key, epoch }], at);
  const logOf = (partition: number) =>
    cluster.leaderFor(MIRROR_STATE_TOPIC, partition).replica(MIRROR_STATE_TOPIC, partition)!.log;
  return { cluster, clock, settle, create, write, writeBatch, logOf };
}

describe("the node's __mirror_state history, kept between requests", () => {
  it("a request decodes only the records committed since the last one, and pages by a stable cursor", async () => {
    const node = await mirroringNode(open);
    const admin = node.destination.mirroring.admin;
    const app = buildAdminServer(node, pino({ level: "silent" }), SECURITY);
    open.push(app);
    const get = async (query: string) =>
      (
        await app.inject({ method: "GET", url: `/ui/api/mirror-state?${query}`, headers: AUTH })
      ).json() as StateHistoryPage;

    decodes.count = 0;
    const first = await get("limit=1");
    expect(first.total).toBeGreaterThan(4);
    expect(decodes.count).toBe(first.total); // the first request reads the whole topic once

    decodes.count = 0;
    const again = await get("offset=1&limit=2");
    expect(decodes.count).toBe(0); // nothing new: nothing decoded
    expect(again.records.map((r) => r.position)).toEqual([1, 2]);

    await admin.pauseTopics("m", "orders");
    await node.destination.mirroring.whenState("m", "PAUSED");
    decodes.count = 0;
    const after = await get(`after=${historyCursorOf(first.records[0]!)}&limit=10000`);
    const added = after.total - first.total;
    expect(added).toBeGreaterThan(0);
    expect(decodes.count).toBe(added); // only the pause's records
    const full = readMirrorStateHistory(node.destination.cluster);
    // The page after the first record: the whole history but it, positions included.
    expect(after.offset).toBe(1);
    expect(after.records).toEqual(full.records.slice(1));
    const bad = await app.inject({ method: "GET", url: "/ui/api/mirror-state?after=7", headers: AUTH });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.message).toContain("timestamp:partition:offset");
  });

  it("records appended between reads are merged in order, also those that sort before records listed", async () => {
    const { cluster, clock, write } = stateTopicCluster();
    const cache = new MirrorStateHistoryCache();
    await write(0, 0, 1);
    await write(1, 1, 1);
    expectSameAsFullRead(cache, cluster);
    const early = clock.now() - 10_000; // a producer clock behind: sorts before every record listed
    await write(0, 0, 2);
    await write(1, 1, 2, early);
    await write(1, 2, 1);
    const records = expectSameAsFullRead(cache, cluster);
    expect(records[0]).toMatchObject({ partition: 1, timestamp: early });
    expect(records).toHaveLength(5);
  });

  it("after compaction, DeleteRecords, truncation and a re-created topic it answers what a full read does", async () => {
    const { cluster, settle, create, write, logOf } = stateTopicCluster();
    const cache = new MirrorStateHistoryCache();
    for (let epoch = 1; epoch <= 4; epoch++) {
      await write(0, 0, epoch);
      await write(1, epoch % 2, epoch);
    }
    expect(expectSameAsFullRead(cache, cluster)).toHaveLength(8);

    // The cleaner keeps each key's last record: the rewritten segments are read again.
    cluster.leaderFor(MIRROR_STATE_TOPIC, 0).runLogCleaner();
    expect(logOf(0).rewriteCount).toBeGreaterThan(0);
    expect(expectSameAsFullRead(cache, cluster).length).toBeLessThan(8);

    // DeleteRecords moves partition 1's log start: what is below it goes.
    cluster.leaderFor(MIRROR_STATE_TOPIC, 1).deleteRecords(MIRROR_STATE_TOPIC, 1, 2n);
    await write(1, 5, 5);
    expect(expectSameAsFullRead(cache, cluster).filter((r) => r.partition === 1)).toHaveLength(3);

    // A truncation, then other records at the same offsets.
    const end = logOf(0).logEndOffset;
    logOf(0).truncateTo(end - 1n);
    await write(0, 7, 9);
    expect(logOf(0).logEndOffset).toBe(end);
    expect(expectSameAsFullRead(cache, cluster).some((r) => r.key?.partition === 7)).toBe(true);

    // The topic deleted and created again (another topic id): the history starts anew.
    cluster.controller.deleteTopic(MIRROR_STATE_TOPIC);
    settle();
    expect(cache.read(cluster).records).toEqual([]);
    create();
    await write(0, 3, 1);
    expect(expectSameAsFullRead(cache, cluster)).toHaveLength(1);
  });

  it("a compaction pass keeps what was read (no record decoded again) but the records it removed", async () => {
    const { cluster, clock, settle, write, writeBatch, logOf } = stateTopicCluster();
    const cache = new MirrorStateHistoryCache();
    // Partition 0: whole batches, and one the cleaner thins (keys 1 and 2 written again after it).
    await writeBatch(0, [
      { key: 1, epoch: 1 },
      { key: 0, epoch: 1 },
      { key: 2, epoch: 1 },
      { key: 3, epoch: 1 },
    ]);
    await write(0, 1, 2);
    await write(0, 2, 2);
    await writeBatch(0, [
      { key: 4, epoch: null },
      { key: 5, epoch: 1 },
    ]);
    await write(1, 0, 1);
    await write(1, 0, 2);
    await write(0, 6, 1);
    expect(expectSameAsFullRead(cache, cluster)).toHaveLength(11);

    decodes.count = 0;
    cluster.leaderFor(MIRROR_STATE_TOPIC, 0).runLogCleaner();
    const compacted = logOf(0);
    expect(compacted.rewriteCount).toBeGreaterThan(0);
    expect(compacted.truncationCount).toBe(0);
    // Key 1 and 2's first records went (their batch kept keys 0 and 3); the tombstone stays for now.
    const after = expectSameAsFullRead(cache, cluster);
    expect(offsetsOf(after, 0)).toEqual([1, 3, 4, 5, 6, 7, 8]);
    expect(decodes.count).toBe(after.length); // the full read's decodes only: the cache decoded none

    // Past delete.retention.ms a second pass drops the tombstone; a record appended meanwhile is read.
    clock.advance(120_000);
    settle();
    await write(0, 7, 1);
    decodes.count = 0;
    cluster.leaderFor(MIRROR_STATE_TOPIC, 0).runLogCleaner();
    const second = expectSameAsFullRead(cache, cluster);
    expect(offsetsOf(second, 0)).toEqual([1, 3, 4, 5, 7, 8, 9]);
    expect(decodes.count).toBe(second.length + 1); // the full read's and the new record's

    // A truncation right after a compaction pass: offsets read may hold other records now.
    await write(0, 6, 2);
    await write(0, 8, 1);
    expectSameAsFullRead(cache, cluster);
    const rewrites = logOf(0).rewriteCount;
    cluster.leaderFor(MIRROR_STATE_TOPIC, 0).runLogCleaner(); // key 6's first record goes
    expect(logOf(0).rewriteCount).toBe(rewrites + 1);
    const end = logOf(0).logEndOffset;
    logOf(0).truncateTo(end - 1n);
    await write(0, 9, 1);
    expect(logOf(0).logEndOffset).toBe(end);
    const truncated = expectSameAsFullRead(cache, cluster);
    expect(truncated.some((r) => r.key?.partition === 9)).toBe(true);
    expect(truncated.some((r) => r.key?.partition === 8)).toBe(false);
  });

  it("after a leader change it reads the new leader's log, and a partition without a leader is left out", async () => {
    const { cluster, settle, write, logOf } = stateTopicCluster(3);
    const cache = new MirrorStateHistoryCache();
    await write(0, 0, 1);
    await write(1, 1, 1);
    await write(0, 0, 2);
    expectSameAsFullRead(cache, cluster);
    const before = logOf(0);
    cluster.stopBroker(cluster.leaderFor(MIRROR_STATE_TOPIC, 0).brokerId);
    settle(1_000);
    expect(logOf(0)).not.toBe(before);
    await write(0, 0, 3);
    expect(expectSameAsFullRead(cache, cluster).filter((r) => r.partition === 0)).toHaveLength(3);
    for (const b of [0, 1, 2]) cluster.stopBroker(b);
    settle(1_000);
    expect(expectSameAsFullRead(cache, cluster)).toEqual([]);
  });

  it("after an unclean election it reads the new leader's log, whose offsets hold other records", async () => {
    const { cluster, settle, write } = stateTopicCluster(3);
    const cache = new MirrorStateHistoryCache();
    await write(0, 0, 1);
    const leader = cluster.leaderFor(MIRROR_STATE_TOPIC, 0).brokerId;
    const behind = (leader + 1) % 3;
    cluster.stopBroker(behind);
    settle(60_000); // out of the ISR
    await write(0, 1, 2);
    await write(0, 2, 3);
    expectSameAsFullRead(cache, cluster);
    // Only the replica that fell behind comes back, and is elected uncleanly: its log lacks offsets 1 and 2,
    // then other records take them.
    for (const b of [0, 1, 2]) if (b !== behind) cluster.stopBroker(b);
    cluster.startBroker(behind);
    settle(1_000);
    expect(cluster.leaderFor(MIRROR_STATE_TOPIC, 0).brokerId).toBe(behind);
    for (const key of [7, 8, 9]) await write(0, key, 4);
    const records = expectSameAsFullRead(cache, cluster).filter((r) => r.partition === 0);
    expect(records.map((r) => r.key?.partition)).toEqual([0, 7, 8, 9]);
  });

  it("any mix of writes, compaction passes, truncations and DeleteRecords: every read answers what a full read does", async () => {
    type Op =
      | { kind: "write"; partition: number; entries: { key: number; epoch: number | null }[] }
      | { kind: "clean"; partition: number; advanceMs: number }
      | { kind: "truncate"; partition: number; back: number }
      | { kind: "deleteRecords"; partition: number; forward: number };
    const partition = fc.integer({ min: 0, max: 1 });
    const op: fc.Arbitrary<Op> = fc.oneof(
      fc.record({
        kind: fc.constant("write" as const),
        partition,
        entries: fc.array(
          fc.record({
            key: fc.integer({ min: 0, max: 4 }),
            epoch: fc.option(fc.integer({ min: 1, max: 9 })),
          }),
          { minLength: 1, maxLength: 4 },
        ),
      }),
      fc.record({ kind: fc.constant("clean" as const), partition, advanceMs: fc.constantFrom(0, 120_000) }),
      fc.record({ kind: fc.constant("truncate" as const), partition, back: fc.integer({ min: 1, max: 3 }) }),
      fc.record({
        kind: fc.constant("deleteRecords" as const),
        partition,
        forward: fc.integer({ min: 1, max: 2 }),
      }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(op, fc.boolean()), { minLength: 1, maxLength: 25 }), async (ops) => {
        const { cluster, clock, settle, writeBatch, logOf } = stateTopicCluster();
        const cache = new MirrorStateHistoryCache();
        // Reads after some operations only: a truncation followed by writes is seen in one read.
        for (const [o, read] of ops) {
          const log = logOf(o.partition);
          if (o.kind === "write") await writeBatch(o.partition, o.entries);
          else if (o.kind === "clean") {
            clock.advance(o.advanceMs);
            settle();
            cluster.leaderFor(MIRROR_STATE_TOPIC, o.partition).runLogCleaner();
          } else if (o.kind === "truncate") {
            const to = log.logEndOffset - BigInt(o.back);
            if (to >= log.logStartOffset) log.truncateTo(to);
          } else {
            const to = log.logStartOffset + BigInt(o.forward);
            if (to <= log.highWatermark)
              cluster
                .leaderFor(MIRROR_STATE_TOPIC, o.partition)
                .deleteRecords(MIRROR_STATE_TOPIC, o.partition, to);
          }
          if (read) expectSameAsFullRead(cache, cluster);
        }
        expectSameAsFullRead(cache, cluster);
        for (const o of open.splice(0).reverse()) await o.close();
      }),
      { numRuns: 60 },
    );
  });
});
