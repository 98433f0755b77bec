import { EventLoopScheduler, KafkaCluster, SeededRandom, SystemClock } from "@cluster-mirror/cluster";
import {
  ClusterMirroring,
  type SourceFetchPartition,
  type SourceFetchPartitionResult,
} from "@cluster-mirror/mirror";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { prefixEnd, scanFetchedBatches } from "../../../mirror/src/fetcher/batch-scan";
import { KafkajsSourceCluster, KafkajsSourceConnector } from "../../src/index";
import {
  caughtUpWithBroker,
  createServedTopics,
  destinationBatches,
  hexOf,
  kafkaClient,
  storedBatches,
} from "./helpers";

/**
 * What the real broker answers a consumer fetch at the edges the mirror's fetcher relies on (Kafka 3.9's
 * `LogSegment.read`, `ReplicaManager.readFromLocalLog`, `Partition.readRecords`): a byte limit that cuts a
 * batch, a first batch larger than the limits (KIP-74), an offset out of range on either side, and a last
 * fetched epoch the leader has never had.
 */
describe("the real broker's fetch answers at the edges the mirror relies on", () => {
  const TOPIC = "fetch-semantics";
  const DELETED = "fetch-semantics-deleted";
  const client = kafkaClient("fetch-semantics-test");
  const admin = client.admin();
  const producer = client.producer();
  let source: KafkajsSourceCluster;
  let leaders: Awaited<ReturnType<KafkajsSourceCluster["partitionLeaders"]>>;

  const value = (i: number) => `${i}:${"x".repeat(400 + i)}`;

  beforeAll(async () => {
    await admin.connect();
    await createServedTopics(admin, [
      { topic: TOPIC, numPartitions: 2 },
      { topic: DELETED, numPartitions: 1 },
    ]);
    await producer.connect();
    // Three batches per partition, of five records each (one send per batch).
    for (let b = 0; b < 3; b++)
      for (const [topic, partition] of [
        [TOPIC, 0],
        [TOPIC, 1],
        [DELETED, 0],
      ] as const)
        await producer.send({
          topic,
          messages: Array.from({ length: 5 }, (_, i) => ({ partition, value: value(b * 5 + i) })),
        });
    source = new KafkajsSourceCluster("semantics", { "bootstrap.servers": inject("kafkaBootstrap") });
    leaders = await source.partitionLeaders([TOPIC, DELETED]);
  });

  afterAll(async () => {
    await source.close();
    await producer.disconnect();
    await admin.disconnect();
  });

  const at = (
    topic: string,
    partition: number,
    fetchOffset: bigint,
    maxBytes: number,
    lastFetchedEpoch = -1,
  ): SourceFetchPartition => {
    const l = leaders.find((x) => x.topic === topic && x.partition === partition)!;
    return { topic, partition, fetchOffset, lastFetchedEpoch, currentLeaderEpoch: l.leaderEpoch, maxBytes };
  };
  const fetch = async (maxBytes: number, partitions: SourceFetchPartition[]) =>
    (
      await source.fetch({
        clientId: "semantics-fetcher",
        brokerId: leaders[0]!.leaderId,
        maxBytes,
        partitions,
      })
    ).partitions;
  const records = (r: SourceFetchPartitionResult) => Buffer.concat(r.recordSlices);

  it("a byte limit inside the second batch: the first whole, then part of the second, which the scan leaves for the next fetch", async () => {
    const stored = storedBatches(TOPIC, 0);
    expect(stored).toHaveLength(3);
    const [b0, b1] = stored as [(typeof stored)[0], (typeof stored)[0]];
    const limit = b0.buffer.length + Math.floor(b1.buffer.length / 2);
    const [answer] = await fetch(1 << 20, [at(TOPIC, 0, 0n, limit)]);
    expect(answer!.error).toBeUndefined();
    const bytes = records(answer!);
    expect(bytes.length).toBe(limit);
    expect(bytes.subarray(0, b0.buffer.length).equals(b0.buffer)).toBe(true);
    const scan = scanFetchedBatches(answer!.recordSlices, 1_000);
    expect(scan.corrupt).toBeUndefined();
    expect([scan.validBytes, scan.batchCount]).toEqual([b0.buffer.length, 1]);
    expect(prefixEnd(answer!.recordSlices, scan)?.nextOffset).toBe(b1.baseOffset);
    // The next fetch starts at the cut batch and gets it whole.
    const [next] = await fetch(1 << 20, [at(TOPIC, 0, b1.baseOffset, b1.buffer.length)]);
    expect(records(next!).equals(b1.buffer)).toBe(true);
  });

  it("a first batch larger than both limits comes whole (KIP-74); a later partition's that does not fit comes empty, never cut", async () => {
    const [p0] = storedBatches(TOPIC, 0);
    const [p1] = storedBatches(TOPIC, 1);
    const [alone] = await fetch(10, [at(TOPIC, 0, 0n, 10)]);
    expect(records(alone!).equals(p0!.buffer)).toBe(true);
    // The response limit is used up by partition 0 (its first batch and a piece of its second): partition 1
    // gets nothing rather than a cut first batch, without an error; the next fetch asks again.
    const [first, second] = await fetch(p0!.buffer.length + 10, [
      at(TOPIC, 0, 0n, 1 << 20),
      at(TOPIC, 1, 0n, 1 << 20),
    ]);
    expect(records(first!).length).toBe(p0!.buffer.length + 10);
    expect(scanFetchedBatches(first!.recordSlices, 1_000).validBytes).toBe(p0!.buffer.length);
    expect(second!.error).toBeUndefined();
    expect(second!.recordSlices).toEqual([]);
    expect(second!.highWatermark).toBe(15n);
    const [again] = await fetch(1 << 20, [at(TOPIC, 1, 0n, 10)]);
    expect(records(again!).equals(p1!.buffer)).toBe(true);
  });

  it("OFFSET_OUT_OF_RANGE below the log start and past the log end, with no log start in the answer (-1)", async () => {
    await admin.deleteTopicRecords({ topic: DELETED, partitions: [{ partition: 0, offset: "7" }] });
    const [below, past, end] = [
      (await fetch(1 << 20, [at(DELETED, 0, 6n, 1 << 20)]))[0]!,
      (await fetch(1 << 20, [at(DELETED, 0, 16n, 1 << 20)]))[0]!,
      (await fetch(1 << 20, [at(DELETED, 0, 15n, 1 << 20)]))[0]!,
    ];
    for (const r of [below, past]) {
      expect(r.error?.errorName).toBe("OFFSET_OUT_OF_RANGE");
      expect([r.highWatermark, r.logStartOffset, r.recordSlices]).toEqual([-1n, -1n, []]);
    }
    // At the log end: no records and no error, the offsets as they are.
    expect(end.error).toBeUndefined();
    expect([end.highWatermark, end.logStartOffset, end.recordSlices]).toEqual([15n, 7n, []]);
    // ListOffsets tells the fetcher where the log starts (the answer does not).
    expect(await source.listOffsets(DELETED, 0, -2n)).toBe(7n);
    // At the log start, inside the batch holding it: that batch comes whole (the fetcher stores it whole).
    const [inside] = await fetch(1 << 20, [at(DELETED, 0, 7n, 1 << 20)]);
    expect(scanFetchedBatches(inside!.recordSlices, 1_000).firstBaseOffset).toBe(5n);
  });

  it("a last fetched epoch the leader knows: no divergence at its end; one above any it has: OFFSET_OUT_OF_RANGE, offsets in range", async () => {
    const l = leaders.find((x) => x.topic === TOPIC && x.partition === 0)!;
    const [same] = await fetch(1 << 20, [at(TOPIC, 0, 15n, 1 << 20, l.leaderEpoch)]);
    expect(same!.error).toBeUndefined();
    expect(same!.divergingEpoch).toBeUndefined();
    // Kafka's epoch cache answers UNDEFINED for an epoch above its latest, and `Partition.readRecords` then
    // refuses the fetch as out of range although the offset is inside the log. The fetcher never asks so (a
    // mirror's log holds only the source's epochs, and a read-only mirror partition records no epoch of
    // its own), so its out-of-range handling, which truncates nothing then, never meets this answer.
    const [above] = await fetch(1 << 20, [at(TOPIC, 0, 10n, 1 << 20, l.leaderEpoch + 5)]);
    expect(above!.error?.errorName).toBe("OFFSET_OUT_OF_RANGE");
    expect(above!.divergingEpoch).toBeUndefined();
    expect(above!.recordSlices).toEqual([]);
  });

  it("end to end with limits that cut batches every round: every batch byte for byte, at the same offsets", async () => {
    const topic = "fetch-semantics-cut";
    await createServedTopics(admin, [{ topic, numPartitions: 3 }]);
    const cluster = KafkaCluster.start({
      brokers: 1,
      clock: new SystemClock(),
      scheduler: new EventLoopScheduler({ keepAlive: false }),
      random: new SeededRandom(11),
    });
    const sources = new KafkajsSourceConnector({ fetchMaxWaitMs: 20 });
    // Batches of about 2 KiB against a partition limit of 700 bytes and a response limit of 1.5 KiB: each
    // partition's answer is a whole first batch alone (KIP-74) or a cut one, and the later partitions of a
    // response often get nothing, while the fetches go ahead (pipelining) in an incremental session.
    const mirroring = ClusterMirroring.start({
      cluster,
      sources,
      random: new SeededRandom(12),
      numStatePartitions: 2,
      fetch: { backoffMs: 200, fetchWaitMaxMs: 20, partitionMaxBytes: 700, maxBytes: 1500 },
    });
    const tx = client.producer({
      transactionalId: "fetch-semantics-tx",
      idempotent: true,
      maxInFlightRequests: 1,
    });
    try {
      await mirroring.admin.createMirror("cut", { "bootstrap.servers": inject("kafkaBootstrap") });
      await mirroring.admin.addTopics("cut", topic);
      await tx.connect();
      for (let round = 0; round < 12; round++) {
        const small = round % 3 === 0;
        await producer.send({
          topic,
          messages: [0, 1, 2].flatMap((partition) =>
            Array.from({ length: small ? 1 : 4 + partition }, (_, i) => ({
              partition,
              value: `${round}.${i}:${"v".repeat(small ? 10 : 450)}`,
            })),
          ),
        });
        if (round % 4 === 1) {
          const t = await tx.transaction();
          await t.send({ topic, messages: [{ partition: round % 3, value: `tx ${round}` }] });
          if (round % 8 === 1) await t.commit();
          else await t.abort();
        }
      }
      await mirroring.whenCaughtUp("cut", { timeoutMs: 120_000 });
      await caughtUpWithBroker(cluster, source, topic, [0, 1, 2]);
      for (const partition of [0, 1, 2])
        expect(hexOf(destinationBatches(cluster, topic, partition))).toEqual(
          hexOf(storedBatches(topic, partition)),
        );
    } finally {
      await tx.disconnect();
      mirroring.close();
      cluster.close();
      await sources.close();
    }
  });

  it("end to end: DeleteRecords past a paused copy's log end, inside a batch; resumed, it starts over at that batch, whole", async () => {
    const topic = "fetch-semantics-oor";
    await createServedTopics(admin, [{ topic, numPartitions: 1 }]);
    const cluster = KafkaCluster.start({
      brokers: 1,
      clock: new SystemClock(),
      scheduler: new EventLoopScheduler({ keepAlive: false }),
      random: new SeededRandom(13),
    });
    const sources = new KafkajsSourceConnector({ fetchMaxWaitMs: 20 });
    const mirroring = ClusterMirroring.start({
      cluster,
      sources,
      random: new SeededRandom(14),
      numStatePartitions: 2,
      fetch: { backoffMs: 200, fetchWaitMaxMs: 20 },
    });
    const send = (n: number, tag: string) =>
      producer.send({ topic, messages: Array.from({ length: n }, (_, i) => ({ value: `${tag}${i}` })) });
    try {
      await send(5, "a"); // offsets 0-4
      await mirroring.admin.createMirror("oor", { "bootstrap.servers": inject("kafkaBootstrap") });
      await mirroring.admin.addTopics("oor", topic);
      await mirroring.whenCaughtUp("oor", { timeoutMs: 60_000 });
      await mirroring.admin.pauseTopics("oor", topic);
      await mirroring.whenState("oor", "PAUSED", { timeoutMs: 60_000 });
      await send(5, "b"); // 5-9
      await send(5, "c"); // 10-14
      await send(5, "d"); // 15-19
      // The source's log start moves past the copy's log end (5), into the batch 10-14.
      await admin.deleteTopicRecords({ topic, partitions: [{ partition: 0, offset: "12" }] });
      await mirroring.admin.resumeTopics("oor", topic);
      await mirroring.whenCaughtUp("oor", { timeoutMs: 60_000 });
      await caughtUpWithBroker(cluster, source, topic, [0]);
      const copied = destinationBatches(cluster, topic, 0);
      expect(copied.map((b) => b.baseOffset)).toEqual([10n, 15n]);
      expect(hexOf(copied)).toEqual(hexOf(storedBatches(topic, 0).filter((b) => b.baseOffset >= 10n)));
      const [row] = await mirroring.admin.describe("oor");
      expect(row).toMatchObject({ state: "MIRRORING", lag: 0n });
    } finally {
      mirroring.close();
      cluster.close();
      await sources.close();
    }
  });
});
