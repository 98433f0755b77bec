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
import {
  crc32c,
  decodeRecordBatch,
  encodeRecordBatch,
  type Record,
  RecordBatchLayout,
  recordBatches,
} from "@cluster-mirror/protocol";

/** The shape of the data a run mirrors. */
export interface Shape {
  /** Bytes per batch (about: header and record framing included). */
  batchBytes: number;
  /** Records per batch. */
  records: number;
  /** Batches in the topic. */
  batches: number;
  /** Replication factor of the destination topic. */
  rf: number;
}

export const TOPIC = "bench";
export const PARTITIONS = 8;

/** Wall and CPU time of one run, and the bytes it moved. */
export interface Run {
  ms: number;
  /** CPU time of this process (user + system) during the run. */
  cpuMs: number;
  /** The system part of `cpuMs` (page faults of fresh memory show up here). */
  sysMs: number;
  /** Minor page faults of this process during the run (first touches of fresh memory, each a kernel entry). */
  pageFaults: number;
  bytes: number;
}

/** The source cluster of a shape, filled once; runs only read it, so it is shared by every run. */
export interface SourceEnv {
  shape: Shape;
  clock: ManualClock;
  scheduler: ManualScheduler;
  source: KafkaCluster;
  topicId: string;
  /** Bytes stored in the topic. */
  bytes: number;
}

const SEGMENT_BYTES = String(256 * 1024 * 1024);

/** One batch of `records` records whose values fill about `batchBytes`, non-idempotent (can be produced again). */
function template(batchBytes: number, records: number): Buffer {
  const list: Record[] = [];
  const overhead = 61 + records * 16;
  const valueBytes = Math.max(1, Math.floor((batchBytes - overhead) / records));
  for (let i = 0; i < records; i++) {
    list.push({
      attributes: 0,
      offsetDelta: i,
      timestampDelta: BigInt(i),
      key: Buffer.from(`key-${i}`),
      value: Buffer.alloc(valueBytes, i),
      headers: [],
    });
  }
  return encodeRecordBatch({ baseTimestamp: 1_700_000_000_000n, records: list });
}

