import { performance } from "node:perf_hooks";
import { EventLoopScheduler, KafkaCluster, SeededRandom, SystemClock } from "@cluster-mirror/cluster";
import { KafkajsSourceCluster, KafkajsSourceConnector } from "@cluster-mirror/kafkajs";
import { startKafkaBroker } from "@cluster-mirror/kafkajs/broker";
import { ClusterMirroring } from "@cluster-mirror/mirror";
import kafkajs from "kafkajs";
import { type BenchResult, type BenchSuite, result } from "../harness";
import { javaConsumerPerformance } from "../java-consumer-perf";

const { Kafka, logLevel } = kafkajs;
const TOPIC = "bench";
const PARTITIONS = 4;
/** 16 KiB batches: 16 records of ~1000 bytes per send and partition. */
const RECORDS_PER_BATCH = 16;
const VALUE_BYTES = 1000;
/** 8192 batches of 16 KiB: 128 MiB per run (smaller runs measure mostly the start of each side). */
const BATCHES = 8192;
const RUNS = 3;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

interface Run {
  ms: number;
  cpuMs: number;
}

/** Payload MB/s of a side: records per second times the value size (the unit of every figure here). */
const payloadMbps = (recordsPerSec: number) => (recordsPerSec * VALUE_BYTES) / 1e6;

/** Wall and CPU time (this process; the broker's JVM is the same for both sides) of `work`. */
async function timed(work: () => Promise<void>): Promise<Run> {
  const cpu = process.cpuUsage();
  const start = performance.now();
  await work();
  const ms = performance.now() - start;
  const used = process.cpuUsage(cpu);
  return { ms, cpuMs: (used.user + used.system) / 1000 };
}

/**
 * Real Apache Kafka 3.9.1 broker (over loopback) → embedded destination with ClusterMirroring, against two
 * consumers reading the same topic from the same broker: kafkajs's own consumer (`eachBatch`, in this
 * process) and Kafka's Java consumer benchmark (`org.apache.kafka.tools.ConsumerPerformance`, from the
 * broker's jars). Runs are interleaved (mirror, kafkajs, Java, mirror, ...) after one warm-up round, and each
 * side's median is reported with its CPU time. Rates are payload MB/s (records per second times the value
 * size), so the three sides are counted alike; the Java figure is its fetch rate (group join excluded),
 * which only flatters the baseline. The broker's jars are fetched with mvn on first use (as in the tests).
 */
