import { performance } from "node:perf_hooks";
import { EventLoopScheduler, KafkaCluster, SeededRandom, SystemClock } from "@cluster-mirror/cluster";
import { KafkajsSourceCluster, KafkajsSourceConnector } from "@cluster-mirror/kafkajs";
import { type KafkaBrokerHandle, startKafkaBroker } from "@cluster-mirror/kafkajs/broker";
import { ClusterMirroring, type SourceConnector } from "@cluster-mirror/mirror";
import { recordBatches } from "@cluster-mirror/protocol";
import kafkajs from "kafkajs";

const { Kafka, logLevel } = kafkajs;

/** The shape of the topic the real-broker bench and profile mirror. */
export interface RealBrokerTopicShape {
  topic: string;
  partitions: number;
  /** Batches over all partitions (each send writes one batch per partition). */
  batches: number;
  /** Records per batch: 16 records of 1000 bytes make the 16 KiB batches of issue #12. */
  recordsPerBatch: number;
  valueBytes: number;
}

/** 16 KiB batches (16 records of 1000 B) on 4 partitions; `batches` sets the size of the topic. */
export function sixteenKiBBatches(batches: number): RealBrokerTopicShape {
  return { topic: "bench", partitions: 4, batches, recordsPerBatch: 16, valueBytes: 1000 };
}

/** A running Kafka 3.9.1 broker holding one filled topic. */
export interface FilledBroker {
  readonly broker: KafkaBrokerHandle;
  readonly shape: RealBrokerTopicShape;
  /** A kafkajs client of the broker (the baseline consumer uses it). */
  readonly kafka: InstanceType<typeof Kafka>;
  /** Each partition's log end offset after the fill. */
  readonly ends: readonly bigint[];
  readonly totalRecords: number;
  /** Payload bytes (records times the value size): the unit of every rate here. */
  readonly payloadBytes: number;
  /** Stops the broker. */
  destroy(): Promise<void>;
}

/**
 * Starts a real Kafka broker (jars fetched with mvn on first use, as in the tests) and fills `shape.topic`
 * with an idempotent kafkajs producer, one batch per partition per send.
 */