/** A full GC before each timed run (the bench runs with --expose-gc), so no run pays for another's garbage. */
export const collectGarbage = () => (globalThis as { gc?: () => void }).gc?.();

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * A full GC, then a pause: V8 frees dead ArrayBuffers' memory on background threads after the GC, and
 * that work (unmapping the previous run's buffers) would otherwise be counted in the next run's CPU time.
 */
async function settleGarbage(): Promise<void> {
  collectGarbage();
  await new Promise((resolve) => setTimeout(resolve, 50));
  collectGarbage();
}

/** Creates the source cluster and produces the shape's batches round-robin over the partitions. */
export async function sourceEnv(shape: Shape): Promise<SourceEnv> {
  const clock = new ManualClock(1_700_000_000_000);
  const scheduler = new ManualScheduler(clock);
  const source = KafkaCluster.start({ brokers: 1, clock, scheduler, random: new SeededRandom(1) });
  const topicId = source.controller.createTopic({
    name: TOPIC,
    numPartitions: PARTITIONS,
    replicationFactor: 1,
    configs: { "segment.bytes": SEGMENT_BYTES },
  });
  const batch = template(shape.batchBytes, shape.records);
  const broker = source.broker(0)!;
  for (let i = 0; i < shape.batches; i++) {
    await broker.produce({ topic: TOPIC, partition: i % PARTITIONS, batch: Buffer.from(batch), acks: 1 });
  }
  let bytes = 0;
  for (let p = 0; p < PARTITIONS; p++) {
    for (const b of broker.replica(TOPIC, p)!.log.batches()) bytes += b.sizeInBytes;
  }
  return { shape, clock, scheduler, source, topicId, bytes };
}

/** A fresh destination cluster for one run: the mirror topic and a plain `copy` topic for the baselines. */
function destination(env: SourceEnv, run: number): KafkaCluster {
  const rf = env.shape.rf;
  const cluster = KafkaCluster.start({
    brokers: rf,
    clock: env.clock,
    scheduler: env.scheduler,
    random: new SeededRandom(100 + run),
  });
  const assignment = Array.from({ length: PARTITIONS }, (_, p) =>
    Array.from({ length: rf }, (_, r) => (r === 0 ? 0 : ((p + r) % (rf - 1)) + 1)),
  );
  cluster.controller.createTopic({
    name: TOPIC,
    topicId: env.topicId,
    replicaAssignment: assignment,
    configs: { "mirror.name": "bench", "segment.bytes": SEGMENT_BYTES },
  });
  cluster.controller.createTopic({
    name: "copy",
    replicaAssignment: assignment,
    configs: { "segment.bytes": SEGMENT_BYTES },
  });
  return cluster;
}

/** Started right before and stopped right after the timed part of a run (e.g. a CPU profiler). */
export interface Probe {
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** Times `work`: wall clock and this process's CPU time. The bench may read clocks: it is not logic. */
export async function timed(bytes: number, work: () => Promise<void> | void, probe?: Probe): Promise<Run> {
  await settleGarbage();
  await probe?.start();
  const faults = process.resourceUsage().minorPageFault;
  const cpu = process.cpuUsage();
  const start = performance.now();
  await work();
  const ms = performance.now() - start;
  const used = process.cpuUsage(cpu);
  const pageFaults = process.resourceUsage().minorPageFault - faults;
  await probe?.stop();
  return { ms, cpuMs: (used.user + used.system) / 1000, sysMs: used.system / 1000, pageFaults, bytes };
}

/**
 * Mirrors the whole topic with the fetcher manager on destination broker 0. `copyOnFetch`: the embedded
 * source's bytes are copied once per fetch, as a socket read would (the headline); otherwise the
 * destination keeps views of the source's memory (zero-copy, in process only).
 */
export async function mirrorRun(
  env: SourceEnv,
  run: number,
  copyOnFetch: boolean,
  probe?: Probe,
): Promise<Run> {
  const cluster = destination(env, run);
  const dest: DestinationCluster = new EmbeddedDestination(cluster);
  const source = new EmbeddedSourceCluster(env.source, { copyOnFetch });
  const manager = new MirrorFetcherManager({
    brokerId: 0,
    destination: dest,
    sources: () => source,
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
  const ends = Array.from(
    { length: PARTITIONS },
    (_, p) => env.source.broker(0)!.replica(TOPIC, p)!.log.logEndOffset,
  );
  const leader = cluster.broker(0)!;
  const caughtUp = () => ends.every((end, p) => leader.replica(TOPIC, p)!.log.logEndOffset >= end);
  const result = await timed(
    env.bytes,
    async () => {
      for (let p = 0; p < PARTITIONS; p++)
        manager.addPartition({ mirror: "bench", topic: TOPIC, topicId: env.topicId, partition: p });
      while (!caughtUp()) {
        env.scheduler.run(0);
        await tick();
      }
    },
    probe,
  );
  manager.close();
  cluster.close();
  return result;
}

/**
 * The leanest consume-then-produce mirror: broker fetch (views, no client), decode every record,
 * re-encode a batch, produce it with acks=-1. Copies `fraction` of each partition (the rate per byte is
 * what is compared).
 */
export async function leanRun(env: SourceEnv, run: number, fraction = 1): Promise<Run> {
  const cluster = destination(env, run);
  const from = env.source.broker(0)!;
  const to = cluster.broker(0)!;
  let bytes = 0;
  const result = await timed(0, async () => {
    for (let p = 0; p < PARTITIONS; p++) {
      let offset = 0n;
      const end = (from.replica(TOPIC, p)!.log.logEndOffset * BigInt(Math.round(fraction * 1000))) / 1000n;
      while (offset < end) {
        const response = from.fetch({
          topic: TOPIC,
          partition: p,
          fetchOffset: offset,
          maxBytes: 2 * 1024 * 1024,
          isolationLevel: "read_uncommitted",
        });
        const batches = response.recordSlices.flatMap((slice) => [...recordBatches(slice)]);
        for (const batch of batches) {
          if (batch.baseOffset >= end) break;
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
          bytes += batch.sizeInBytes;
          offset = batch.nextOffset;
        }
      }
    }
  });
  cluster.close();
  return { ...result, bytes };
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
 * The mirror users would otherwise run: a MirrorMaker on the embedded kafkajs-shaped clients. A consumer
 * group reads the source (read_uncommitted, 2 MiB per partition), an idempotent producer (acks=all)
 * re-sends each polled partition's records to the same partition with their keys, values, headers and
 * timestamps; offsets are committed after each round. Copies about `fraction` of the data.
 */
export async function clientMirrorRun(env: SourceEnv, run: number, fraction = 0.25): Promise<Run> {
  const cluster = destination(env, run);
  const consumer = new EmbeddedKafka(env.source, { clientId: "mirror-maker" }).consumer({
    groupId: `mirror-maker-${run}`,
    readUncommitted: true,
    maxBytesPerPartition: 2 * 1024 * 1024,
  });
  const producer = new EmbeddedKafka(cluster, { clientId: "mirror-maker" }).producer({ idempotent: true });
  await drive(env.scheduler, producer.connect());
  await drive(env.scheduler, consumer.connect());
  await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
  const totalRecords = Math.floor(env.shape.batches * fraction) * env.shape.records;
  let copied = 0;
  const result = await timed(0, async () => {
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
  });
  await drive(env.scheduler, consumer.disconnect());
  await drive(env.scheduler, producer.disconnect());
  cluster.close();
  return { ...result, bytes: (env.bytes * copied) / (env.shape.batches * env.shape.records) };
}

/**
 * The floor of one copy per fetch on this machine: the same fetches' bytes (2 MiB per partition, read
 * from the source log as the mirror reads them) copied into fresh buffers that are kept, as a log keeps
 * them, slice by slice, each slice's batches' CRC-32C computed on the copy right after (one native call
 * per batch); nothing else (no validation, no index, no mirror).
 */
export async function copyFloorRun(env: SourceEnv): Promise<Run> {
  const { ATTRIBUTES_OFFSET, BATCH_LENGTH_OFFSET, LAST_OFFSET_DELTA_OFFSET, LOG_OVERHEAD } =
    RecordBatchLayout;
  const broker = env.source.broker(0)!;
  const kept: Buffer[] = [];
  let check = 0;
  const run = await timed(env.bytes, () => {
    for (let p = 0; p < PARTITIONS; p++) {
      const log = broker.replica(TOPIC, p)!.log;
      let offset = 0n;
      while (offset < log.logEndOffset) {
        const data = log.read(offset, 2 * 1024 * 1024, "read_uncommitted", { fetchUpTo: "log_end" });
        const out = Buffer.allocUnsafe(data.sizeInBytes);
        let at = 0;
        let pos = 0;
        let last = 0;
        // Copied slice by slice (each holds whole batches), each slice's batches checked right after.
        for (const slice of data.recordSlices) {
          at += slice.copy(out, at);
          while (pos < at) {
            const end = pos + LOG_OVERHEAD + out.readInt32BE(pos + BATCH_LENGTH_OFFSET);
            check ^= crc32c(out.subarray(pos + ATTRIBUTES_OFFSET, end));
            last = pos;
            pos = end;
          }
        }
        kept.push(out);
        offset = out.readBigInt64BE(last) + BigInt(out.readInt32BE(last + LAST_OFFSET_DELTA_OFFSET)) + 1n;
      }
    }
  });
  if (kept.length === 0 || check === 0.5) throw new Error("nothing copied");
  return run;
}
