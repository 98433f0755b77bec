import type { IsolationLevel } from "@cluster-mirror/log";
import { KafkaError } from "@cluster-mirror/protocol";
import { ClusterError } from "../errors";
import { shownValue } from "../shown-value";
import type { TopicPartition } from "../transaction-coordinator";
import {
  checkRunConfig,
  checkSubscribeArguments,
  checkTopicPartitionsArgument,
} from "./consumer-argument-checks";
import type { ClientContext } from "./kafka";
import { offsetArgument, partitionArgument, topicArgument } from "./offset-argument";
import { decodeFetch } from "./records";
import { isRetriable, Retrier, type RetryOptions, sleep } from "./retry";
import type { KafkaMessage, TopicPartitionOffsetAndMetadata } from "./types";

/** kafkajs's consumer settings (plus `isolation`, accepted beside kafkajs's `readUncommitted`). */
export interface ConsumerConfig {
  groupId: string;
  /** The coordinator removes a member silent this long, ms (default 30000). */
  sessionTimeout?: number;
  /** kafkajs's `readUncommitted` (default false: read_committed, as kafkajs). */
  readUncommitted?: boolean;
  /** Overrides `readUncommitted`. */
  isolation?: IsolationLevel;
  /** Bytes per fetch round over all partitions (default 10 MiB). */
  maxBytes?: number;
  /** Bytes per partition per fetch (default 1 MiB); the first batch is returned even if larger. */
  maxBytesPerPartition?: number;
  /** How long `run` waits for new data before fetching again, ms (default 5000). */
  maxWaitTimeInMs?: number;
  retry?: RetryOptions;
}

/** kafkajs's `subscribe` argument. */
export interface ConsumerSubscribeTopics {
  topic?: string | RegExp;
  topics?: (string | RegExp)[];
  fromBeginning?: boolean;
}

/** kafkajs's `Batch`. */
export interface Batch {
  topic: string;
  partition: number;
  highWatermark: string;
  messages: KafkaMessage[];
  isEmpty(): boolean;
  firstOffset(): string | null;
  lastOffset(): string;
  offsetLag(): string;
  offsetLagLow(): string;
}

/** kafkajs's `EachMessagePayload`. */
export interface EachMessagePayload {
  topic: string;
  partition: number;
  message: KafkaMessage;
  heartbeat(): Promise<void>;
  pause(): () => void;
}

/** kafkajs's `EachBatchPayload`. */
export interface EachBatchPayload {
  batch: Batch;
  resolveOffset(offset: string): void;
  heartbeat(): Promise<void>;
  pause(): () => void;
  commitOffsetsIfNecessary(): Promise<void>;
  uncommittedOffsets(): { topics: { topic: string; partitions: { partition: number; offset: string }[] }[] };
  isRunning(): boolean;
  isStale(): boolean;
}

/** kafkajs's `run` argument. */
export interface ConsumerRunConfig {
  autoCommit?: boolean;
  eachBatchAutoResolve?: boolean;
  eachMessage?: (payload: EachMessagePayload) => Promise<void>;
  eachBatch?: (payload: EachBatchPayload) => Promise<void>;
}

/** A record returned by `poll`, with its partition. */
export interface PolledMessage {
  topic: string;
  partition: number;
  message: KafkaMessage;
}

/** kafkajs's consumer event names (the ones this consumer emits). */
export const ConsumerEvents = {
  GROUP_JOIN: "consumer.group_join",
  COMMIT_OFFSETS: "consumer.commit_offsets",
  CRASH: "consumer.crash",
} as const;
/** A consumer event name. */
export type ConsumerEventName = (typeof ConsumerEvents)[keyof typeof ConsumerEvents];
/** An event as kafkajs delivers it. */
export interface ConsumerEvent {
  type: ConsumerEventName;
  timestamp: number;
  payload: Record<string, unknown>;
}

interface PartitionState {
  topic: string;
  partition: number;
  /** Next offset to fetch. */
  position: bigint;
  /** Leader epoch of the last batch fetched (committed beside the offset), -1 if none yet. */
  positionEpoch: number;
  /** What the application has processed: the offset to commit and its epoch. */
  resolved: { offset: bigint; leaderEpoch: number } | undefined;
  /** The last committed offset this consumer knows of. */
  committed: bigint | undefined;
  highWatermark: bigint;
  /** Bumped by `seek`, so a batch being delivered sees it went stale. */
  seeks: number;
}