export async function startFilledBroker(
  shape: RealBrokerTopicShape,
  log: (message: string) => void = (m) => console.log(`  ${m}`),
): Promise<FilledBroker> {
  const broker = await startKafkaBroker({ log });
  try {
    const kafka = new Kafka({ brokers: [broker.bootstrap], clientId: "bench", logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({
      waitForLeaders: true,
      topics: [{ topic: shape.topic, numPartitions: shape.partitions }],
    });
    await admin.disconnect();
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    const value = Buffer.alloc(shape.valueBytes, 7);
    for (let i = 0; i < shape.batches / shape.partitions; i++) {
      await producer.send({
        topic: shape.topic,
        messages: Array.from({ length: shape.partitions * shape.recordsPerBatch }, (_, n) => ({
          partition: n % shape.partitions,
          value,
        })),
      });
    }
    await producer.disconnect();
    const oracle = new KafkajsSourceCluster("bench-oracle", { "bootstrap.servers": broker.bootstrap });
    const ends = await Promise.all(
      Array.from({ length: shape.partitions }, (_, p) => oracle.listOffsets(shape.topic, p, -1n)),
    );
    await oracle.close();
    const totalRecords = ends.reduce((a, b) => a + Number(b), 0);
    return {
      broker,
      shape,
      kafka,
      ends,
      totalRecords,
      payloadBytes: totalRecords * shape.valueBytes,
      destroy: () => broker.destroy(),
    };
  } catch (error) {
    await broker.destroy();
    throw error;
  }
}

/** Wall and CPU time (user + system of this process) of one run. */
export interface Run {
  ms: number;
  cpuMs: number;
}

/** Wall and CPU time of `work` (this process only; the broker's JVM serves both sides alike). */
export async function timed(work: () => Promise<void>): Promise<Run> {
  const cpu = process.cpuUsage();
  const start = performance.now();
  await work();
  const ms = performance.now() - start;
  const used = process.cpuUsage(cpu);
  return { ms, cpuMs: (used.user + used.system) / 1000 };
}

/** Options of one mirror run. */
export interface MirrorRunOptions {
  /** Seeds the destination cluster and the engine. */
  seed: number;
  /** Fetchers per source broker (`mirror.num.replica.fetchers`); default: one per partition. */
  fetchers?: number;
  /** Fetch sizes: per partition and per response (default 4 MiB and 16 MiB). */
  fetch?: { partitionMaxBytes: number; maxBytes: number };
  /** Wraps the sources the engine connects with (to observe fetches); default: plain kafkajs sources. */
  sources?: (connector: SourceConnector) => SourceConnector;
  /** Measures the run: called with the work (add the topic, wait until every record landed). */
  measure?: (work: () => Promise<void>) => Promise<Run>;
}

/**
 * Mirrors the filled topic once from the broker into a fresh embedded destination with ClusterMirroring,
 * and returns what `measure` measured of it: from adding the topic to the mirror until every partition's
 * destination log end equals the source's. The mirror's creation (its source connection) is not measured.
 */
export async function mirrorOnce(filled: FilledBroker, options: MirrorRunOptions): Promise<Run> {
  const { topic, partitions } = filled.shape;
  const cluster = KafkaCluster.start({
    brokers: 1,
    clock: new SystemClock(),
    scheduler: new EventLoopScheduler({ keepAlive: false }),
    random: new SeededRandom(options.seed),
  });
  const connector = new KafkajsSourceConnector({ fetchMaxWaitMs: 10 });
  const mirroring = ClusterMirroring.start({
    cluster,
    sources: options.sources ? options.sources(connector) : connector,
    random: new SeededRandom(options.seed + 1),
    numStatePartitions: 1,
    fetch: { fetchWaitMaxMs: 5, partitionMaxBytes: 4 << 20, maxBytes: 16 << 20, ...options.fetch },
  });
  try {
    await mirroring.admin.createMirror("bench", {
      "bootstrap.servers": filled.broker.bootstrap,
      "mirror.num.replica.fetchers": String(options.fetchers ?? partitions),
    });
    return await (options.measure ?? timed)(async () => {
      await mirroring.admin.addTopics("bench", topic);
      for (;;) {
        const done = filled.ends.every(
          (end, p) => cluster.leaderFor(topic, p).replica(topic, p)?.log.logEndOffset === end,
        );
        if (done) break;
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
    });
  } finally {
    mirroring.close();
    cluster.close();
    await connector.close();
  }
}

/** Reads the whole topic once with kafkajs's own consumer (`eachBatch`, a fresh group): the baseline. */
export async function kafkajsConsumerOnce(filled: FilledBroker, group: string): Promise<Run> {
  const consumer = filled.kafka.consumer({ groupId: group, maxBytesPerPartition: 4 << 20 });
  await consumer.connect();
  try {
    await consumer.subscribe({ topic: filled.shape.topic, fromBeginning: true });
    let seen = 0;
    return await timed(
      () =>
        new Promise<void>((resolve, reject) => {
          consumer
            .run({
              autoCommit: false,
              eachBatch: async ({ batch }) => {
                seen += batch.messages.length;
                if (seen >= filled.totalRecords) resolve();
              },
            })
            .catch(reject);
        }),
    );
  } finally {
    await consumer.disconnect();
  }
}

/**
 * The ceiling of the real-broker path: the same fetches the mirror makes (the kafkajs source adapter, one
 * fetch loop and connection per partition, 4 MiB per partition), with the bytes dropped as they arrive: no
 * CRC check, no append, no engine. What the broker, loopback and kafkajs's connection deliver to this
 * process; the mirror cannot run faster than this, whatever the baseline.
 */
export async function fetchOnlyOnce(filled: FilledBroker): Promise<Run> {
  const { topic, partitions } = filled.shape;
  // As the mirror's connector in `mirrorOnce` (fetch wait 10 ms).
  const source = new KafkajsSourceCluster(
    "bench-fetch-only",
    { "bootstrap.servers": filled.broker.bootstrap },
    { fetchMaxWaitMs: 10 },
  );
  try {
    const leaders = await source.partitionLeaders([topic]);
    return await timed(async () => {
      await Promise.all(
        Array.from({ length: partitions }, async (_, p) => {
          const leader = leaders.find((l) => l.topic === topic && l.partition === p);
          if (!leader) throw new Error(`${topic}-${p} has no leader on the bench broker`);
          let offset = 0n;
          while (offset < filled.ends[p]!) {
            const response = await source.fetch({
              clientId: `bench-fetch-only-${p}`,
              brokerId: leader.leaderId,
              maxBytes: 16 << 20,
              partitions: [
                {
                  topic,
                  partition: p,
                  fetchOffset: offset,
                  lastFetchedEpoch: -1,
                  currentLeaderEpoch: -1,
                  maxBytes: 4 << 20,
                },
              ],
            });
            const answer = response.partitions[0];
            if (answer?.error) throw answer.error;
            offset = nextFetchOffset(answer?.recordSlices ?? [], offset);
          }
        }),
      );
    });
  } finally {
    await source.close();
  }
}

/** The offset after the last whole batch of `slices` (the project's zero-copy batch iterator). */
function nextFetchOffset(slices: readonly Buffer[], offset: bigint): bigint {
  let next = offset;
  for (const slice of slices) for (const batch of recordBatches(slice)) next = batch.lastOffset + 1n;
  return next;
}
