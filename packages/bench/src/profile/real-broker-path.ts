import { writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { EventLoopScheduler, KafkaCluster, SeededRandom, SystemClock } from "@cluster-mirror/cluster";
import { KafkajsSourceConnector } from "@cluster-mirror/kafkajs";
import { startKafkaBroker } from "@cluster-mirror/kafkajs/broker";
import { ClusterMirroring } from "@cluster-mirror/mirror";
import kafkajs from "kafkajs";

const { Kafka, logLevel } = kafkajs;
const TOPIC = "bench";
const PARTITIONS = 4;

/**
 * Profiles the real-broker mirror path (Kafka 3.9.1 over loopback → ClusterMirroring on an embedded
 * destination): fills a topic with 16 KiB batches, then mirrors it `runs` times, sampling only the mirror.
 * Usage: `node --import tsx src/profile/real-broker-path.ts <out.cpuprofile> [batches]`.
 */
async function main(): Promise<void> {
  const [out, batchesArg] = process.argv.slice(2);
  if (!out) throw new Error("usage: real-broker-path.ts <out.cpuprofile> [batches]");
  const batches = Number(batchesArg ?? 2048);
  const broker = await startKafkaBroker({ log: (m) => console.log(`  ${m}`) });
  try {
    const kafka = new Kafka({ brokers: [broker.bootstrap], clientId: "profile", logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ waitForLeaders: true, topics: [{ topic: TOPIC, numPartitions: PARTITIONS }] });
    await admin.disconnect();
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    const value = Buffer.alloc(1000, 7);
    for (let i = 0; i < batches / PARTITIONS; i++) {
      await producer.send({
        topic: TOPIC,
        messages: Array.from({ length: PARTITIONS * 16 }, (_, n) => ({ partition: n % PARTITIONS, value })),
      });
    }
    await producer.disconnect();
    const total = (batches / PARTITIONS) * 16;
    const session = new Session();
    session.connect();
    await session.post("Profiler.enable");
    await session.post("Profiler.setSamplingInterval", { interval: 200 });
    const profiles: unknown[] = [];
    for (let i = 0; i < 3; i++) {
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
      await mirroring.admin.createMirror("bench", {
        "bootstrap.servers": broker.bootstrap,
        "mirror.num.replica.fetchers": String(PARTITIONS),
      });
      if (i > 0) await session.post("Profiler.start");
      const cpu = process.cpuUsage();
      const start = performance.now();
      await mirroring.admin.addTopics("bench", TOPIC);
      for (;;) {
        let n = 0;
        for (let p = 0; p < PARTITIONS; p++)
          n += Number(cluster.leaderFor(TOPIC, p).replica(TOPIC, p)?.log.logEndOffset ?? 0n);
        if (n >= total) break;
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
      const ms = performance.now() - start;
      const used = process.cpuUsage(cpu);
      if (i > 0) profiles.push((await session.post("Profiler.stop")).profile);
      console.log(
        `run ${i}: ${((total * 1000) / 1e6 / (ms / 1000)).toFixed(0)} MB/s wall, ${((used.user + used.system) / 1000).toFixed(0)} ms CPU`,
      );
      mirroring.close();
      cluster.close();
      await sources.close();
    }
    writeFileSync(out, JSON.stringify(profiles));
    session.disconnect();
  } finally {
    await broker.destroy();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