interface FetchedBatch {
  state: PartitionState;
  messages: KafkaMessage[];
  /** Epoch to commit with each message's offset + 1. */
  leaderEpoch: number;
  seeks: number;
}

const key = (topic: string, partition: number) => `${topic}:${partition}`;

/**
 * A kafkajs-shaped group consumer on the embedded cluster. Membership goes through the group coordinator
 * (JoinGroup/Heartbeat/LeaveGroup, with the assignment computed server side); a partition resumes from the
 * group's committed offset, else from the earliest or latest offset per `fromBeginning`. Records are
 * fetched from each partition's leader; control records are never delivered, and read_committed drops
 * aborted transactions. Offsets are committed with the leader epoch of the last record consumed.
 *
 * `run` loops on the cluster's scheduler (real time with the `EventLoopScheduler`; step by step with a
 * `ManualScheduler`); `poll` does one fetch round and returns its records, for tests that drive the
 * consumer themselves.
 */
export class Consumer {
  private readonly retrier: Retrier;
  private readonly isolation: IsolationLevel;
  private readonly subscriptions: { topic: string | RegExp; fromBeginning: boolean }[] = [];
  private member: { memberId: string; generationId: number } | undefined;
  private subscriptionChanged = false;
  private assigned: TopicPartition[] = [];
  private readonly states = new Map<string, PartitionState>();
  private readonly pendingSeeks = new Map<string, bigint>();
  private readonly pausedKeys = new Set<string>();
  private readonly listeners = new Map<string, Set<(event: ConsumerEvent) => void>>();
  private connected = false;
  private running = false;
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  private throttledUntil = 0;
  private lastThrottle = 0;

  /** The event names, as kafkajs's `consumer.events`. */
  readonly events = ConsumerEvents;

  constructor(
    private readonly client: ClientContext,
    private readonly config: ConsumerConfig,
  ) {
    this.retrier = new Retrier(config.retry ?? client.retry, client.scheduler, client.random);
    this.isolation = config.isolation ?? (config.readUncommitted ? "read_uncommitted" : "read_committed");
  }

  /** Connects (nothing to open in process); ClusterClosedError once the cluster is closed. */
  async connect(): Promise<void> {
    this.client.cluster.ensureOpen("connect a consumer");
    this.connected = true;
  }

  /** Stops `run` and leaves the group, so the others are rebalanced at once. */
  async disconnect(): Promise<void> {
    await this.stop();
    if (this.member) {
      const { memberId } = this.member;
      this.member = undefined;
      try {
        // A closed cluster has no group to leave.
        if (!this.client.cluster.isClosed)
          this.client.handler.leaveGroup(this.client.request, { groupId: this.config.groupId, memberId });
      } catch {
        // Already removed (session expired): nothing to leave.
      }
    }
    this.states.clear();
    this.assigned = [];
    this.connected = false;
  }

  /** Adds topics (names, or regular expressions matched against the topics existing now). */
  async subscribe(args: ConsumerSubscribeTopics): Promise<void> {
    // As kafkajs (src/consumer/index.js), before the arguments: its running consumer group keeps the
    // topics it started with. Rejoined with the new topics before.
    if (this.running) {
      throw new ClusterError(
        "INVALID_REQUEST",
        "consumer.subscribe(args): Cannot subscribe to topic while consumer is running: call consumer.stop() first, subscribe, then consumer.run() again",
      );
    }
    checkSubscribeArguments(args);
    const topics = [...(args.topics ?? []), ...(args.topic ? [args.topic] : [])];
    if (topics.length === 0) throw new ClusterError("INVALID_REQUEST", "subscribe needs a topic or topics");
    for (const topic of topics)
      this.subscriptions.push({ topic, fromBeginning: args.fromBeginning ?? false });
    if (this.member) this.subscriptionChanged = true;
  }

  /**
   * Starts the consume loop; resolves once it is running (as kafkajs). Called again while it runs, it
   * changes nothing and resolves, before looking at `config`: kafkajs (src/consumer/index.js) only logs
   * "consumer#run was called, but the consumer is already running" (an in-process client writes no log).
   */
  async run(config: ConsumerRunConfig = {}): Promise<void> {
    this.checkConnected();
    if (this.running) return;
    checkRunConfig(config);
    this.running = true;
    this.loop = this.runLoop(config);
  }

