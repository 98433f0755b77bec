import { controlTypeOf, decodeRecords, RecordBatch } from "@cluster-mirror/protocol";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { KafkajsSourceCluster } from "../../src/index";
import {
  CompressionTypes,
  caughtUpWithBroker,
  createServedTopics,
  destinationBatches,
  hexOf,
  kafkaClient,
  registerKafkajsCodecs,
  startDestination,
  startJava,
  storedBatches,
  until,
} from "./helpers";

const ABORT = 0;
const COMMIT = 1;
const MIRROR_PID_RESET = 7;

describe("a real Apache Kafka broker as the mirror source", () => {
  const kafka = kafkaClient("test-producers");
  const admin = kafka.admin();
  const dest = startDestination(7);

  beforeAll(async () => {
    await registerKafkajsCodecs();
    await admin.connect();
  });

  afterAll(async () => {
    await dest.close();
    await admin.disconnect();
  });

  it("mirrors every codec, idempotent and transactional batches (committed and aborted) byte for byte, offset for offset", async () => {
    const topic = "orders";
    await createServedTopics(admin, [{ topic, numPartitions: 3 }]);
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    const codecs = [
      CompressionTypes.None,
      CompressionTypes.GZIP,
      CompressionTypes.Snappy,
      CompressionTypes.LZ4,
      CompressionTypes.ZSTD,
    ];
    for (const [i, compression] of codecs.entries()) {
      for (const partition of [0, 1, 2]) {
        await producer.send({
          topic,
          compression,
          messages: Array.from({ length: 20 }, (_, n) => ({
            partition,
            key: `k${n % 7}`,
            value: `codec ${i} record ${n} `.repeat(1 + (n % 5)),
            headers: { h: `v${n}`, h2: ["x", "y"] },
          })),
        });
      }
    }
    const txProducer = kafka.producer({
      transactionalId: "orders-tx",
      idempotent: true,
      maxInFlightRequests: 1,
    });
    await txProducer.connect();
    const committed = await txProducer.transaction();
    await committed.send({
      topic,
      messages: [0, 1, 2].map((partition) => ({ partition, value: "committed" })),
    });
    await committed.commit();
    const aborted = await txProducer.transaction();
    await aborted.send({
      topic,
      compression: CompressionTypes.GZIP,
      messages: [{ partition: 0, value: "aborted" }],
    });
    await aborted.abort();
    await producer.send({ topic, messages: [{ partition: 0, value: "after the abort" }] });

    const created = await dest.mirroring.admin.createMirror("m", {
      "bootstrap.servers": inject("kafkaBootstrap"),
    });
    expect(created.sourceClusterId).toBe(inject("kafkaClusterId"));
    await dest.mirroring.admin.addTopics("m", topic);
    await dest.mirroring.whenCaughtUp("m", { timeoutMs: 120_000 });

    const source = new KafkajsSourceCluster("check", { "bootstrap.servers": inject("kafkaBootstrap") });
    try {
      await caughtUpWithBroker(dest.cluster, source, topic, [0, 1, 2]);
      const [described] = (await source.describeTopics()).filter((t) => t.name === topic);
      expect(dest.cluster.controller.image.topic(topic)?.topicId).toBe(described?.topicId);
      const offsets = await admin.fetchTopicOffsets(topic);
      const rows = await dest.mirroring.admin.describe("m");
      for (const partition of [0, 1, 2]) {
        const stored = storedBatches(topic, partition);
        const mirrored = destinationBatches(dest.cluster, topic, partition);
        expect(stored.length).toBeGreaterThanOrEqual(6); // five codecs and the transaction's batches
        expect(hexOf(mirrored)).toEqual(hexOf(stored));
        // Offsets agree with the broker's own answers (kafkajs's ListOffsets; no open transaction, so its
        // LSO is the high watermark), and describe shows no lag.
        const high = BigInt(offsets.find((o) => o.partition === partition)!.high);
        expect(mirrored.at(-1)!.nextOffset).toBe(high);
        expect(await source.listOffsets(topic, partition, -1n)).toBe(high);
        const row = rows.find((r) => r.topic === topic && r.partition === partition)!;
        expect(row).toMatchObject({ state: "MIRRORING", lag: 0n });
      }
      // What makes this data path honest: every codec, and the control batches a consumer never shows.
      const all = [0, 1, 2].flatMap((p) => destinationBatches(dest.cluster, topic, p));
      expect(new Set(all.filter((b) => !b.isControl).map((b) => b.compression))).toEqual(
        new Set([0, 1, 2, 3, 4]),
      );
      const markers = all.filter((b) => b.isControl).map((b) => controlTypeOf(b));
      expect(markers.filter((t) => t === COMMIT)).toHaveLength(3);
      expect(markers.filter((t) => t === ABORT)).toHaveLength(1);
      const values = destinationBatches(dest.cluster, topic, 0)
        .filter((b) => !b.isControl)
        .flatMap((b) => decodeRecords(b).map((r) => r.value?.toString()));
      expect(values).toContain("aborted");
      for (const b of all) expect(() => new RecordBatch(b.buffer).validate()).not.toThrow();
    } finally {
      await source.close();
      await producer.disconnect();
      await txProducer.disconnect();
    }
  });

  it("fails over with a transaction still open on the source: ABORT marker, then the PID reset", async () => {
    const topic = "payments";
    await createServedTopics(admin, [{ topic, numPartitions: 1 }]);
    const txProducer = kafka.producer({
      transactionalId: "payments-tx",
      idempotent: true,
      maxInFlightRequests: 1,
      transactionTimeout: 60_000,
    });
    await txProducer.connect();
    const open = await txProducer.transaction();
    await open.send({ topic, messages: [{ value: "in flight 1" }, { value: "in flight 2" }] });
    try {
      await dest.mirroring.admin.createMirror("fo", { "bootstrap.servers": inject("kafkaBootstrap") });
      await dest.mirroring.admin.addTopics("fo", topic);
      await dest.mirroring.whenCaughtUp("fo", { timeoutMs: 120_000 });
      const source = new KafkajsSourceCluster("check-fo", { "bootstrap.servers": inject("kafkaBootstrap") });
      await caughtUpWithBroker(dest.cluster, source, topic, [0]).finally(() => source.close());
      const stored = storedBatches(topic, 0);
      expect(hexOf(destinationBatches(dest.cluster, topic, 0))).toEqual(hexOf(stored));
      const openPid = stored[0]!.producerId;

      // The preview names the open transaction, and no failback: a plain Kafka cluster cannot mirror back.
      const [preview] = await dest.mirroring.admin.previewFailover("fo", topic);
      expect(preview!.openTransactions.map((t) => t.producerId)).toEqual([openPid]);
      expect([preview!.lag, preview!.failbackSupported, preview!.failbackTruncation]).toEqual([
        0n,
        false,
        null,
      ]);

      await dest.mirroring.admin.removeTopics("fo", topic);
      await dest.mirroring.whenState("fo", "STOPPED", { timeoutMs: 60_000 });
      const after = destinationBatches(dest.cluster, topic, 0);
      // The source's batches first, unchanged, then the failover's markers.
      expect(hexOf(after.slice(0, stored.length))).toEqual(hexOf(stored));
      const tail = after.slice(stored.length);
      expect(tail.map((b) => controlTypeOf(b))).toEqual([ABORT, MIRROR_PID_RESET]);
      expect(tail[0]!.producerId).toBe(openPid);
      const log = dest.cluster.leaderFor(topic, 0).replica(topic, 0)!.log;
      expect(log.lastStableOffset).toBe(log.highWatermark);
    } finally {
      await open.abort();
      await txProducer.disconnect();
    }
  });

  it("fails over Kafka's Java transactional producer (epoch bumps of KIP-890 on Kafka 4): committed and aborted kept, the open one aborted", async () => {
    const topic = "java-transactions";
    await createServedTopics(admin, [{ topic, numPartitions: 1 }]);
    const { child, exited, output } = startJava(
      "JavaTransactions.java",
      [inject("kafkaBootstrap"), topic, "java-tx"],
      "pipe",
    );
    try {
      await until(async () => (output().includes("open") ? undefined : `the producer printed '${output()}'`));
      await dest.mirroring.admin.createMirror("jt", { "bootstrap.servers": inject("kafkaBootstrap") });
      await dest.mirroring.admin.addTopics("jt", topic);
      await dest.mirroring.whenCaughtUp("jt", { timeoutMs: 120_000 });
      const source = new KafkajsSourceCluster("check-jt", { "bootstrap.servers": inject("kafkaBootstrap") });
      await caughtUpWithBroker(dest.cluster, source, topic, [0]).finally(() => source.close());
      const stored = storedBatches(topic, 0);
      expect(hexOf(destinationBatches(dest.cluster, topic, 0))).toEqual(hexOf(stored));
      // Three transactions of one producer: data, COMMIT, data, ABORT, data (still open), each transaction's
      // data in one batch or more (the client batches as it likes). Kafka 4 ends each transaction with a
      // bumped epoch (transaction.version 2): the markers and the next transaction carry it.
      const kafka4 = Number(inject("kafkaVersion").split(".")[0]) >= 4;
      const runs: string[] = [];
      for (const b of stored) {
        const step = `${b.isControl ? controlTypeOf(b) : "data"}@${b.producerEpoch}`;
        if (runs.at(-1) !== step) runs.push(step);
      }
      expect(runs).toEqual(
        kafka4
          ? ["data@0", `${COMMIT}@1`, "data@1", `${ABORT}@2`, "data@2"]
          : ["data@0", `${COMMIT}@0`, "data@0", `${ABORT}@0`, "data@0"],
      );
      const openBatch = stored.at(-1)!;

      await dest.mirroring.admin.removeTopics("jt", topic);
      await dest.mirroring.whenState("jt", "STOPPED", { timeoutMs: 60_000 });
      const after = destinationBatches(dest.cluster, topic, 0);
      expect(hexOf(after.slice(0, stored.length))).toEqual(hexOf(stored));
      const tail = after.slice(stored.length);
      expect(tail.map((b) => controlTypeOf(b))).toEqual([ABORT, MIRROR_PID_RESET]);
      // The failover's ABORT ends the open transaction at its producer's epoch or later (under KIP-890 the
      // epoch grows with every transaction, so an older one would be fenced).
      expect(tail[0]!.producerId).toBe(openBatch.producerId);
      expect(tail[0]!.producerEpoch).toBeGreaterThanOrEqual(openBatch.producerEpoch);
      const log = dest.cluster.leaderFor(topic, 0).replica(topic, 0)!.log;
      expect(log.lastStableOffset).toBe(log.highWatermark);
      expect(log.ongoingTransactions()).toEqual([]);
    } finally {
      child.stdin?.end();
      await exited;
    }
  });

  it("follows the broker's DeleteRecords: the copy's log start moves with the source's, the rest stays byte for byte", async () => {
    const topic = "purged";
    await createServedTopics(admin, [{ topic, numPartitions: 2 }]);
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    const source = new KafkajsSourceCluster("check-dr", { "bootstrap.servers": inject("kafkaBootstrap") });
    try {
      for (let i = 0; i < 10; i++)
        await producer.send({ topic, messages: [0, 1].map((partition) => ({ partition, value: `r${i}` })) });
      await dest.mirroring.admin.createMirror("dr", { "bootstrap.servers": inject("kafkaBootstrap") });
      await dest.mirroring.admin.addTopics("dr", topic);
      await dest.mirroring.whenCaughtUp("dr", { timeoutMs: 120_000 });
      await caughtUpWithBroker(dest.cluster, source, topic, [0, 1]);

      // The mirror idles in its fetch session; the purge on the broker must still reach it.
      await admin.deleteTopicRecords({ topic, partitions: [{ partition: 0, offset: "6" }] });
      const log = (p: number) => dest.cluster.leaderFor(topic, p).replica(topic, p)!.log;
      await until(async () =>
        log(0).logStartOffset === 6n ? undefined : `destination log start ${log(0).logStartOffset}`,
      );
      expect(log(1).logStartOffset).toBe(0n);
      await producer.send({ topic, messages: [{ partition: 0, value: "after" }] });
      await dest.mirroring.whenCaughtUp("dr", { timeoutMs: 120_000 });
      await caughtUpWithBroker(dest.cluster, source, topic, [0, 1]);
      // What is left above the log start is the broker's, byte for byte (Kafka keeps whole segments).
      const kept = storedBatches(topic, 0).filter((b) => b.lastOffset >= 6n);
      expect(hexOf(destinationBatches(dest.cluster, topic, 0).filter((b) => b.lastOffset >= 6n))).toEqual(
        hexOf(kept),
      );
      expect(log(0).logStartOffset).toBe(6n);
    } finally {
      await source.close();
      await producer.disconnect();
    }
  });

  it("re-adds a failed-over topic: keeps the mirrored records (no re-copy), drops the markers, mirrors on byte for byte", async () => {
    const topic = "readd";
    await createServedTopics(admin, [{ topic, numPartitions: 1 }]);
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    const source = new KafkajsSourceCluster("check-ra", { "bootstrap.servers": inject("kafkaBootstrap") });
    try {
      await producer.send({ topic, messages: [{ value: "before 1" }, { value: "before 2" }] });
      await dest.mirroring.admin.createMirror("ra", { "bootstrap.servers": inject("kafkaBootstrap") });
      await dest.mirroring.admin.addTopics("ra", topic);
      await dest.mirroring.whenCaughtUp("ra", { timeoutMs: 120_000 });
      await caughtUpWithBroker(dest.cluster, source, topic, [0]);
      await dest.mirroring.admin.removeTopics("ra", topic);
      await dest.mirroring.whenState("ra", "STOPPED", { timeoutMs: 60_000 });
      const failedOver = destinationBatches(dest.cluster, topic, 0);
      expect(controlTypeOf(failedOver.at(-1)!)).toBe(MIRROR_PID_RESET);

      await producer.send({ topic, messages: [{ value: "after" }] });
      // Kafka knows no LME (it never failed the topic over): the re-add truncates to the LME this
      // partition captured at its failover, so the mirrored batch stays where it is, in the same memory.
      await dest.mirroring.admin.addTopics("ra", topic);
      await dest.mirroring.whenCaughtUp("ra", { timeoutMs: 120_000 });
      await caughtUpWithBroker(dest.cluster, source, topic, [0]);
      const after = destinationBatches(dest.cluster, topic, 0);
      expect(hexOf(after)).toEqual(hexOf(storedBatches(topic, 0)));
      expect(after[0]!.buffer.buffer).toBe(failedOver[0]!.buffer.buffer);
    } finally {
      await source.close();
      await producer.disconnect();
    }
  });
});
