import { performance } from "node:perf_hooks";
import {
  EmbeddedKafka,
  KafkaCluster,
  ManualClock,
  ManualScheduler,
  type Message,
  SeededRandom,
} from "@cluster-mirror/cluster";
import {
  type DestinationCluster,
  EmbeddedDestination,
  EmbeddedSourceCluster,
  MirrorFetcherManager,
} from "@cluster-mirror/mirror";
import { decodeRecordBatch, encodeRecordBatch, type Record, recordBatches } from "@cluster-mirror/protocol";
import { type BenchResult, type BenchSuite, result } from "../harness";

const BATCH_BYTES = 16 * 1024;
const PARTITIONS = 8;
const TOPIC = "bench";
/** Data per run: 128 MiB (8192 batches of 16 KiB). */
const TOTAL_BATCHES = 8192;

/**
 * One ~16 KiB batch of `count` records (16: ~1000-byte values; 140: ~100-byte values, the typical case),
 * non-idempotent, so it can be produced again and again.
 */
function template(count: number): Buffer {
  const records: Record[] = [];
  for (let i = 0; i < count; i++) {
    records.push({
      attributes: 0,
      offsetDelta: i,
      timestampDelta: BigInt(i),
      key: Buffer.from(`key-${i}`),
      value: Buffer.alloc(Math.floor(BATCH_BYTES / count) - 24, i),
      headers: [],
    });
  }
  return encodeRecordBatch({ baseTimestamp: 1_700_000_000_000n, records });
}

/**
 * A full GC before each timed run (the bench runs with --expose-gc), so that no run pays for the garbage
 * of setting up the previous one; every run, mirror and baselines, does the same.
 */
const collectGarbage = () => (globalThis as { gc?: () => void }).gc?.();

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

async function setUp(rf: number, count: number) {
  const clock = new ManualClock(1_700_000_000_000);
  const scheduler = new ManualScheduler(clock);
  const source = KafkaCluster.start({ brokers: 1, clock, scheduler, random: new SeededRandom(1) });
  const destination = KafkaCluster.start({ brokers: rf, clock, scheduler, random: new SeededRandom(2) });
  const segmentBytes = String(64 * 1024 * 1024);
  const topicId = source.controller.createTopic({
    name: TOPIC,
    numPartitions: PARTITIONS,
    replicationFactor: 1,
    configs: { "segment.bytes": segmentBytes },
  });
  const mirrorAssignment = Array.from({ length: PARTITIONS }, (_, p) =>
    Array.from({ length: rf }, (_, r) => (r === 0 ? 0 : ((p + r) % (rf - 1)) + 1)),
  );
  destination.controller.createTopic({
    name: TOPIC,
    topicId,
    replicaAssignment: mirrorAssignment,
    configs: { "mirror.name": "bench", "segment.bytes": segmentBytes },
  });
  destination.controller.createTopic({
    name: "copy",
    replicaAssignment: mirrorAssignment,
    configs: { "segment.bytes": segmentBytes },
  });
  const batch = template(count);
  const broker = source.broker(0)!;
  for (let i = 0; i < TOTAL_BATCHES; i++) {
    await broker.produce({ topic: TOPIC, partition: i % PARTITIONS, batch: Buffer.from(batch), acks: 1 });
  }
  let bytes = 0;
  for (let p = 0; p < PARTITIONS; p++) {
    for (const b of broker.replica(TOPIC, p)!.log.batches()) bytes += b.sizeInBytes;
  }
  return { clock, scheduler, source, destination, topicId, bytes };
}

/** Mirrors the whole topic with the fetcher manager on destination broker 0; returns MB/s. */
async function mirrorRun(rf: number, count: number): Promise<number> {
  const env = await setUp(rf, count);
  const destination: DestinationCluster = new EmbeddedDestination(env.destination);
  const manager = new MirrorFetcherManager({
    brokerId: 0,
    destination,
    sources: () => new EmbeddedSourceCluster(env.source),
    events: { epochObserved: () => {}, partitionFailed: () => {} },
    clock: env.clock,
    scheduler: env.scheduler,
    config: () => ({
      numFetchers: 1,
      maxBytes: 16 * 1024 * 1024,
      partitionMaxBytes: 2 * 1024 * 1024,
      backoffMs: 1000,
    }),
  });
  const end = env.source.broker(0)!.replica(TOPIC, 0)!.log.logEndOffset * BigInt(PARTITIONS);
  const leader = env.destination.broker(0)!;
  const caughtUp = () => {
    let n = 0n;
    for (let p = 0; p < PARTITIONS; p++) n += leader.replica(TOPIC, p)!.log.logEndOffset;
    return n >= end;
  };
  collectGarbage();
  const start = performance.now();
  for (let p = 0; p < PARTITIONS; p++)
    manager.addPartition({ mirror: "bench", topic: TOPIC, topicId: env.topicId, partition: p });
  while (!caughtUp()) {
    env.scheduler.run(0);
    await tick();
  }
  const ms = performance.now() - start;
  manager.close();
  return env.bytes / 1e6 / (ms / 1000);
}