  /** Stops the consume loop (the member stays in the group until `disconnect`). */
  async stop(): Promise<void> {
    this.running = false;
    this.wake?.();
    await this.loop;
    this.loop = undefined;
  }

  /**
   * One fetch round, as a step on the cluster's scheduler: joins or heartbeats the group, then fetches
   * once from every assigned, unpaused partition. Returns the records in partition order; the positions move past them (commit with
   * `commitOffsets()`).
   */
  async poll(): Promise<PolledMessage[]> {
    this.checkConnected();
    // The round runs as a scheduler step, after what is already due (replication, markers).
    await sleep(this.client.scheduler, 0);
    const batches = await this.fetchRound();
    const out: PolledMessage[] = [];
    for (const b of batches) {
      for (const message of b.messages)
        out.push({ topic: b.state.topic, partition: b.state.partition, message });
      const last = b.messages[b.messages.length - 1];
      if (last) b.state.resolved = { offset: BigInt(last.offset) + 1n, leaderEpoch: b.leaderEpoch };
    }
    return out;
  }

  /**
   * Commits offsets: the given ones, or else the processed position of every assigned partition.
   * Each carries the leader epoch of the last record consumed below it (-1 when unknown).
   */
  async commitOffsets(offsets?: TopicPartitionOffsetAndMetadata[]): Promise<void> {
    this.client.cluster.ensureOpen("commit offsets");
    // A disconnected consumer left its group: its commit would land as a standalone commit, under the group's
    // current members (Kafka's KafkaConsumer: "This consumer has already been closed.").
    this.checkConnected();
    if (offsets !== undefined && !Array.isArray(offsets)) {
      throw new ClusterError(
        "INVALID_REQUEST",
        `consumer.commitOffsets(offsets): pass an array such as [{ topic: "orders", partition: 0, offset: "42" }], or nothing for the processed offsets; got ${shownValue(offsets)}`,
      );
    }
    const list =
      offsets?.map((o) => {
        const where = "consumer.commitOffsets(offsets)";
        topicArgument(o?.topic, where);
        partitionArgument(o.partition, where);
        const offset = offsetArgument(o.offset, where);
        const state = this.states.get(key(o.topic, o.partition));
        const leaderEpoch = state?.resolved?.offset === offset ? state.resolved.leaderEpoch : -1;
        return {
          topic: o.topic,
          partition: o.partition,
          offset,
          leaderEpoch,
          ...(o.metadata ? { metadata: o.metadata } : {}),
        };
      }) ?? this.uncommitted();
    if (list.length === 0) return;
    this.client.handler.offsetCommit(this.client.request, {
      groupId: this.config.groupId,
      ...(this.member ? { memberId: this.member.memberId, generationId: this.member.generationId } : {}),
      offsets: list,
    });
    for (const o of list) {
      const state = this.states.get(key(o.topic, o.partition));
      if (state) state.committed = o.offset;
    }
    this.emit(ConsumerEvents.COMMIT_OFFSETS, {
      groupId: this.config.groupId,
      memberId: this.member?.memberId,
      groupGenerationId: this.member?.generationId,
      topics: list.map((o) => ({ topic: o.topic, partition: o.partition, offset: String(o.offset) })),
    });
  }

  /** Moves a partition's position; applied at once if assigned, else when it is. */
  seek(args: { topic: string; partition: number; offset: string }): void {
    const where = "consumer.seek(args)";
    topicArgument(args?.topic, where);
    partitionArgument(args.partition, where);
    const offset = offsetArgument(args.offset, where, [-2n, -1n]);
    const state = this.states.get(key(args.topic, args.partition));
    if (state && offset >= 0n) {
      state.position = offset;
      state.positionEpoch = -1;
      state.resolved = { offset, leaderEpoch: -1 };
      state.seeks++;
    } else {
      this.pendingSeeks.set(key(args.topic, args.partition), offset);
    }
  }

