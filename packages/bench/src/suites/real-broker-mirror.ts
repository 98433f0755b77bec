import { type BenchResult, type BenchSuite, result } from "../harness";
import { javaConsumerPerformance } from "../java-consumer-perf";
import {
  type FilledBroker,
  fetchOnlyOnce,
  kafkajsConsumerOnce,
  mirrorOnce,
  type Run,
  sixteenKiBBatches,
  startFilledBroker,
} from "../real-broker-fixture";

/** 8192 batches of 16 KiB: 128 MiB per run (smaller runs measure mostly the start of each side). */
const BATCHES = 8192;
/**
 * Interleaved rounds after the warm-up (BENCH_RUNS overrides): on a 2-core machine one round's ratio swings
 * by ±20% with the scheduling of the broker's JVM and this process, so the median of 5 is the figure and
 * the spread of the rounds is printed beside it.
 */
const RUNS = Number(process.env.BENCH_RUNS ?? 5);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/**
 * Real Apache Kafka 3.9.1 broker (over loopback) → embedded destination with ClusterMirroring, against two
 * consumers reading the same topic from the same broker: kafkajs's own consumer (`eachBatch`, in this
 * process) and Kafka's Java consumer benchmark (`org.apache.kafka.tools.ConsumerPerformance`, from the
 * broker's jars). Runs are interleaved (each round rotates the order of the sides) after one warm-up round, and each
 * side's median is reported with its CPU time. Rates are payload MB/s (records per second times the value
 * size), so the three sides are counted alike; the Java figure is its fetch rate (group join excluded),
 * which only flatters the baseline. The broker's jars are fetched with mvn on first use (as in the tests).
 */
export const suite: BenchSuite = {
  name: "real-broker-mirror",
  async run(): Promise<BenchResult[]> {
    const filled: FilledBroker = await startFilledBroker(sixteenKiBBatches(BATCHES));
    try {
      const { totalRecords, shape } = filled;
      const { partitions, valueBytes } = shape;
      /** Payload MB/s of a side: records per second times the value size (the unit of every figure here). */
      const payloadMbps = (recordsPerSec: number) => (recordsPerSec * valueBytes) / 1e6;
      // One fetcher (one connection) per partition: fetches to the broker overlap, as a consumer's do not.
      const mirrorRun = (i: number) => mirrorOnce(filled, { seed: i, fetchers: partitions });
      const consumerRun = (i: number) => kafkajsConsumerOnce(filled, `bench-${i}`);
      const javaRun = (i: number) =>
        javaConsumerPerformance({
          libs: filled.broker.libs,
          bootstrap: filled.broker.bootstrap,
          topic: shape.topic,
          messages: totalRecords,
          group: `bench-java-${i}`,
          fetchSize: 4 << 20,
        });

      const mirror: Run[] = [];
      const consumer: Run[] = [];
      const fetchOnly: Run[] = [];
      const java: Awaited<ReturnType<typeof javaRun>>[] = [];
      for (let i = 0; i <= RUNS; i++) {
        // Each round starts with another side (mirror, kafkajs, ceiling, Java, then rotated by one), so no
        // side always follows the Java consumer's JVM or always runs first after the broker sat idle.
        // The first round warms up (JIT, page cache, connections) and is not kept.
        const keep =
          <T>(runs: T[]) =>
          (run: T) => {
            if (i > 0) runs.push(run);
          };
        const sides = [
          () => mirrorRun(10 * i).then(keep(mirror)),
          () => consumerRun(i).then(keep(consumer)),
          () => fetchOnlyOnce(filled).then(keep(fetchOnly)),
          () => javaRun(i).then(keep(java)),
        ];
        for (let s = 0; s < sides.length; s++) await sides[(s + i) % sides.length]!();
      }
      const rate = (runs: Run[]) => payloadMbps(totalRecords / (median(runs.map((r) => r.ms)) / 1000));
      const perCore = (runs: Run[]) => median(runs.map((r) => payloadMbps(totalRecords / (r.cpuMs / 1000))));
      const cpu = (runs: Run[]) => median(runs.map((r) => r.cpuMs));
      const javaRate = payloadMbps(median(java.map((j) => j.fetchRecordsPerSec)));
      const javaWithJoin = payloadMbps(median(java.map((j) => j.recordsPerSec)));
      const javaCpu = median(java.map((j) => j.cpuMs));
      const roundRatios = mirror.map((m, i) => consumer[i]!.ms / m.ms);
      const spread = `rounds ${Math.min(...roundRatios).toFixed(2)}x-${Math.max(...roundRatios).toFixed(2)}x`;
      const data = `${((totalRecords * valueBytes) / 1e6).toFixed(0)} MB of payload in ${totalRecords} records of ${valueBytes} B, ${partitions} partitions, 16 KiB batches; median of ${RUNS} interleaved runs (${spread})`;
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
          `real Kafka 3.9.1 over loopback → embedded destination (ClusterMirroring, mirror.num.replica.fetchers=${partitions}) vs kafkajs eachBatch on the same topic; ${data}; ${verdict(vsKafkajs, 2)}`,
        ),
        result(
          "real-broker.mirror.16KiB.vs-java-consumer",
          rate(mirror),
          "MB/s",
          javaRate,
          `vs Kafka's Java consumer (ConsumerPerformance fetch rate, fetch size 4 MiB; ${javaWithJoin.toFixed(0)} MB/s with its group join); ${verdict(vsJava, 0.5)}`,
        ),
        result(
          "real-broker.mirror.16KiB.vs-fetch-only",
          rate(mirror),
          "MB/s",
          rate(fetchOnly),
          `vs the path's ceiling: the same fetches through the kafkajs source adapter (a loop and connection per partition) with the bytes dropped on arrival (no CRC, no append, no engine), ${cpu(fetchOnly).toFixed(0)} ms CPU per run; 2x kafkajs eachBatch would need ${(2 * rate(consumer)).toFixed(0)} MB/s`,
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
      await filled.destroy();
    }
  },
};
