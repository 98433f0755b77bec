import { KafkaCluster, ManualClock, ManualScheduler, SeededRandom, type Uuid } from "@cluster-mirror/cluster";
import {
  ControlRecordType,
  controlTypeOf,
  encodeEndTxnMarkerBatch,
  encodeRecordBatch,
  RecordBatch,
} from "@cluster-mirror/protocol";
import { CoordinatorRuntime } from "../src/coordinator/coordinator-runtime";
import type { InspectionHub } from "../src/coordinator/inspection-hub";
import { MirrorCoordinatorRouter } from "../src/coordinator/mirror-coordinators";
import { EmbeddedDestination } from "../src/destination/embedded-destination";
import {
  EmbeddedStateLog,
  ensureMirrorStateTopic,
  MIRROR_STATE_TOPIC,
} from "../src/destination/embedded-state-log";
import type {
  FetcherManager,
  LocalReplica,
  MirrorPartitionKey,
  SourceCluster,
  SourceMirrorInfo,
  StateLog,
} from "../src/ports";
import { appendSourceTransactional } from "./source-txn-batch";

/** A FetcherManager that records calls (the executor reads the LME on the leader itself). */
export class FakeFetcherManager implements FetcherManager {
  readonly calls: string[] = [];
  readonly active = new Set<string>();
  constructor(readonly brokerId: number) {}
  addPartition(key: MirrorPartitionKey): void {
    this.calls.push(`add ${key.topic}-${key.partition}`);
    this.active.add(`${key.topic}-${key.partition}`);
  }
  async removePartition(key: MirrorPartitionKey): Promise<void> {
    this.calls.push(`remove ${key.topic}-${key.partition}`);
    this.active.delete(`${key.topic}-${key.partition}`);
  }
  holdAppends(key: MirrorPartitionKey): void {
    this.calls.push(`hold ${key.topic}-${key.partition}`);
  }
  releaseAppends(key: MirrorPartitionKey): void {
    this.calls.push(`release ${key.topic}-${key.partition}`);
  }
  offsets() {
    return undefined;
  }
  close(): void {}
}

/** A source over an embedded cluster for the calls the coordinator makes; the rest are not used here. */
export class FakeSource implements SourceCluster {
  /** LMEs the source answers, by `topicId:partition` (-1 when absent). */
  readonly lmes = new Map<string, number>();
  mirrors: SourceMirrorInfo[] = [];
  readonly calls: string[] = [];
  /** While set, ListOffsets answers only once it resolves (a slow source). */
  listOffsetsGate: Promise<void> | undefined;
  constructor(readonly cluster: KafkaCluster) {}
  async clusterId(): Promise<string> {
    return this.cluster.clusterId;
  }
  async listOffsets(topic: string, partition: number, timestamp: bigint): Promise<bigint> {
    this.calls.push(`listOffsets ${topic}-${partition} ${timestamp}`);
    await this.listOffsetsGate;
    const log = this.cluster.leaderFor(topic, partition).replica(topic, partition)!.log;
    return timestamp === -2n ? log.logStartOffset : log.highWatermark;
  }
  async lastMirrorEpoch(topicId: Uuid, partition: number): Promise<number> {
    this.calls.push(`lastMirrorEpoch ${partition}`);
    return this.lmes.get(`${topicId}:${partition}`) ?? -1;
  }
  async listMirrors(): Promise<SourceMirrorInfo[]> {
    this.calls.push("listMirrors");
    return this.mirrors;
  }
  describeTopics(): never {
    throw new Error("not used by the coordinator");
  }
  partitionLeaders(): never {
    throw new Error("not used by the coordinator");
  }
  async endOffsetForEpoch(topic: string, partition: number, leaderEpoch: number) {
    this.calls.push(`endOffsetForEpoch ${topic}-${partition} ${leaderEpoch}`);
    const answer = this.cluster
      .leaderFor(topic, partition)
      .replica(topic, partition)!
      .log.endOffsetForEpoch(leaderEpoch);
    return { leaderEpoch: answer.epoch, endOffset: answer.endOffset };
  }
  fetch(): never {
    throw new Error("not used by the coordinator");
  }
  listGroupOffsets(): never {
    throw new Error("not used by the coordinator");
  }
  describeAcls(): never {
    throw new Error("not used by the coordinator");
  }
}

/** A StateLog wrapper whose appends can be made to fail (and that counts them). */
export class FlakyStateLog implements StateLog {
  failWith: Error | undefined;
  /** Appends go through, then fail with this once replicated (a timeout whose write landed all the same). */
  failAfterAppendWith: Error | undefined;
  appends = 0;
  constructor(readonly inner: EmbeddedStateLog) {}
  get partition(): number {
    return this.inner.partition;
  }
  isLeaderAt(epoch: number): boolean {
    return this.inner.isLeaderAt(epoch);
  }
  append(records: { key: Buffer; value: Buffer | null }[], leaderEpoch: number): Promise<void> {
    this.appends++;
    if (this.failWith) return Promise.reject(this.failWith);
    const after = this.failAfterAppendWith;
    if (after) return this.inner.append(records, leaderEpoch).then(() => Promise.reject(after));
    return this.inner.append(records, leaderEpoch);
  }
  readAll() {
    return this.inner.readAll();
  }
  hasUncommittedTail(): boolean {
    return this.inner.hasUncommittedTail();
  }
}