  /** Stops fetching from partitions (all of a topic when `partitions` is omitted). */
  pause(topics: { topic: string; partitions?: number[] }[] = []): void {
    checkTopicPartitionsArgument(topics, "consumer.pause(topics)");
    for (const k of this.keysOf(topics)) this.pausedKeys.add(k);
  }

  /** Resumes paused partitions. */
  resume(topics: { topic: string; partitions?: number[] }[] = []): void {
    checkTopicPartitionsArgument(topics, "consumer.resume(topics)");
    for (const k of this.keysOf(topics)) this.pausedKeys.delete(k);
  }

  /** Paused partitions by topic. */
  paused(): { topic: string; partitions: number[] }[] {
    const byTopic = new Map<string, number[]>();
    for (const k of this.pausedKeys) {
      const cut = k.lastIndexOf(":");
      const topic = k.slice(0, cut);
      byTopic.set(topic, [...(byTopic.get(topic) ?? []), Number(k.slice(cut + 1))]);
    }
    return [...byTopic].map(([topic, partitions]) => ({
      topic,
      partitions: partitions.sort((a, b) => a - b),
    }));
  }

  /** The partitions currently assigned to this member. */
  assignment(): TopicPartition[] {
    return this.assigned.map((tp) => ({ ...tp }));
  }

  /** This member's id and generation, once it joined. */
  membership(): { memberId: string; generationId: number } | undefined {
    return this.member && { ...this.member };
  }

  /** The throttle time of the last fetch answer (ms); the next fetch waits that long. */
  get lastThrottleTimeMs(): number {
    return this.lastThrottle;
  }

  /** kafkajs's `describeGroup` of this consumer's group. */
  async describeGroup() {
    this.client.cluster.ensureOpen("describe a group");
    const [g] = this.client.handler.describeGroups(this.client.request, [this.config.groupId]);
    if (g?.error) throw g.error;
    return g!;
  }

  /** Listens to an event; returns the function that removes the listener. */
  on(eventName: ConsumerEventName, listener: (event: ConsumerEvent) => void): () => void {
    const set = this.listeners.get(eventName) ?? new Set();
    set.add(listener);
    this.listeners.set(eventName, set);
    return () => set.delete(listener);
  }

  // ---- the loop -----------------------------------------------------------------------------------------

  private async runLoop(config: ConsumerRunConfig): Promise<void> {
    const autoCommit = config.autoCommit ?? true;
    let retries = 0;
    while (this.running) {
      // Each round starts on the scheduler, so a loop never starves the rest of the cluster.
      await sleep(this.client.scheduler, 0);
      if (!this.running) break;
      try {
        const batches = await this.fetchRound();
        retries = 0;
        let delivered = 0;
        for (const b of batches) {
          if (!this.running) break;
          if (b.messages.length === 0) continue;
          delivered += b.messages.length;
          if (config.eachBatch) await this.deliverBatch(b, config);
          else await this.deliverMessages(b, config);
        }
        if (autoCommit) await this.autoCommit();
        if (delivered === 0 && this.running) await this.idle();
      } catch (error) {
        if (isRetriable(error) && retries < 5) {
          await sleep(this.client.scheduler, this.retrier.backoff(retries++));
          continue;
        }
        this.running = false;
        if (autoCommit) await this.autoCommit().catch(() => {});
        this.emit(ConsumerEvents.CRASH, { error, groupId: this.config.groupId, restart: false });
      }
    }
  }

  private async deliverMessages(b: FetchedBatch, config: ConsumerRunConfig): Promise<void> {
    const { state } = b;
    let stoppedEarly = false;
    for (const message of b.messages) {
      if (
        !this.running ||
        state.seeks !== b.seeks ||
        this.pausedKeys.has(key(state.topic, state.partition))
      ) {
        stoppedEarly = true;
        break;
      }
      try {
        await config.eachMessage!({
          topic: state.topic,
          partition: state.partition,
          message,
          heartbeat: async () => this.heartbeat(),
          pause: () => this.pauseOne(state),
        });
      } catch (error) {
        // Redeliver from the failed record next time.
        this.rewind(state, BigInt(message.offset));
        throw error;
      }
      if (state.seeks === b.seeks) {
        state.resolved = { offset: BigInt(message.offset) + 1n, leaderEpoch: b.leaderEpoch };
      }
    }
    if (stoppedEarly && state.seeks === b.seeks && state.resolved && state.resolved.offset < state.position) {
      // Stopped early (paused or stopped): fetch again from the first record not processed.
      this.rewind(state, state.resolved.offset);
    }
  }