export const suite: BenchSuite = {
  name: "real-broker-mirror",
  async run(): Promise<BenchResult[]> {
    const broker = await startKafkaBroker({ log: (m) => console.log(`  ${m}`) });
    try {
      const kafka = new Kafka({ brokers: [broker.bootstrap], clientId: "bench", logLevel: logLevel.NOTHING });
      const admin = kafka.admin();
      await admin.connect();
      await admin.createTopics({
        waitForLeaders: true,
        topics: [{ topic: TOPIC, numPartitions: PARTITIONS }],
      });
      const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
      await producer.connect();
      const value = Buffer.alloc(VALUE_BYTES, 7);
      for (let i = 0; i < BATCHES / PARTITIONS; i++) {
        await producer.send({
          topic: TOPIC,
          messages: Array.from({ length: PARTITIONS * RECORDS_PER_BATCH }, (_, n) => ({
            partition: n % PARTITIONS,
            value,
          })),
        });
      }
      await producer.disconnect();
      const oracle = new KafkajsSourceCluster("bench-oracle", { "bootstrap.servers": broker.bootstrap });
      const ends = await Promise.all(
        Array.from({ length: PARTITIONS }, (_, p) => oracle.listOffsets(TOPIC, p, -1n)),
      );
      await oracle.close();
      const totalRecords = ends.reduce((a, b) => a + Number(b), 0);

      const mirrorRun = async (i: number): Promise<Run> => {
        const cluster = KafkaCluster.start({
          brokers: 1,
          clock: new SystemClock(),
          scheduler: new EventLoopScheduler({ keepAlive: false }),
          random: new SeededRandom(i),
        });
        const sources = new KafkajsSourceConnector({ fetchMaxWaitMs: 10 });
        const mirroring = ClusterMirroring.start({
          cluster,
          sources,
          random: new SeededRandom(i + 1),
          numStatePartitions: 1,
          fetch: { fetchWaitMaxMs: 5, partitionMaxBytes: 4 << 20, maxBytes: 16 << 20 },
        });
        // One fetcher (one connection) per partition: fetches to the broker overlap, as a consumer's do not.
        await mirroring.admin.createMirror("bench", {
          "bootstrap.servers": broker.bootstrap,
          "mirror.num.replica.fetchers": String(PARTITIONS),
        });
        const run = await timed(async () => {
          await mirroring.admin.addTopics("bench", TOPIC);
          for (;;) {
            const done = ends.every(
              (end, p) => cluster.leaderFor(TOPIC, p).replica(TOPIC, p)?.log.logEndOffset === end,
            );
            if (done) break;
            await new Promise((resolve) => setTimeout(resolve, 2));
          }
        });
        mirroring.close();
        cluster.close();
        await sources.close();
        return run;
      };
      const consumerRun = async (i: number): Promise<Run> => {
        const consumer = kafka.consumer({ groupId: `bench-${i}`, maxBytesPerPartition: 4 << 20 });
        await consumer.connect();
        await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
        let seen = 0;
        const run = await timed(
          () =>
            new Promise<void>((resolve, reject) => {
              consumer
                .run({
                  autoCommit: false,
                  eachBatch: async ({ batch }) => {
                    seen += batch.messages.length;
                    if (seen >= totalRecords) resolve();
                  },
                })
                .catch(reject);
            }),
        );
        await consumer.disconnect();
        return run;
      };
      const javaRun = (i: number) =>
        javaConsumerPerformance({
          libs: broker.libs,
          bootstrap: broker.bootstrap,
          topic: TOPIC,
          messages: totalRecords,
          group: `bench-java-${i}`,
          fetchSize: 4 << 20,
        });

      const mirror: Run[] = [];
      const consumer: Run[] = [];
      const java: Awaited<ReturnType<typeof javaRun>>[] = [];
      for (let i = 0; i <= RUNS; i++) {
        const m = await mirrorRun(10 * i);
        const c = await consumerRun(i);
        const j = await javaRun(i);
        if (i === 0) continue; // warm-up round: JIT, page cache, connections
        mirror.push(m);
        consumer.push(c);
        java.push(j);
      }
      await admin.disconnect();
      const rate = (runs: Run[]) => payloadMbps(totalRecords / (median(runs.map((r) => r.ms)) / 1000));
      const perCore = (runs: Run[]) => median(runs.map((r) => payloadMbps(totalRecords / (r.cpuMs / 1000))));
      const cpu = (runs: Run[]) => median(runs.map((r) => r.cpuMs));
      const javaRate = payloadMbps(median(java.map((j) => j.fetchRecordsPerSec)));
      const javaWithJoin = payloadMbps(median(java.map((j) => j.recordsPerSec)));
      const javaCpu = median(java.map((j) => j.cpuMs));
      const data = `${((totalRecords * VALUE_BYTES) / 1e6).toFixed(0)} MB of payload in ${totalRecords} records of ${VALUE_BYTES} B, ${PARTITIONS} partitions, 16 KiB batches; median of ${RUNS} interleaved runs`;
      const verdict = (ratio: number, target: number) =>
        `target ${target}x: ${ratio >= target ? "MET" : "MISSED"}`;
      const vsKafkajs = rate(mirror) / rate(consumer);
      const vsJava = rate(mirror) / javaRate;
      return [
        result(
          "real-broker.mirror.16KiB",
          rate(mirror),
          "MB/s",
          rate(consumer),
          `real Kafka 3.9.1 over loopback → embedded destination (ClusterMirroring, mirror.num.replica.fetchers=${PARTITIONS}) vs kafkajs eachBatch on the same topic; ${data}; ${verdict(vsKafkajs, 2)}`,
        ),
        result(
          "real-broker.mirror.16KiB.vs-java-consumer",
          rate(mirror),
          "MB/s",
          javaRate,
          `vs Kafka's Java consumer (ConsumerPerformance fetch rate, fetch size 4 MiB; ${javaWithJoin.toFixed(0)} MB/s with its group join); ${verdict(vsJava, 0.5)}`,
        ),
        result(
          "real-broker.mirror.16KiB.cpu",
          cpu(mirror),
          "ms",
          cpu(consumer),
          `CPU time (user+system) per run: mirror vs kafkajs eachBatch, both this Node process; ${perCore(mirror).toFixed(0)} vs ${perCore(consumer).toFixed(0)} MB per CPU-second; Java consumer JVM ${javaCpu.toFixed(0)} ms CPU per run, start-up and JIT included (the broker's JVM is shared and not counted)`,
        ),
      ];
    } finally {
      await broker.destroy();
    }
  },
};