/** Hooks a test puts on the destination's replicas (to crash a broker between two steps). */
export interface ReplicaHooks {
  beforeControlBatch?: (topic: string, type: number | undefined) => void;
  afterControlBatch?: (topic: string, type: number | undefined) => void;
  beforeFollowersTruncated?: (topic: string) => void;
}

/** The destination adapter with test hooks on its replicas. */
class HookedDestination extends EmbeddedDestination {
  hooks: ReplicaHooks = {};
  override replica(brokerId: number, topic: string, partition: number): LocalReplica | undefined {
    const r = super.replica(brokerId, topic, partition);
    if (r === undefined) return undefined;
    const hooks = this.hooks;
    return Object.assign(Object.create(r) as LocalReplica, {
      appendControlBatch(batch: Buffer) {
        const type = controlTypeOf(new RecordBatch(batch));
        hooks.beforeControlBatch?.(topic, type);
        r.appendControlBatch(batch);
        hooks.afterControlBatch?.(topic, type);
      },
      followersTruncated() {
        hooks.beforeFollowersTruncated?.(topic);
        return r.followersTruncated();
      },
    });
  }
}

/** Lets queued promise continuations run (test-side only: src never touches the event loop). */
export function flush(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

export const MIRROR = "m1";
export const TOPIC = "orders";

/**
 * Two embedded clusters on one manual clock: the destination (3 brokers, `__mirror_state` with
 * `statePartitions` partitions, a coordinator runtime per broker) and a 1-broker source holding `orders`.
 */
export async function mirrorEnv(
  options: {
    statePartitions?: number;
    lingerMs?: number;
    inspection?: InspectionHub;
    /** Where the coordinators' warnings go (default: nowhere). */
    warn?: (message: string) => void;
  } = {},
) {
  const clock = new ManualClock(1_700_000_000_000);
  const scheduler = new ManualScheduler(clock);
  const random = new SeededRandom(7);
  const dest = KafkaCluster.start({ brokers: 3, clock, scheduler, random: new SeededRandom(42) });
  const source = KafkaCluster.start({ brokers: 1, clock, scheduler, random: new SeededRandom(99) });
  const numStatePartitions = options.statePartitions ?? 3;
  ensureMirrorStateTopic(dest, numStatePartitions);
  const destination = new HookedDestination(dest);
  const fakeSource = new FakeSource(source);
  const fetchers = new Map<number, FakeFetcherManager>();
  const fetcherOf = (id: number) => {
    let f = fetchers.get(id);
    if (!f) {
      f = new FakeFetcherManager(id);
      fetchers.set(id, f);
    }
    return f;
  };
  const stateLogs = new Map<string, FlakyStateLog>();
  const router = new MirrorCoordinatorRouter(destination, numStatePartitions, random);
  const runtimes = new Map<number, CoordinatorRuntime>();
  const startRuntime = (brokerId: number) => {
    const rt = new CoordinatorRuntime({
      brokerId,
      cluster: dest,
      destination,
      stateLogFor: (p) => {
        const log = new FlakyStateLog(new EmbeddedStateLog(dest, brokerId, p));
        stateLogs.set(`${brokerId}:${p}`, log);
        return log;
      },
      sources: () => fakeSource,
      sourceClusterId: () => source.clusterId,
      fetchers: fetcherOf,
      clock,
      random,
      scheduler,
      numStatePartitions,
      lingerMs: options.lingerMs ?? 10,
      warn: options.warn ?? (() => {}),
      ...(options.inspection ? { inspection: options.inspection } : {}),
    });
    rt.start();
    runtimes.set(brokerId, rt);
    router.register(rt);
    return rt;
  };

  /** Runs scheduled steps and promise continuations until nothing is due within `ms` more virtual ms. */
  const settle = async (ms = 0) => {
    const end = clock.now() + ms;
    for (let i = 0; i < 200_000; i++) {
      await flush();
      if (scheduler.run(0) > 0) continue;
      await flush();
      if (scheduler.run(0) > 0) continue;
      if (clock.now() >= end) return;
      scheduler.run(1);
    }
    throw new Error("settle: the system did not quiesce");
  };

  /** Crashes a destination broker and its coordinator runtime (the process dies). */
  const crash = (brokerId: number) => {
    runtimes.get(brokerId)?.close();
    runtimes.delete(brokerId);
    router.unregister(brokerId);
    dest.crashBroker(brokerId);
  };

  await settle(100);
  for (const id of dest.runningBrokers()) startRuntime(id);
  await settle(100);

  /** Creates `orders` on the source (leader epoch raised to `sourceEpoch`) and the mirror topic on the destination. */
  const createTopic = async (sourceEpoch = 5) => {
    const topicId = source.controller.createTopic({ name: TOPIC, numPartitions: 1, replicationFactor: 1 });
    source.controller.bumpLeaderEpochs([{ topic: TOPIC, partition: 0, minLeaderEpoch: sourceEpoch }]);
    destination.createMirrorTopic({
      name: TOPIC,
      topicId,
      numPartitions: 1,
      replicationFactor: 3,
      configs: { "mirror.name": MIRROR },
    });
    await settle(100);
    const key: MirrorPartitionKey = { mirror: MIRROR, topic: TOPIC, topicId, partition: 0 };
    return key;
  };

  /** Copies the source's batches past the destination's log end, as a fetcher would (stop before `upTo`). */
  const copyFromSource = async (upTo?: bigint) => {
    const leader = destination.leaderOf(TOPIC, 0);
    const replica = destination.replica(leader, TOPIC, 0)!;
    const from = replica.logEndOffset();
    const srcLog = source.leaderFor(TOPIC, 0).replica(TOPIC, 0)!.log;
    for (const b of srcLog.batches()) {
      if (b.baseOffset < from) continue;
      if (upTo !== undefined && b.baseOffset >= upTo) break;
      replica.appendAsIs(b.buffer);
    }
    await settle(100);
  };

  /**
   * Starts `key` (START: PREPARING, MIRRORING), copies the source's batches when `copy`, then fails it over
   * (STOP): STOPPED, writable. Each command is given a second to settle.
   */
  const startThenStop = async (key: MirrorPartitionKey, options: { copy?: boolean } = {}) => {
    void router.command(key, { type: "START" });
    await settle(1000);
    if (options.copy) await copyFromSource();
    void router.command(key, { type: "STOP" });
    await settle(1000);
  };

  /** Produces to the source partition as a client would (idempotent or transactional when given a producer). */
  const produceToSource = async (
    values: string[],
    producer: {
      producerId?: bigint;
      producerEpoch?: number;
      baseSequence?: number;
      isTransactional?: boolean;
    } = {},
  ) => {
    const batch = recordBatch(values, producer);
    const leader = source.leaderFor(TOPIC, 0);
    if (producer.isTransactional === true) return appendSourceTransactional(leader, TOPIC, 0, batch);
    const res = await leader.produce({ topic: TOPIC, partition: 0, acks: 1, batch });
    return res.baseOffset;
  };

  /** Appends a COMMIT or ABORT marker for a producer on the source; returns its offset. */
  const endTxnOnSource = (producerId: bigint, commit: boolean) => {
    const info = source.leaderFor(TOPIC, 0).appendControlBatch(
      TOPIC,
      0,
      encodeEndTxnMarkerBatch({
        type: commit ? ControlRecordType.COMMIT : ControlRecordType.ABORT,
        producerId,
        producerEpoch: 0,
        coordinatorEpoch: 0,
        timestamp: BigInt(clock.now()),
      }),
    );
    return info.firstOffset!;
  };

  return {
    clock,
    scheduler,
    random,
    dest,
    source,
    destination,
    fakeSource,
    fetchers,
    fetcherOf,
    stateLogs,
    router,
    runtimes,
    startRuntime,
    settle,
    crash,
    createTopic,
    copyFromSource,
    startThenStop,
    produceToSource,
    endTxnOnSource,
    numStatePartitions,
    /** The batches of the destination's `orders` leader. */
    destBatches: () => {
      const leader = destination.leaderOf(TOPIC, 0);
      return [...dest.broker(leader)!.replica(TOPIC, 0)!.log.batches()];
    },
    /** The destination broker leading the `__mirror_state` partition that owns `key`. */
    coordinatorBroker: (key: MirrorPartitionKey) =>
      destination.leaderOf(MIRROR_STATE_TOPIC, runtimes.values().next().value!.statePartitionOf(key)),
    /** Committed state of one partition as `describe` returns it. */
    stateOf: (key: MirrorPartitionKey) =>
      router
        .describe(key.mirror)
        .find((v) => v.key.topicId === key.topicId && v.key.partition === key.partition),
  };
}

/** A client-style batch of string values. */
export function recordBatch(
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
      timestampDelta: 0n,
      key: null,
      value: Buffer.from(v),
      headers: [],
    })),
  });
}

/** Control type of each control batch of a log, with its producer id. */
export function controlBatches(
  batches: readonly RecordBatch[],
): { type: number | undefined; producerId: bigint }[] {
  return batches
    .filter((b) => b.isControl)
    .map((b) => ({ type: controlTypeOf(b), producerId: b.producerId }));
}