  private async deliverBatch(b: FetchedBatch, config: ConsumerRunConfig): Promise<void> {
    const { state } = b;
    const last = b.messages[b.messages.length - 1]!;
    const batch: Batch = {
      topic: state.topic,
      partition: state.partition,
      highWatermark: String(state.highWatermark),
      messages: b.messages,
      isEmpty: () => b.messages.length === 0,
      firstOffset: () => b.messages[0]?.offset ?? null,
      lastOffset: () => last.offset,
      offsetLag: () => String(state.highWatermark - 1n - BigInt(last.offset)),
      offsetLagLow: () => String(state.highWatermark - 1n - BigInt(b.messages[0]?.offset ?? last.offset)),
    };
    const resolve = (offset: string) => {
      if (state.seeks === b.seeks)
        state.resolved = { offset: BigInt(offset) + 1n, leaderEpoch: b.leaderEpoch };
    };
    try {
      await config.eachBatch!({
        batch,
        resolveOffset: resolve,
        heartbeat: async () => this.heartbeat(),
        pause: () => this.pauseOne(state),
        commitOffsetsIfNecessary: async () => this.autoCommit(),
        uncommittedOffsets: () => ({
          topics: this.uncommitted().map((o) => ({
            topic: o.topic,
            partitions: [{ partition: o.partition, offset: String(o.offset) }],
          })),
        }),
        isRunning: () => this.running,
        isStale: () => state.seeks !== b.seeks,
      });
    } catch (error) {
      if (state.seeks === b.seeks)
        this.rewind(state, state.resolved?.offset ?? BigInt(b.messages[0]!.offset));
      throw error;
    }
    if (config.eachBatchAutoResolve ?? true) resolve(last.offset);
  }

  /** Waits for new data on any fetched partition, at most maxWaitTimeInMs, or until woken. */
  private async idle(): Promise<void> {
    const { cluster } = this.client;
    const maxWait = this.config.maxWaitTimeInMs ?? 5000;
    const waits: Promise<void>[] = [];
    for (const state of this.states.values()) {
      if (this.pausedKeys.has(key(state.topic, state.partition))) continue;
      const meta = cluster.controller.image.partition(state.topic, state.partition);
      const leader = meta && meta.leader >= 0 ? cluster.broker(meta.leader) : undefined;
      if (!leader?.replica(state.topic, state.partition)?.isLeader) continue;
      // New data: the high watermark passes what this consumer saw (it also moves when a marker lands).
      const seen = state.highWatermark > state.position ? state.highWatermark : state.position;
      waits.push(leader.waitForData(state.topic, state.partition, seen, maxWait));
    }
    if (waits.length === 0) waits.push(sleep(this.client.scheduler, Math.min(maxWait, 100)));
    const woken = new Promise<void>((resolve) => {
      this.wake = resolve;
    });
    await Promise.race([...waits, woken]);
    this.wake = undefined;
  }

  private async autoCommit(): Promise<void> {
    try {
      await this.commitOffsets();
    } catch (error) {
      // A partition of a deleted topic (UNKNOWN_TOPIC_OR_PARTITION): kafkajs takes that as stale metadata,
      // refreshes it and rejoins with a fresh offset manager, so the deleted partitions' positions are
      // dropped and the others are committed at the next commit. Here: drop them and commit the rest now.
      if (
        error instanceof KafkaError &&
        error.errorName === "UNKNOWN_TOPIC_OR_PARTITION" &&
        this.forgetVanishedPartitions()
      ) {
        await this.autoCommit();
        return;
      }
      // A rebalance moved on (stale generation, unknown member): the next heartbeat rejoins; the records
      // since the last commit are delivered again to whoever owns the partition (at least once).
      if (
        !(error instanceof KafkaError) ||
        !["ILLEGAL_GENERATION", "UNKNOWN_MEMBER_ID", "REBALANCE_IN_PROGRESS"].includes(error.errorName)
      ) {
        throw error;
      }
    }
  }

  // ---- one fetch round ----------------------------------------------------------------------------------

