import { performance } from "node:perf_hooks";
import {
  EmbeddedKafka,
  KafkaCluster,
  ManualClock,
  ManualScheduler,
  type Message,
  SeededRandom,
} from "@cluster-mirror/cluster";
import { MemoryLogStorage, PartitionLog } from "@cluster-mirror/log";
import { encodeRecordBatch } from "@cluster-mirror/protocol";
import { type BenchResult, type BenchSuite, result } from "../harness";

const RECORDS_PER_SEND = 500;
const VALUE_BYTES = 100;
const SENDS = 40;
const PARTITIONS_FOR_ELECTION = 1000;

/** Yields to Node's event loop so that promise continuations run (the bench may use real time). */
const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Runs the manual scheduler until `work` settles (the cluster's steps, then the clients' continuations). */
async function drive<T>(scheduler: ManualScheduler, work: Promise<T>): Promise<T> {
  let done = false;
  work.then(
    () => {
      done = true;
    },
    () => {
      done = true;
    },
  );
  for (let idle = 0; ; ) {
    const ran = scheduler.run(0, 20_000);
    await tick();
    if (done) return work;
    if (ran > 0 && ran < 20_000) continue;
    scheduler.run(10, 20_000);
    await tick();
    if (++idle > 100_000) throw new Error("bench work did not settle");
  }
}

function newCluster(): { cluster: KafkaCluster; scheduler: ManualScheduler } {
  const clock = new ManualClock(1_700_000_000_000);
  const scheduler = new ManualScheduler(clock);
  const cluster = KafkaCluster.start({ brokers: 3, clock, scheduler, random: new SeededRandom(7) });
  return { cluster, scheduler };
}

function messages(send: number): Message[] {
  return Array.from({ length: RECORDS_PER_SEND }, (_, i) => ({
    key: `k-${send}-${i}`,
    value: Buffer.alloc(VALUE_BYTES, (send + i) & 0xff),
  }));
}

/** Produce SENDS batches (idempotent, acks=all) and consume them all: MB/s and records/s, wall clock. */
async function produceToConsume(replicationFactor: number): Promise<{ mbPerS: number; recordsPerS: number }> {
  const { cluster, scheduler } = newCluster();
  cluster.controller.createTopic({ name: "bench", numPartitions: 1, replicationFactor });
  const kafka = new EmbeddedKafka(cluster, { clientId: "bench" });
  const producer = kafka.producer({ idempotent: true });
  await producer.connect();
  const consumer = kafka.consumer({ groupId: "bench", readUncommitted: true, maxBytesPerPartition: 4 << 20 });
  await consumer.connect();
  await consumer.subscribe({ topic: "bench", fromBeginning: true });
  const payloads = Array.from({ length: SENDS }, (_, s) => messages(s));
  const total = SENDS * RECORDS_PER_SEND;
  let bytes = 0;
  const start = performance.now();
  for (const m of payloads) await drive(scheduler, producer.send({ topic: "bench", messages: m }));
  let read = 0;
  while (read < total) {
    const got = await drive(scheduler, consumer.poll());
    for (const r of got) bytes += (r.message.value?.length ?? 0) + (r.message.key?.length ?? 0);
    read += got.length;
  }
  const seconds = (performance.now() - start) / 1000;
  cluster.close();
  return { mbPerS: bytes / 1e6 / seconds, recordsPerS: total / seconds };
}

/** Baseline: the same records encoded and appended straight to one in-memory PartitionLog. */
function rawAppend(): { mbPerS: number; recordsPerS: number } {
  const clock = new ManualClock(0);
  const log = PartitionLog.open(new MemoryLogStorage(), { clock });
  const payloads = Array.from({ length: SENDS }, (_, s) => messages(s));
  let bytes = 0;
  const start = performance.now();
  payloads.forEach((m, s) => {
    const batch = encodeRecordBatch({
      producerId: 1n,
      producerEpoch: 0,
      baseSequence: s * RECORDS_PER_SEND,
      baseTimestamp: 1_700_000_000_000n,
      records: m.map((r, i) => ({
        attributes: 0,
        offsetDelta: i,
        timestampDelta: 0n,
        key: Buffer.from(r.key as string),
        value: r.value as Buffer,
        headers: [],
      })),
    });
    log.appendAsLeader(batch, 0);
    for (const r of m) bytes += (r.value as Buffer).length + Buffer.byteLength(r.key as string);
  });
  log.updateHighWatermark(log.logEndOffset);
  const seconds = (performance.now() - start) / 1000;
  return { mbPerS: bytes / 1e6 / seconds, recordsPerS: (SENDS * RECORDS_PER_SEND) / seconds };
}

/** Creating 1,000 RF=3 partitions, then crashing a broker: ms until each partition has a running leader. */
function election(): { createMs: number; electMs: number } {
  const { cluster, scheduler } = newCluster();
  const start = performance.now();
  cluster.controller.createTopic({
    name: "many",
    numPartitions: PARTITIONS_FOR_ELECTION,
    replicationFactor: 3,
  });
  scheduler.run(0);
  const createMs = performance.now() - start;
  const victim = cluster.controller.image.partition("many", 0)!.leader;
  const crashAt = performance.now();
  cluster.crashBroker(victim);
  scheduler.run(0);
  for (let p = 0; p < PARTITIONS_FOR_ELECTION; p++) {
    const leader = cluster.leaderFor("many", p);
    if (!leader.replica("many", p)?.isLeader) throw new Error(`partition ${p} has no running leader`);
  }
  const electMs = performance.now() - crashAt;
  cluster.close();
  return { createMs, electMs };
}

/** The embedded cluster with its kafkajs-shaped clients: produce-to-consume throughput and elections. */
export const suite: BenchSuite = {
  name: "cluster",
  async run(): Promise<BenchResult[]> {
    const results: BenchResult[] = [];
    await produceToConsume(1); // warm-up
    rawAppend(); // warm-up
    const raw = rawAppend();
    for (const rf of [1, 3]) {
      const r = await produceToConsume(rf);
      results.push(
        result(
          `cluster.produce-consume.rf${rf}.MBps`,
          r.mbPerS,
          "MB/s",
          raw.mbPerS,
          "baseline: encode + PartitionLog.appendAsLeader on MemoryLogStorage (no clients, no replication)",
        ),
        result(
          `cluster.produce-consume.rf${rf}.records`,
          r.recordsPerS,
          "records/s",
          raw.recordsPerS,
          "same baseline",
        ),
      );
    }
    election(); // warm-up
    const e = election();
    results.push(
      result(
        `cluster.elect-leaders.${PARTITIONS_FOR_ELECTION}`,
        e.electMs,
        "ms",
        e.createMs,
        `crash to every partition led again; baseline: creating the ${PARTITIONS_FOR_ELECTION} partitions`,
      ),
    );
    return results;
  },
};