/** The consume-then-produce baseline: fetch, decode every record, re-encode a batch, produce acks=-1. */
async function consumeProduceRun(rf: number, count: number): Promise<number> {
  const env = await setUp(rf, count);
  const from = env.source.broker(0)!;
  const to = env.destination.broker(0)!;
  collectGarbage();
  const start = performance.now();
  for (let p = 0; p < PARTITIONS; p++) {
    let offset = 0n;
    const end = from.replica(TOPIC, p)!.log.logEndOffset;
    while (offset < end) {
      const response = from.fetch({
        topic: TOPIC,
        partition: p,
        fetchOffset: offset,
        maxBytes: 2 * 1024 * 1024,
        isolationLevel: "read_uncommitted",
      });
      // The response's slices as they are (views of the source's stored bytes, no copy), as the mirror.
      const batches = response.recordSlices.flatMap((slice) => [...recordBatches(slice)]);
      for (const batch of batches) {
        const decoded = decodeRecordBatch(batch);
        const copy = encodeRecordBatch({
          baseTimestamp: decoded.baseTimestamp,
          compression: decoded.compression,
          records: decoded.records,
        });
        const produced = to.produce({ topic: "copy", partition: p, batch: copy, acks: -1 });
        // acks=-1 waits for the followers: let replication run while the produce is outstanding.
        let done = false;
        void produced.then(() => {
          done = true;
        });
        // An acknowledgement that needs no replication step arrives without an event-loop turn.
        await null;
        while (!done) {
          env.scheduler.run(0);
          await tick();
        }
        offset = batch.nextOffset;
      }
    }
  }
  const ms = performance.now() - start;
  return env.bytes / 1e6 / (ms / 1000);
}

/** Runs the shared scheduler until `work` settles (cluster steps, then the clients' continuations). */
async function drive<T>(scheduler: ManualScheduler, work: Promise<T>): Promise<T> {
  let settled = false;
  const done = () => {
    settled = true;
  };
  work.then(done, done);
  while (!settled) {
    if (scheduler.run(0, 20_000) === 0) scheduler.run(10, 20_000);
    await tick();
  }
  return work;
}

/**
 * The mirror users would otherwise run: a kafkajs-style MirrorMaker on the same clusters, through the
 * embedded kafkajs-shaped clients. A consumer group reads the source (read_uncommitted, 2 MiB per
 * partition), and an idempotent producer (acks=all) re-sends each polled partition's records to the same
 * partition with their keys, values, headers and timestamps; offsets are committed after each round.
 * It copies the first quarter of the data (the rate per byte is what is compared).
 */
async function clientMirrorRun(rf: number, count: number): Promise<number> {
  const env = await setUp(rf, count);
  const consumer = new EmbeddedKafka(env.source, { clientId: "mirror-maker" }).consumer({
    groupId: "mirror-maker",
    readUncommitted: true,
    maxBytesPerPartition: 2 * 1024 * 1024,
  });
  const producer = new EmbeddedKafka(env.destination, { clientId: "mirror-maker" }).producer({
    idempotent: true,
  });
  await drive(env.scheduler, producer.connect());
  await drive(env.scheduler, consumer.connect());
  await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
  const totalRecords = (TOTAL_BATCHES / 4) * count;
  let copied = 0;
  collectGarbage();
  const start = performance.now();
  while (copied < totalRecords) {
    const polled = await drive(env.scheduler, consumer.poll());
    const byPartition = new Map<number, Message[]>();
    for (const { partition, message } of polled) {
      const list = byPartition.get(partition) ?? [];
      if (list.length === 0) byPartition.set(partition, list);
      list.push({
        key: message.key,
        value: message.value,
        headers: message.headers,
        timestamp: message.timestamp,
        partition,
      });
    }
    await drive(
      env.scheduler,
      Promise.all([...byPartition.values()].map((messages) => producer.send({ topic: "copy", messages }))),
    );
    await drive(env.scheduler, consumer.commitOffsets());
    copied += polled.length;
  }
  const ms = performance.now() - start;
  const bytes = (env.bytes * copied) / (TOTAL_BATCHES * count);
  return bytes / 1e6 / (ms / 1000);
}

/** Best of `runs` after one warm-up run: the JIT and the allocator settle in the first runs. */
async function best(runs: number, run: () => Promise<number>): Promise<number> {
  await run();
  let top = 0;
  for (let i = 0; i < runs; i++) top = Math.max(top, await run());
  return top;
}

/**
 * Mirroring throughput embedded to embedded on 16 KiB batches (the fetcher manager's as-is append) against
 * two consume-then-produce mirrors on the same clusters: the leanest one possible (broker fetch, decode,
 * re-encode, broker produce acks=-1, no client) and the one users would otherwise run (a MirrorMaker on
 * the kafkajs-shaped consumer and producer). Targets: >= 1000 MB/s and >= 20x at RF 1; RF 3 is printed
 * beside. Each figure is the best of three runs, mirror and baselines alike.
 */
export const suite: BenchSuite = {
  name: "mirror",
  async run(): Promise<BenchResult[]> {
    const results: BenchResult[] = [];
    const shapes = [
      { rf: 1, count: 16, name: "1KiB-records" },
      { rf: 1, count: 140, name: "100B-records" },
      { rf: 3, count: 16, name: "1KiB-records" },
    ];
    for (const { rf, count, name } of shapes) {
      const mirror = await best(3, () => mirrorRun(rf, count));
      const lean = await best(3, () => consumeProduceRun(rf, count));
      const clients = await best(3, () => clientMirrorRun(rf, count));
      const target = rf === 1 ? "; targets >= 1000 MB/s and >= 20x" : "; RF 3 destination, informational";
      results.push(
        result(
          `mirror.throughput.16KiB.${name}.rf${rf}`,
          mirror,
          "MB/s",
          lean,
          `baseline: leanest consume-then-produce (broker fetch, decode, re-encode, produce acks=-1)${target}`,
        ),
        result(
          `mirror.throughput.16KiB.${name}.rf${rf}.vs-clients`,
          mirror,
          "MB/s",
          clients,
          `baseline: MirrorMaker on the kafkajs-shaped clients (group consumer, idempotent producer acks=all)${target}`,
        ),
      );
    }
    return results;
  },
};