  private async fetchRound(): Promise<FetchedBatch[]> {
    // A running loop ends (CRASH, not retriable) when the cluster closes under it.
    this.client.cluster.ensureOpen("consume");
    this.ensureMember();
    const wait = this.throttledUntil - this.client.cluster.clock.now();
    if (wait > 0) await sleep(this.client.scheduler, wait);
    const { cluster } = this.client;
    const maxBytes = this.config.maxBytes ?? 10 * 1024 * 1024;
    const perPartition = this.config.maxBytesPerPartition ?? 1024 * 1024;
    let budget = maxBytes;
    const out: FetchedBatch[] = [];
    for (const tp of this.assigned) {
      const k = key(tp.topic, tp.partition);
      if (this.pausedKeys.has(k) || budget <= 0) continue;
      let state: PartitionState;
      try {
        state = this.states.get(k) ?? this.initPosition(tp);
        const leader = cluster.leaderFor(tp.topic, tp.partition);
        let response: ReturnType<typeof leader.fetch>;
        try {
          response = leader.fetch({
            ...this.client.request,
            topic: tp.topic,
            partition: tp.partition,
            fetchOffset: state.position,
            maxBytes: Math.min(perPartition, budget),
            isolationLevel: this.isolation,
          });
        } catch (error) {
          if (error instanceof KafkaError && error.errorName === "OFFSET_OUT_OF_RANGE") {
            state.position = this.resetOffset(tp);
            state.positionEpoch = -1;
            continue;
          }
          throw error;
        }
        budget -= response.sizeInBytes;
        state.highWatermark = response.highWatermark;
        if (response.throttleTimeMs > 0) {
          this.lastThrottle = response.throttleTimeMs;
          const until = cluster.clock.now() + response.throttleTimeMs;
          if (until > this.throttledUntil) this.throttledUntil = until;
        } else this.lastThrottle = 0;
        const decoded = decodeFetch(
          response.recordSlices,
          state.position,
          this.isolation,
          response.abortedTransactions,
        );
        if (decoded.nextOffset !== undefined && decoded.nextOffset > state.position) {
          state.position = decoded.nextOffset;
          state.positionEpoch = decoded.lastLeaderEpoch;
        }
        out.push({
          state,
          messages: decoded.messages,
          leaderEpoch: decoded.lastLeaderEpoch,
          seeks: state.seeks,
        });
      } catch (error) {
        // Leader moving or down: skip the partition this round; anything else (ACLs...) is the caller's.
        if (!isRetriable(error)) throw error;
      }
    }
    return out;
  }

  /** Joins the group if needed, else heartbeats; adopts a new assignment when the generation moved. */
  private ensureMember(): void {
    const { handler, request } = this.client;
    const groupId = this.config.groupId;
    if (this.member && !this.subscriptionChanged) {
      try {
        const hb = handler.heartbeat(request, { groupId, memberId: this.member.memberId });
        if (hb.generationId !== this.member.generationId) {
          this.member.generationId = hb.generationId;
          this.adopt(hb.assignment);
        }
        return;
      } catch (error) {
        if (!(error instanceof KafkaError) || error.errorName !== "UNKNOWN_MEMBER_ID") throw error;
        this.member = undefined; // the session expired: join again as a new member
      }
    }
    const topics = this.subscribedTopics();
    const joined = handler.joinGroup(request, {
      groupId,
      ...(this.member ? { memberId: this.member.memberId } : {}),
      topics,
      sessionTimeoutMs: this.config.sessionTimeout ?? 30_000,
    });
    this.subscriptionChanged = false;
    this.member = { memberId: joined.memberId, generationId: joined.generationId };
    this.adopt(joined.assignment);
    this.emit(ConsumerEvents.GROUP_JOIN, {
      groupId,
      memberId: joined.memberId,
      generationId: joined.generationId,
      memberAssignment: Object.fromEntries(
        [...new Set(joined.assignment.map((tp) => tp.topic))].map((t) => [
          t,
          joined.assignment.filter((tp) => tp.topic === t).map((tp) => tp.partition),
        ]),
      ),
    });
  }

  private adopt(assignment: readonly TopicPartition[]): void {
    this.assigned = assignment.map((tp) => ({ ...tp }));
    const keep = new Set(this.assigned.map((tp) => key(tp.topic, tp.partition)));
    // Positions of partitions that moved to another member are dropped: they resume from the committed
    // offset if they come back.
    for (const k of [...this.states.keys()]) if (!keep.has(k)) this.states.delete(k);
  }

