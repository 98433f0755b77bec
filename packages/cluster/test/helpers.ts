import { encodeRecordBatch, type RecordBatch, recordBatches } from "@cluster-mirror/protocol";
import {
  KafkaCluster,
  type KafkaClusterOptions,
  ManualClock,
  ManualScheduler,
  SeededRandom,
} from "../src/index";

/** A cluster on a manual clock and scheduler: nothing happens until `settle()` runs the queued steps. */
export function testCluster(options: Partial<KafkaClusterOptions> = {}) {
  const clock = new ManualClock(1_700_000_000_000);
  const scheduler = new ManualScheduler(clock);
  const cluster = KafkaCluster.start({
    brokers: 3,
    clock,
    scheduler,
    random: new SeededRandom(42),
    ...options,
  });
  /** Runs every step due within `ms` of virtual time (replication, timers). */
  const settle = (ms = 0) => scheduler.run(ms);
  return { cluster, clock, scheduler, settle };
}

/** A batch of string records, as a client would produce it. */
export function batch(
  values: string[],
  producer: {
    producerId?: bigint;
    producerEpoch?: number;
    baseSequence?: number;
    isTransactional?: boolean;
  } = {},
): Buffer {
  return encodeRecordBatch({
    ...producer,
    baseTimestamp: 1_700_000_000_000n,
    records: values.map((v, i) => ({
      attributes: 0,
      offsetDelta: i,
      timestampDelta: BigInt(i),
      key: null,
      value: Buffer.from(v),
      headers: [],
    })),
  });
}

/** Every batch of a replica's log. */
export function batchesOf(
  cluster: KafkaCluster,
  brokerId: number,
  topic: string,
  partition = 0,
): RecordBatch[] {
  const r = cluster.broker(brokerId)?.replica(topic, partition);
  return r ? [...r.log.batches()] : [];
}

/** The raw bytes of a fetch response, split into batches. */
export function split(records: Buffer): RecordBatch[] {
  return [...recordBatches(records)];
}

/** A batch of keyed string records. */
export function keyedBatch(entries: [string, string][]): Buffer {
  return encodeRecordBatch({
    baseTimestamp: 1_700_000_000_000n,
    records: entries.map(([k, v], i) => ({
      attributes: 0,
      offsetDelta: i,
      timestampDelta: 0n,
      key: Buffer.from(k),
      value: Buffer.from(v),
      headers: [],
    })),
  });
}

/** A batch as a source stored it: one record per value from `baseOffset` on, written at `epoch`. */
export function sourceBatch(baseOffset: bigint, epoch: number, value: string | readonly string[]): Buffer {
  const values = typeof value === "string" ? [value] : value;
  return encodeRecordBatch({
    baseOffset,
    partitionLeaderEpoch: epoch,
    records: values.map((v, i) => ({
      attributes: 0,
      offsetDelta: i,
      timestampDelta: 0n,
      key: null,
      value: Buffer.from(v),
      headers: [],
    })),
  });
}

/** One record with a key (a tombstone when `value` is null) at timestamp `ts`, as one batch. */
export function keyedRecord(key: string, value: string | null, ts: number): Buffer {
  return encodeRecordBatch({
    baseTimestamp: BigInt(ts),
    records: [
      {
        attributes: 0,
        offsetDelta: 0,
        timestampDelta: 0n,
        key: Buffer.from(key),
        value: value === null ? null : Buffer.from(value),
        headers: [],
      },
    ],
  });
}
