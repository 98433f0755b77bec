import { performance } from "node:perf_hooks";
import { EventLoopScheduler, KafkaCluster, SeededRandom, SystemClock } from "@cluster-mirror/cluster";
import { KafkajsSourceCluster, KafkajsSourceConnector } from "@cluster-mirror/kafkajs";
import { startKafkaBroker } from "@cluster-mirror/kafkajs/broker";
import { ClusterMirroring } from "@cluster-mirror/mirror";
import kafkajs from "kafkajs";
import { type BenchResult, type BenchSuite, result } from "../harness";

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
 * Real Apache Kafka 3.9.1 broker (over loopback) → embedded destination with ClusterMirroring, against
 * kafkajs's own consumer (`eachBatch`) reading the same topic from the same broker. Runs are interleaved
 * (mirror, consumer, mirror, ...) and each side's median is reported with its CPU time. The broker's jars
 * are fetched with mvn on first use (as in the tests).
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
      const bytes = totalRecords * (VALUE_BYTES + 20);

      const mirrorRun = async (i: number) => {
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
      const consumerRun = async (i: number) => {
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

      const mirror: Run[] = [];
      const consumer: Run[] = [];
      for (let i = 0; i < RUNS; i++) {
        mirror.push(await mirrorRun(10 * i));
        consumer.push(await consumerRun(i));
      }
      await admin.disconnect();
      const mbps = (runs: Run[]) => bytes / 1e6 / (median(runs.map((r) => r.ms)) / 1000);
      const cpu = (runs: Run[]) => median(runs.map((r) => r.cpuMs));
      return [
        result(
          "real-broker.mirror.16KiB",
          mbps(mirror),
          "MB/s",
          mbps(consumer),
          `real Kafka 3.9.1 over loopback → embedded destination vs kafkajs eachBatch (same broker, same topic); mirror.num.replica.fetchers=${PARTITIONS}; target 2x; median of ${RUNS} interleaved runs of ${(bytes / 1e6).toFixed(0)} MB`,
        ),
        result(
          "real-broker.mirror.16KiB.cpu",
          cpu(mirror),
          "ms",
          cpu(consumer),
          "Node CPU time (user+system) per run, mirror vs kafkajs eachBatch consumer",
        ),
      ];
    } finally {
      await broker.destroy();
    }
  },
};