  private initPosition(tp: TopicPartition): PartitionState {
    const k = key(tp.topic, tp.partition);
    let position: bigint;
    let positionEpoch = -1;
    let committed: bigint | undefined;
    const seek = this.pendingSeeks.get(k);
    const stored = this.client.handler.offsetFetch(this.client.request, this.config.groupId, [tp])[0];
    if (stored) committed = stored.offset;
    if (seek !== undefined && seek >= 0n) {
      position = seek;
      this.pendingSeeks.delete(k);
    } else if (seek !== undefined) {
      position = this.client.handler.listOffsets(
        this.client.request,
        tp.topic,
        tp.partition,
        seek,
        this.isolation,
      ).offset;
      this.pendingSeeks.delete(k);
    } else if (stored) {
      position = stored.offset;
      positionEpoch = stored.leaderEpoch;
    } else {
      position = this.resetOffset(tp);
    }
    const state: PartitionState = {
      topic: tp.topic,
      partition: tp.partition,
      position,
      positionEpoch,
      resolved: undefined,
      committed,
      highWatermark: -1n,
      seeks: 0,
    };
    this.states.set(k, state);
    return state;
  }

  /** auto.offset.reset: earliest with `fromBeginning`, else latest (the LSO for read_committed). */
  private resetOffset(tp: TopicPartition): bigint {
    const fromBeginning = this.subscriptions.some(
      (s) => s.fromBeginning && (typeof s.topic === "string" ? s.topic === tp.topic : s.topic.test(tp.topic)),
    );
    return this.client.handler.listOffsets(
      this.client.request,
      tp.topic,
      tp.partition,
      fromBeginning ? -2n : -1n,
      this.isolation,
    ).offset;
  }

  private subscribedTopics(): string[] {
    const existing = [...this.client.cluster.controller.image.topicIdsByName.keys()];
    const names = new Set<string>();
    for (const s of this.subscriptions) {
      if (typeof s.topic === "string") names.add(s.topic);
      else for (const t of existing) if (s.topic.test(t)) names.add(t);
    }
    return [...names].sort();
  }

  private uncommitted(): { topic: string; partition: number; offset: bigint; leaderEpoch: number }[] {
    const out: { topic: string; partition: number; offset: bigint; leaderEpoch: number }[] = [];
    for (const s of this.states.values()) {
      if (s.resolved && s.resolved.offset !== s.committed) {
        out.push({ topic: s.topic, partition: s.partition, ...s.resolved });
      }
    }
    return out;
  }

  /** Drops the positions of partitions the cluster no longer has; true if any were. */
  private forgetVanishedPartitions(): boolean {
    const image = this.client.cluster.controller.image;
    let forgot = false;
    for (const [k, s] of [...this.states]) {
      if (image.partition(s.topic, s.partition) === undefined) {
        this.states.delete(k);
        forgot = true;
      }
    }
    return forgot;
  }

  private heartbeat(): void {
    if (!this.member) return;
    this.ensureMember();
  }

  private rewind(state: PartitionState, offset: bigint): void {
    state.position = offset;
    state.seeks++;
  }

  private pauseOne(state: PartitionState): () => void {
    const k = key(state.topic, state.partition);
    this.pausedKeys.add(k);
    return () => this.pausedKeys.delete(k);
  }

  private keysOf(topics: { topic: string; partitions?: number[] }[]): string[] {
    return topics.flatMap(({ topic, partitions }) => {
      const all =
        partitions ??
        this.client.cluster.controller.image.topic(topic)?.partitions.map((p) => p.partition) ??
        [];
      return all.map((p) => key(topic, p));
    });
  }

  private emit(type: ConsumerEventName, payload: Record<string, unknown>): void {
    const event = { type, timestamp: this.client.cluster.clock.now(), payload };
    for (const l of this.listeners.get(type) ?? []) l(event);
  }

  private checkConnected(): void {
    this.client.cluster.ensureOpen("consume");
    if (!this.connected)
      throw new ClusterError("INVALID_REQUEST", "the consumer is disconnected; call connect() first");
  }
}
