import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { EventLoopScheduler, KafkaCluster, SeededRandom, SystemClock } from "@cluster-mirror/cluster";
import { KafkajsSourceConnector } from "@cluster-mirror/kafkajs";
import { startKafkaBroker } from "@cluster-mirror/kafkajs/broker";
import { ClusterMirroring } from "@cluster-mirror/mirror";
import kafkajs from "kafkajs";

/**
 * Adding a topic of many partitions from a real broker: starts a Kafka 3.9.1 broker, creates a topic of
 * `partitions` partitions with a record in each, then 3 times mirrors it into a fresh embedded destination
 * and prints how long `addTopics` took, how long until every partition was copied, and how many requests
 * of each API the source was sent meanwhile (from kafkajs's debug log); then lets the mirror idle for
 * `IDLE_MS` and prints its fetches and the process's CPU time per fetch (the cost of a round over idle
 * partitions, which incremental fetch sessions cut).
 * Usage: `node --import tsx src/profile/many-partitions.ts [partitions=256] [sessions=on|off]`.
 */
const IDLE_MS = 3_000;

async function main(): Promise<void> {
  const partitions = Number(process.argv[2] ?? 256);
  const fetchSessions = process.argv[3] !== "off";
  const topic = `many-${partitions}`;
  const broker = await startKafkaBroker({ log: (line) => console.error(line) });
  try {
    const kafka = new kafkajs.Kafka({
      brokers: [broker.bootstrap],
      clientId: "many-partitions",
      logLevel: kafkajs.logLevel.NOTHING,
    });
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: partitions }] });
    const producer = kafka.producer();
    await producer.connect();
    // Right after the creation some leaders may not serve yet (NOT_LEADER_FOR_PARTITION): try again.
    for (let attempt = 1; ; attempt++) {
      try {
        await producer.send({
          topic,
          messages: Array.from({ length: partitions }, (_, partition) => ({ partition, value: "v" })),
        });
        break;
      } catch (error) {
        if (attempt === 10) throw error;
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
    await producer.disconnect();
    const ends = new Map((await admin.fetchTopicOffsets(topic)).map((o) => [o.partition, BigInt(o.high)]));
    await admin.disconnect();
    for (let run = 0; run < 3; run++) {
      const requests = new Map<string, number>();
      const connector = new KafkajsSourceConnector({
        fetchMaxWaitMs: 10,
        fetchSessions,
        debug: (line) => {
          const api = /Request (\w+)\(key/.exec(line)?.[1];
          if (api) requests.set(api, (requests.get(api) ?? 0) + 1);
        },
      });
      const cluster = KafkaCluster.start({
        brokers: 1,
        clock: new SystemClock(),
        scheduler: new EventLoopScheduler({ keepAlive: false }),
        random: new SeededRandom(run),
      });
      const mirroring = ClusterMirroring.start({
        cluster,
        sources: connector,
        random: new SeededRandom(run + 1),
        numStatePartitions: 1,
      });
      try {
        await mirroring.admin.createMirror("m", { "bootstrap.servers": broker.bootstrap });
        const start = performance.now();
        await mirroring.admin.addTopics("m", topic);
        const added = performance.now() - start;
        const copied = (p: number) =>
          cluster.leaderFor(topic, p).replica(topic, p)?.log.logEndOffset === ends.get(p);
        while (!Array.from({ length: partitions }, (_, p) => p).every(copied))
          await new Promise((resolve) => setTimeout(resolve, 2));
        const all = performance.now() - start;
        console.log(
          `run ${run}: ${partitions} partitions, sessions ${fetchSessions ? "on" : "off"}: addTopics ${added.toFixed(0)} ms, all copied ${all.toFixed(0)} ms; requests ${JSON.stringify(Object.fromEntries(requests))}`,
        );
        const fetchesBefore = requests.get("Fetch") ?? 0;
        const cpuBefore = process.cpuUsage();
        const brokerBefore = childCpuMs();
        await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
        const cpu = process.cpuUsage(cpuBefore);
        const brokerMs = childCpuMs() - brokerBefore;
        const fetches = (requests.get("Fetch") ?? 0) - fetchesBefore;
        const cpuMs = (cpu.user + cpu.system) / 1000;
        console.log(
          `  idle ${IDLE_MS} ms: ${fetches} fetches, CPU ${cpuMs.toFixed(0)} ms (${((cpuMs * 1000) / Math.max(1, fetches)).toFixed(0)} µs per fetch); the broker's JVM ${brokerMs.toFixed(0)} ms`,
        );
      } finally {
        mirroring.close();
        cluster.close();
        await connector.close();
      }
    }
  } finally {
    await broker.destroy();
  }
}

/** CPU time of this process's child processes (the broker's JVM), from /proc (Linux). */
function childCpuMs(): number {
  const pids = execFileSync("ps", ["-o", "pid=", "--ppid", String(process.pid)], { encoding: "utf8" })
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line.length > 0);
  let ticks = 0;
  for (const pid of pids) {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
      ticks += Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15 of stat)
    } catch {
      // gone
    }
  }
  return ticks * 10; // USER_HZ is 100 on Linux
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
