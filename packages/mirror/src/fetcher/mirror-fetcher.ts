import type { Cancel, Clock, Random, Scheduler } from "@cluster-mirror/cluster";
import { divergenceTruncationOffset } from "@cluster-mirror/log";
import {
  type FetcherEffect,
  type FetcherEvent,
  type FetcherState,
  type FetchPartitionResult,
  fetcherMachine,
  fetcherStateOf,
  type RetryBackoffOptions,
} from "@cluster-mirror/machines";
import { CorruptRecordError, KafkaError, RecordBatch, RecordBatchLayout } from "@cluster-mirror/protocol";
import { type Actor, type AnyActorRef, createActor } from "xstate";
import type {
  FetcherEvents,
  LocalReplica,
  SourceCluster,
  SourceFetchPartition,
  SourceFetchPartitionResult,
} from "../ports";
import { type FetchedBatchScan, prefixEnd, scanFetchedBatches, slicesPrefix } from "./batch-scan";
import type { FetchPartitionState } from "./fetch-partition-state";
import { compareRewrittenRanges, uncheckedLogRewrites } from "./log-rewrite-check";

const { BATCH_LENGTH_OFFSET, LOG_OVERHEAD } = RecordBatchLayout;

/** The fetcher machine's named effects: the actions a `MirrorFetcher` provides. */
const FETCHER_EFFECTS = [
  "sendFetch",
  "reportPartitionFailures",
  "reroutePartitions",
  "truncateToDivergingEpoch",
  "truncateFullyAndStartAt",
  "partitionsRemoved",
  "scheduleBackoff",
  "scheduleThrottle",
  "scheduleFetchWait",
  "closeFetcher",
] as const satisfies readonly FetcherEffect["type"][];

/**
 * Source answers after which Kafka's consumer refreshes its metadata and fetches again, as after
 * NOT_LEADER_OR_FOLLOWER (`FetchCollector.handleInitializeErrors`): the partition's replica on that broker
 * is offline (KAFKA_STORAGE_ERROR: a failed log dir, whose partitions the controller moves to other
 * replicas) or absent (REPLICA_NOT_AVAILABLE). The chart re-routes them as a leader that is not available
 * there; failed instead, the partition would be routed back to the broker the leader cache still names,
 * and fail again until out of retries. (The chart's own KAFKA_STORAGE_ERROR is the destination's failure.)
 */
const SOURCE_REPLICA_GONE: ReadonlySet<string> = new Set(["KAFKA_STORAGE_ERROR", "REPLICA_NOT_AVAILABLE"]);

/** The fetcher of each fetcher actor, for the effects the actor requests. */
const FETCHERS = new WeakMap<AnyActorRef, MirrorFetcher>();

/**
 * The fetcher machine with its effects provided once (providing builds a new machine: per fetcher, a load
 * that starts 100 fetchers spent a third of a second on it). Each effect is collected during the
 * transition by the actor's `MirrorFetcher` and run once the actor has handled the event (see `send`).
 */
const fetcherLogic = fetcherMachine.provide({
  actions: Object.fromEntries(
    FETCHER_EFFECTS.map((type) => [
      type,
      ({ self }: { self: AnyActorRef }, params: unknown) => FETCHERS.get(self)?.requested({ type, params }),
    ]),
  ),
});

/** One partition of a fetch request: its state when the request was built, and what was asked. */
interface RequestedPartition {
  readonly id: string;
  readonly state: FetchPartitionState;
  readonly request: SourceFetchPartition;
}

/** A partition's fetched batches, scanned once its answer came (before anything was appended). */
interface AnswerScan {
  readonly scan: FetchedBatchScan;
  /** The destination leader epoch the scan's epoch limit was read from. */
  readonly localEpoch: number;
}

/**
 * The next fetch, sent as soon as the previous response was decoded (before its batches were appended),
 * from the log ends the response implies. Used only if the fetch the chart asks for next is exactly this
 * one: the same partitions in the same order, each at the same offset and epochs, from the same source.
 */
interface PipelinedFetch {
  readonly requested: readonly RequestedPartition[];
  readonly generations: readonly number[];
  readonly maxBytes: number;
  readonly source: SourceCluster;
  readonly answer: ReturnType<SourceCluster["fetch"]>;
}

/** Fetch sizes and timings of one fetch round (read on every round, so changes apply at once). */
export interface FetchRoundConfig {
  /** Response size limit over all partitions (`fetch.response.max.bytes`). */
  maxBytes: number;
  /** Per-partition limit (`fetch.max.bytes` in KIP-1279's mirror configs). */
  partitionMaxBytes: number;
  /**
   * How long a round that brings nothing lasts at least: what the source held the fetch (a real Kafka
   * broker long-polls it) counts, the rest is waited here (an embedded source answers at once).
   */
  fetchWaitMaxMs: number;
  /** `fetch.backoff.ms`: the wait after a round that brought nothing when `fetchWaitMaxMs` is 0. */
  fetchBackoffMs: number;
  /** `log.start.offset.sync.enable`: the copy's log start follows the source's. */
  followLogStart: boolean;
}

/** What a fetcher needs from its manager. */
export interface FetcherHost {
  readonly scheduler: Scheduler;
  /** Times a round's fetch: the time the source held it counts to the wait after an empty round. */
  readonly clock: Clock;
  readonly random: Random;
  readonly events: FetcherEvents;
  source(mirror: string): SourceCluster;
  round(mirror: string): FetchRoundConfig;
  /** The destination leader replica of the partition on this broker, or undefined. */
  replica(state: FetchPartitionState): LocalReplica | undefined;
  /**
   * True when the destination throttle applies to the partition and its quota is used up now, or would be
   * once `pendingBytes` more (fetched for throttled partitions, not appended yet) are recorded.
   */
  throttledNow(state: FetchPartitionState, pendingBytes?: number): boolean;
  /** True when `mirror.replication.throttled.replicas` names the partition here: its bytes count to the quota. */
  isThrottledReplica(state: FetchPartitionState): boolean;
  /** Counts appended bytes and batches, and meters them against the destination throttle. */
  recordAppended(state: FetchPartitionState, bytes: number, batches: number): void;
  /** The fetcher no longer fetches these partitions (REMOVE_PARTITIONS acknowledged, or STOP). */
  removed(states: readonly FetchPartitionState[]): void;
  /** The source answered NOT_LEADER_OR_FOLLOWER / FENCED / UNKNOWN_LEADER_EPOCH: route them again. */
  reroute(states: readonly FetchPartitionState[]): void;
  /**
   * Called with each fetcher actor's system when it is created (XState's inspection follows it); returns
   * what to call once the fetcher stopped.
   */
  readonly onActorSystem?: (system: AnyActorRef["system"]) => () => void;
  /** These partitions failed (reported to their actors by the host). */
  failed(states: readonly FetchPartitionState[]): void;
  /** A whole fetch failed (source broker unreachable): the host refreshes source leaders. */
  fetchFailed(fetcher: MirrorFetcher): void;
}

/**
 * One mirror fetcher (spec §3): a mirror's partitions led by one source broker with the same fetcher index.
 * It runs a live `fetcherMachine` actor whose named actions are the effects below: one consumer-style
 * fetch with every fetchable partition, then per partition truncation (diverging epoch, out of range),
 * validation and the as-is append of the validated prefix, re-routing or failing. Every delay goes through
 * the injected scheduler.
 */
export class MirrorFetcher {
  private readonly actor: Actor<typeof fetcherMachine>;
  private readonly detach: (() => void) | undefined;
  /** Effects the actor requested while handling the current event, run after it (in order). */
  private effects: FetcherEffect[] = [];
  private running = false;
  private readonly assigned = new Map<string, FetchPartitionState>();
  private timer: Cancel | undefined;
  private sendTask: Cancel | undefined;
  private rotation = 0;
  /** The next fetch, already sent (see `PipelinedFetch`), or undefined. */
  private pipelined: PipelinedFetch | undefined;
  /**
   * Adds and removes not yet sent to the actor, in order, consecutive ones of a kind merged: sent on the
   * next microtask (or before any other event), so that the partitions of a task (a failover or a pause of
   * thousands) reach the actor as a few ADD_PARTITIONS / REMOVE_PARTITIONS events instead of one each.
   */
  private membership: {
    type: "ADD_PARTITIONS" | "REMOVE_PARTITIONS";
    partitions: string[];
    ids: Set<string>;
  }[] = [];
  private membershipScheduled = false;

  constructor(
    readonly mirror: string,
    readonly sourceBrokerId: number,
    readonly index: number,
    /** The deterministic client id (see `mirrorFetcherClientId`). */
    readonly clientId: string,
    private readonly host: FetcherHost,
    backoff: RetryBackoffOptions,
  ) {
    this.actor = createActor(fetcherLogic, { id: clientId, input: { backoff } });
    FETCHERS.set(this.actor, this);
    this.detach = host.onActorSystem?.(this.actor.system);
    this.actor.start();
  }

  /** An effect the actor requested during its transition (run after it, see `send`). */
  requested(effect: { type: string; params: unknown }): void {
    this.effects.push(effect as FetcherEffect);
  }

  /** The actor's snapshot (adds and removes queued meanwhile delivered first). */
  private get snapshot() {
    this.flushMembership();
    return this.actor.getSnapshot();
  }

  /** The chart state: idle, fetching, waiting, throttled, backingOff or stopped. */
  get state(): FetcherState {
    return fetcherStateOf(this.snapshot);
  }

  /** Ids of the partitions this fetcher fetches. */
  partitionIds(): string[] {
    return [...this.snapshot.context.partitions];
  }

  add(state: FetchPartitionState): void {
    this.assigned.set(state.id, state);
    this.queueMembership("ADD_PARTITIONS", state.id);
  }

  remove(ids: readonly string[]): void {
    for (const id of ids) this.queueMembership("REMOVE_PARTITIONS", id);
  }

  stop(): void {
    this.send({ type: "STOP" });
  }

  private queueMembership(type: "ADD_PARTITIONS" | "REMOVE_PARTITIONS", id: string): void {
    const last = this.membership[this.membership.length - 1];
    if (last?.type === type) {
      if (!last.ids.has(id)) {
        last.ids.add(id);
        last.partitions.push(id);
      }
    } else this.membership.push({ type, partitions: [id], ids: new Set([id]) });
    if (this.membershipScheduled) return;
    this.membershipScheduled = true;
    queueMicrotask(this.sendMembership);
  }

  private readonly sendMembership = (): void => {
    this.membershipScheduled = false;
    this.flushMembership();
  };

  /** Sends the queued adds and removes, in order (before any other event, so the order is kept). */
  private flushMembership(): void {
    while (this.membership.length > 0) {
      const queued = this.membership;
      this.membership = [];
      for (const m of queued) this.deliver({ type: m.type, partitions: m.partitions });
    }
  }

  /**
   * Sends an event to the actor: XState's mailbox handles one at a time, in order (an effect that sends
   * while one is handled queues behind it). A stopped fetcher (its final state) takes no more events.
   * Queued adds and removes go first, so the actor sees every event in the order it was sent.
   */
  private send(event: FetcherEvent): void {
    this.flushMembership();
    this.deliver(event);
  }

  private deliver(event: FetcherEvent): void {
    if (this.actor.getSnapshot().status !== "active") return;
    this.actor.send(event);
    this.runEffects();
  }

  /**
   * Runs the effects the actor requested, after its transition: an effect may drive other actors (a
   * failure reported to a partition's coordinator) or send this fetcher an event, which must not happen
   * inside this actor's own transition. An event an effect sends runs its own effects after these.
   */
  private runEffects(): void {
    if (this.running) return;
    this.running = true;
    try {
      for (let i = 0; i < this.effects.length; i++) this.run(this.effects[i] as FetcherEffect);
    } finally {
      this.effects = [];
      this.running = false;
    }
  }

  private take(ids: readonly string[]): FetchPartitionState[] {
    const out: FetchPartitionState[] = [];
    for (const id of ids) {
      const s = this.assigned.get(id);
      if (!s) continue;
      this.assigned.delete(id);
      out.push(s);
    }
    return out;
  }

  private run(effect: FetcherEffect): void {
    switch (effect.type) {
      case "sendFetch": {
        const { fetchId, partitions } = effect.params;
        this.sendTask = this.host.scheduler.schedule(() => this.doFetch(fetchId, partitions), 0);
        return;
      }
      case "reportPartitionFailures": {
        const failed = this.take(effect.params.failures.map((f) => f.partition));
        for (const s of failed) {
          const error = effect.params.failures.find((f) => f.partition === s.id)?.error ?? "UNKNOWN";
          s.failure ??= {
            message: `${s.key.mirror}: ${s.source.topic}-${s.source.partition} failed on source broker ${this.sourceBrokerId} with ${error}`,
            retryable: true,
          };
        }
        this.host.failed(failed);
        return;
      }
      case "reroutePartitions":
        this.host.reroute(this.take(effect.params.partitions.map((p) => p.partition)));
        return;
      case "truncateToDivergingEpoch":
        this.truncateToDivergingEpoch(effect.params.partition, effect.params.epoch, effect.params.endOffset);
        return;
      case "truncateFullyAndStartAt":
        this.truncateOutOfRange(effect.params.partition);
        return;
      case "partitionsRemoved":
        this.host.removed(this.take(effect.params.partitions));
        return;
      case "scheduleBackoff":
        this.timer = this.host.scheduler.schedule(
          () => this.send({ type: "BACKOFF_ELAPSED" }),
          effect.params.delayMs,
        );
        return;
      case "scheduleThrottle":
        this.timer = this.host.scheduler.schedule(
          () => this.send({ type: "THROTTLE_ELAPSED" }),
          effect.params.delayMs,
        );
        return;
      case "scheduleFetchWait":
        this.timer = this.host.scheduler.schedule(
          () => this.send({ type: "FETCH_WAIT_ELAPSED" }),
          effect.params.delayMs,
        );
        return;
      case "closeFetcher":
        this.timer?.();
        this.sendTask?.();
        this.pipelined = undefined;
        this.detach?.();
        this.host.removed(this.take([...this.assigned.keys()]));
        return;
    }
  }

  private isCurrent(fetchId: number): boolean {
    return this.snapshot.context.inFlight?.fetchId === fetchId;
  }

  /**
   * Builds fetch `fetchId` (a scheduler task) and sends it, unless the fetch sent ahead is exactly it (then
   * its answer is this fetch's); settles it when the answer comes. As soon as an answer is decoded, the
   * next fetch goes out (`sendAhead`) while this one's batches are appended.
   */
  private doFetch(fetchId: number, ids: readonly string[]): void {
    if (!this.isCurrent(fetchId)) return;
    const round = this.host.round(this.mirror);
    const start = ids.length > 0 ? this.rotation++ % ids.length : 0;
    const { requested, local, throttled } = this.buildRequests(ids, start, round);
    const ahead = this.pipelined;
    this.pipelined = undefined;
    const wait = nothingFetchedWaitMs(round);
    if (requested.length === 0) {
      // Nothing to fetch (every partition held or over the destination's quota): wait, as Kafka's fetcher
      // backs off when it has no partition to fetch; throttled when the quota is why.
      this.send({
        type: "FETCH_COMPLETED",
        fetchId,
        results: local,
        throttleTimeMs: throttled ? wait : 0,
        fetchWaitMs: throttled ? 0 : wait,
      });
      return;
    }
    let source: SourceCluster | undefined;
    let answer: ReturnType<SourceCluster["fetch"]>;
    const sentAt = this.host.clock.now();
    try {
      source = this.host.source(this.mirror);
      answer =
        ahead && sameFetch(ahead, requested, round.maxBytes, source)
          ? ahead.answer
          : this.sendFetch(source, round.maxBytes, requested);
    } catch (error) {
      answer = Promise.reject(error);
    }
    answer.then(
      (response) => {
        if (!this.isCurrent(fetchId)) return;
        let results: FetchPartitionResult[];
        let progress: boolean;
        try {
          const answers = byTopicPartition(response.partitions);
          const scans = this.scanAnswers(requested, answers);
          if (source) this.sendAhead(requested, answers, scans, response.throttleTimeMs, source, round);
          ({ results, progress } = this.settle(requested, answers, scans));
        } catch (error) {
          this.pipelined = undefined;
          this.fail(fetchId, error);
          return;
        }
        this.send({
          type: "FETCH_COMPLETED",
          fetchId,
          results: [...local, ...results],
          throttleTimeMs: response.throttleTimeMs,
          // A source that long-polls (Kafka holds an empty fetch up to fetch.max.wait.ms) already waited:
          // waiting the full time again would leave records that arrive meanwhile behind for that long.
          fetchWaitMs: progress ? 0 : Math.max(0, wait - (this.host.clock.now() - sentAt)),
        });
      },
      (error: unknown) => {
        if (this.isCurrent(fetchId)) this.fail(fetchId, error);
      },
    );
  }

  /**
   * The request of a round: each of `ids` from `start` on (the rotation spreads the response's byte limit
   * fairly), except held and destination-throttled partitions, at its log end and latest epoch, or where
   * `ends` says its log will stand. A partition this broker no longer leads is a local failure. `throttled`:
   * some partition was left out because the destination's replication quota is used up.
   */
  private buildRequests(
    ids: readonly string[],
    start: number,
    round: FetchRoundConfig,
    ends?: ReadonlyMap<string, { nextOffset: bigint; epoch: number }>,
    pendingThrottledBytes = 0,
  ): { requested: RequestedPartition[]; local: FetchPartitionResult[]; throttled: boolean } {
    const local: FetchPartitionResult[] = [];
    const requested: RequestedPartition[] = [];
    let throttled = false;
    for (let i = 0; i < ids.length; i++) {
      const id = ids[(start + i) % ids.length]!;
      const s = this.assigned.get(id);
      if (!s || s.held) continue;
      if (this.host.throttledNow(s, pendingThrottledBytes)) {
        throttled = true;
        continue;
      }
      const replica = this.host.replica(s);
      try {
        if (!replica) throw notLeader(s);
        const end = ends?.get(id);
        requested.push({
          id,
          state: s,
          request: {
            topic: s.source.topic,
            partition: s.source.partition,
            fetchOffset: end ? end.nextOffset : replica.logEndOffset(),
            lastFetchedEpoch: end ? end.epoch : replica.latestEpoch(),
            currentLeaderEpoch: s.sourceLeaderEpoch,
            maxBytes: round.partitionMaxBytes,
            topicId: s.key.topicId,
          },
        });
      } catch (error) {
        local.push(this.destinationFailure(s, error));
      }
    }
    return { requested, local, throttled };
  }

  private sendFetch(
    source: SourceCluster,
    maxBytes: number,
    requested: readonly RequestedPartition[],
  ): ReturnType<SourceCluster["fetch"]> {
    return source.fetch({
      clientId: this.clientId,
      brokerId: this.sourceBrokerId,
      maxBytes,
      partitions: requested.map((r) => r.request),
    });
  }

  /**
   * Scans the batches of each partition answered without error (the light scan: boundaries and epochs),
   * once: the append uses the scan, and `sendAhead` the log end it implies.
   */
  private scanAnswers(
    requested: readonly RequestedPartition[],
    answers: ReadonlyMap<string, SourceFetchPartitionResult>,
  ): Map<string, AnswerScan> {
    const scans = new Map<string, AnswerScan>();
    for (const { id, state: s, request } of requested) {
      const answer = answers.get(topicPartition(request.topic, request.partition));
      if (!answer || answer.error || answer.divergingEpoch || answer.recordSlices.length === 0) continue;
      if (rewritesToCheck(s, answer, request.fetchOffset)) continue;
      const replica = this.host.replica(s);
      if (!replica) continue;
      const localEpoch = replica.leaderEpoch();
      scans.set(id, {
        scan: scanFetchedBatches(answer.recordSlices, localEpoch, { verifyCrc: false }),
        localEpoch,
      });
    }
    return scans;
  }

  /**
   * Pipelining: sends the next fetch now, before this response's batches are appended, so that the source
   * prepares it (and the bytes cross the network) while this process appends. It is the request the next
   * round would build for the partitions the chart fetches now, each answered partition asked from the
   * offset after the last whole batch it got, with that batch's epoch as the last fetched epoch: where its
   * log will stand once the append succeeds. Only when every partition was answered cleanly, at least one
   * with batches (a round without data waits before fetching again), and the source did not throttle. The
   * answer is used only if the next round's request turns out to be exactly this one (`sameFetch`), so a
   * failed, partial or diverging append, a removed or re-routed partition, a new leader epoch, a destination
   * throttle or a change of fetch sizes discards it, and nothing is appended twice or out of order.
   */
  private sendAhead(
    requested: readonly RequestedPartition[],
    answers: ReadonlyMap<string, SourceFetchPartitionResult>,
    scans: ReadonlyMap<string, AnswerScan>,
    throttleTimeMs: number,
    source: SourceCluster,
    round: FetchRoundConfig,
  ): void {
    if (throttleTimeMs > 0) return;
    const ends = new Map<string, { nextOffset: bigint; epoch: number }>();
    // Bytes this response brings for throttled partitions, not recorded yet (they are appended after this):
    // the destination throttle of the fetch sent ahead counts them, as the next round's own request would.
    // Otherwise the fetch sent ahead would ask again for partitions that this response's bytes throttle,
    // and be discarded: fetched from the source for nothing, twice the throttled rate on the network.
    let pendingThrottledBytes = 0;
    for (const r of requested) {
      const answer = answers.get(topicPartition(r.request.topic, r.request.partition));
      if (!answer || answer.error || answer.divergingEpoch) return;
      if (rewritesToCheck(r.state, answer, r.request.fetchOffset)) return;
      const scanned = scans.get(r.id);
      if (scanned?.scan.corrupt) return;
      // A held partition appends nothing: its log stays where it is.
      const end = scanned && !r.state.held ? prefixEnd(answer.recordSlices, scanned.scan) : undefined;
      if (!end) continue;
      ends.set(r.id, end);
      if (scanned && this.host.isThrottledReplica(r.state)) pendingThrottledBytes += scanned.scan.validBytes;
    }
    if (ends.size === 0) return;
    // The partitions the chart's next fetch carries (its fetchable ones), in the next round's rotation.
    const { partitions, truncating } = this.snapshot.context;
    const ids = truncating.length === 0 ? partitions : partitions.filter((p) => !truncating.includes(p));
    if (ids.length === 0) return;
    const next = this.buildRequests(ids, this.rotation % ids.length, round, ends, pendingThrottledBytes);
    if (next.local.length > 0 || next.requested.length === 0) return;
    let answer: ReturnType<SourceCluster["fetch"]>;
    try {
      answer = this.sendFetch(source, round.maxBytes, next.requested);
    } catch (error) {
      answer = Promise.reject(error);
    }
    // Unused (discarded), its failure is nobody's: used, the round it became handles it.
    answer.catch(() => {});
    this.pipelined = {
      requested: next.requested,
      generations: next.requested.map((r) => r.state.generation),
      maxBytes: round.maxBytes,
      source,
      answer,
    };
  }

  private fail(fetchId: number, error: unknown): void {
    this.send({ type: "FETCH_FAILED", fetchId, message: messageOf(error), random: this.host.random.next() });
    this.host.fetchFailed(this);
  }

  /** Handles each partition's answer: records the lag inputs, appends, and classifies for the chart. */
  private settle(
    requested: readonly RequestedPartition[],
    answers: ReadonlyMap<string, SourceFetchPartitionResult>,
    scans: ReadonlyMap<string, AnswerScan>,
  ): { results: FetchPartitionResult[]; progress: boolean } {
    const results: FetchPartitionResult[] = [];
    let progress = false;
    const live = new Set(this.snapshot.context.partitions);
    for (const { id, state: s, request } of requested) {
      const answer = answers.get(topicPartition(request.topic, request.partition));
      // Removed while the fetch was in flight: nothing more is appended for it.
      if (!answer || !live.has(id) || this.assigned.get(id) !== s) continue;
      const check =
        !answer.error || answer.error.errorName === "OFFSET_OUT_OF_RANGE"
          ? rewritesToCheck(s, answer, request.fetchOffset)
          : undefined;
      if (check) {
        // The source's own mirror cut its log where this one holds batches: they may differ from what the
        // source holds there now with the same epochs, which no diverging epoch shows, or the source may
        // hold nothing there now (OFFSET_OUT_OF_RANGE past its end). The chart truncates the partition
        // (`truncateToDivergingEpoch`) before fetching again; the comparison decides where.
        s.logRewriteCheck = check;
        if (!answer.error && answer.highWatermark >= 0n) s.sourceHighWatermark = answer.highWatermark;
        const at = check.rewrites.reduce((min, r) => (r.offset < min ? r.offset : min), request.fetchOffset);
        results.push({
          partition: id,
          error: null,
          divergingEpoch: { epoch: request.lastFetchedEpoch, endOffset: Number(at) },
        });
        if (this.isNewTruncationAnswer(s, `rewritten:${check.newestId}:${request.fetchOffset}`))
          progress = true;
        continue;
      }
      if (answer.error) {
        const name = answer.error.errorName;
        if (name === "OFFSET_OUT_OF_RANGE") {
          s.outOfRange = { fetchOffset: request.fetchOffset, logStartOffset: answer.logStartOffset };
          // The same answer again (the truncation rule kept what the source may still give back): fetch
          // after the usual wait, not at once.
          if (this.isNewTruncationAnswer(s, `oor:${request.fetchOffset}`)) progress = true;
        } else {
          s.failure = { message: answer.error.message, retryable: answer.error.retriable, errorName: name };
        }
        results.push({ partition: id, error: SOURCE_REPLICA_GONE.has(name) ? "LEADER_NOT_AVAILABLE" : name });
        continue;
      }
      if (answer.highWatermark >= 0n) s.sourceHighWatermark = answer.highWatermark;
      if (answer.divergingEpoch) {
        s.diverging = answer.divergingEpoch;
        const { epoch, endOffset } = answer.divergingEpoch;
        results.push({ partition: id, error: null, divergingEpoch: { epoch, endOffset: Number(endOffset) } });
        const local = `${request.fetchOffset}:${request.lastFetchedEpoch}`;
        if (this.isNewTruncationAnswer(s, `diverging:${epoch}:${endOffset}:${local}`)) progress = true;
        continue;
      }
      if (answer.logRewrites) {
        // Cuts of the source at or above this log's end: nothing held here was removed.
        s.checkedLogRewrite = uncheckedLogRewrites(
          answer.logRewrites,
          s.checkedLogRewrite,
          request.fetchOffset,
        ).newestId;
      }
      if (s.held || answer.recordSlices.length === 0) {
        if (!s.held) this.followLogStart(s, answer.logStartOffset);
        results.push({ partition: id, error: null });
        continue;
      }
      const replica = this.host.replica(s);
      try {
        if (!replica) throw notLeader(s);
        const scanned = scans.get(id);
        const outcome = this.append(
          s,
          replica,
          request.fetchOffset,
          answer.recordSlices,
          !answer.sharedBytes,
          scanned?.localEpoch === replica.leaderEpoch() ? scanned.scan : undefined,
        );
        if (outcome === "corrupt") results.push({ partition: id, error: "CORRUPT_MESSAGE" });
        else {
          this.followLogStart(s, answer.logStartOffset);
          if (outcome === "progress") {
            progress = true;
            s.lastTruncationAnswer = undefined;
          }
          results.push({ partition: id, error: null });
        }
      } catch (error) {
        results.push(this.destinationFailure(s, error));
      }
    }
    return { results, progress };
  }

  /**
   * Records deleted on the source (DeleteRecords, retention) go here too: the log start follows the
   * source's, within what this cluster's in-sync replicas hold, as a Kafka follower's follows its leader's.
   * A purge on the primary (a poison record, personal data) thus reaches the copy while it mirrors.
   */
  private followLogStart(s: FetchPartitionState, sourceLogStart: bigint): void {
    const replica = this.host.replica(s);
    if (!replica) return;
    try {
      if (sourceLogStart <= replica.logStartOffset()) return;
      if (this.host.round(s.key.mirror).followLogStart) replica.followSourceLogStart(sourceLogStart);
    } catch {
      // Not the leader any more (or stopped): the next leader's fetcher follows on its next answer.
    }
  }

  /**
   * True unless the partition got this very truncation answer (same source answer, same local log end
   * and epoch) last time: then the truncation changed nothing and fetching again at once would spin.
   */
  private isNewTruncationAnswer(s: FetchPartitionState, answer: string): boolean {
    const fresh = s.lastTruncationAnswer !== answer;
    s.lastTruncationAnswer = answer;
    return fresh;
  }

  /**
   * Validates the partition's fetched batches and appends the valid prefix as it is: the response's own
   * bytes when they are ours to keep (`owned`), otherwise a copy the append makes. A corrupt batch is
   * fetched once more; corrupt again, it fails the partition. `scanned`: the light scan already made.
   */
  private append(
    s: FetchPartitionState,
    replica: LocalReplica,
    fetchOffset: bigint,
    records: readonly Buffer[],
    owned: boolean,
    scanned: FetchedBatchScan | undefined,
  ): "progress" | "none" | "corrupt" {
    // Kafka's follower rule: an answer is used only while the log still ends where the fetch asked from.
    // A log that moved meanwhile (truncated, another leader replica, a pipelined fetch whose predecessor
    // stored less than it announced) would get these records after a gap; the next fetch asks again.
    if (replica.logEndOffset() !== fetchOffset) return "none";
    const localEpoch = replica.leaderEpoch();
    // Fast path: boundaries and epochs here, everything else (CRC-32C, header, offset order) in the as-is
    // append, which validates every batch before writing any. Only when it refuses the data is the
    // response scanned in full to append the valid prefix, so each byte's CRC is computed once.
    let scan = scanned ?? scanFetchedBatches(records, localEpoch, { verifyCrc: false });
    if (scan.maxEpoch >= 0) this.host.events.epochObserved(s.key, scan.maxEpoch, localEpoch);
    let appended = false;
    if (scan.validBytes > 0 && scan.firstBaseOffset !== undefined) {
      try {
        appended = this.appendPrefix(s, replica, fetchOffset, records, scan, owned);
      } catch (error) {
        // Out-of-order batches are the source's fault (corrupt data), unless the full scan finds the
        // response well formed: then the first offset is below the local log end, the caller's to handle.
        if (!(error instanceof CorruptRecordError) && !isUnexpectedAppendOffset(error)) throw error;
        scan = scanFetchedBatches(records, localEpoch);
        if (scan.corrupt === undefined) throw error;
        if (scan.validBytes > 0) appended = this.appendPrefix(s, replica, fetchOffset, records, scan, owned);
      }
    }
    s.destinationLogEndOffset = replica.logEndOffset();
    if (scan.corrupt) {
      if (s.corruptAt === scan.corrupt.at) {
        s.failure = {
          message: `${s.key.mirror}: ${s.key.topic}-${s.key.partition}: the source sent a corrupt batch twice (${scan.corrupt.error.message}); the partition is retried from its local log end`,
          retryable: true,
        };
        return "corrupt";
      }
      s.corruptAt = scan.corrupt.at;
      return "progress"; // fetch it again at once
    }
    s.corruptAt = undefined;
    return appended ? "progress" : "none";
  }

  /** Appends the scan's prefix as it is: the response's bytes when `owned`, else a copy made by the append. */
  private appendPrefix(
    s: FetchPartitionState,
    replica: LocalReplica,
    fetchOffset: bigint,
    records: readonly Buffer[],
    scan: FetchedBatchScan,
    owned: boolean,
  ): boolean {
    if (scan.firstBaseOffset === undefined) return false;
    // Kafka's follower rule: the source's log start can fall inside a batch (DeleteRecords); an empty
    // local log then starts at that batch's base offset so the batch is stored whole.
    const leo = replica.logEndOffset();
    if (
      scan.firstBaseOffset < leo &&
      leo === fetchOffset &&
      leo === replica.logStartOffset() &&
      (scan.firstLastOffset ?? -1n) >= leo
    ) {
      // The fast scan did not check this batch's CRC: check it before its offsets move the local log.
      const first = records.find((slice) => slice.length > 0)!;
      new RecordBatch(first.subarray(0, LOG_OVERHEAD + first.readInt32BE(BATCH_LENGTH_OFFSET))).validate();
      replica.truncateFullyAndStartAt(scan.firstBaseOffset);
    }
    const prefix = slicesPrefix(records, scan.validBytes);
    // Response bytes are never written to again: the log may keep them as they are. Bytes the source
    // still uses (copyOnFetch) are copied once by the append, as a socket read would copy them.
    replica.appendAsIs(prefix, { transferOwnership: owned });
    s.bytesMirrored += scan.validBytes;
    s.batchesMirrored += scan.batchCount;
    this.host.recordAppended(s, scan.validBytes, scan.batchCount);
    return true;
  }

  private destinationFailure(s: FetchPartitionState, error: unknown): FetchPartitionResult {
    if (error instanceof CorruptRecordError) {
      s.failure = { message: error.message, retryable: true };
      return { partition: s.id, error: "CORRUPT_MESSAGE" };
    }
    const retryable = error instanceof KafkaError ? error.retriable || isNotLeader(error) : true;
    s.failure = {
      message: `${s.key.mirror}: ${s.key.topic}-${s.key.partition}: ${messageOf(error)}`,
      retryable,
    };
    // A destination-side error is never re-routed on the source: the chart treats it as fatal.
    return { partition: s.id, error: "KAFKA_STORAGE_ERROR" };
  }

  private truncateToDivergingEpoch(id: string, epoch: number, endOffset: number): void {
    const s = this.assigned.get(id);
    if (s?.logRewriteCheck) {
      this.truncateRewritten(id, s, s.logRewriteCheck);
      return;
    }
    const replica = s && this.host.replica(s);
    try {
      if (s && replica) {
        const d = s.diverging?.epoch === epoch ? s.diverging : { epoch, endOffset: BigInt(endOffset) };
        // Kafka's follower rule (KIP-320): the smaller of the source's end for that epoch and ours; an
        // UNDEFINED answer keeps everything below the high watermark (never back to the log start).
        const target = divergenceTruncationOffset(
          {
            logEndOffset: replica.logEndOffset(),
            highWatermark: replica.highWatermark(),
            endOffsetForEpoch: (e) => replica.endOffsetForEpoch(e),
          },
          d,
        );
        // Also at the log end: an epoch entry no local batch reached is dropped.
        replica.truncateTo(target);
        s.destinationLogEndOffset = replica.logEndOffset();
        s.diverging = undefined;
      }
    } catch {
      // The destination lost the partition; the next fetch reports it.
    }
    this.send({ type: "TRUNCATION_COMPLETED", partition: id });
  }

  /**
   * The source's own mirror cut its log (`SourceFetchPartitionResult.logRewrites`): compares what the local
   * log holds in the rewritten ranges with the source and truncates it where they part, then records the
   * rewrites as checked. Where the source holds nothing yet, the local batches stay and a later answer
   * compares from there; when the source does not answer, nothing is truncated or recorded: the next
   * answer asks for the comparison again.
   */
  private truncateRewritten(
    id: string,
    s: FetchPartitionState,
    check: NonNullable<FetchPartitionState["logRewriteCheck"]>,
  ): void {
    s.logRewriteCheck = undefined;
    const generation = s.generation;
    const replica = this.host.replica(s);
    const target = {
      source: this.host.source(this.mirror),
      clientId: this.clientId,
      brokerId: this.sourceBrokerId,
      topic: s.source.topic,
      partition: s.source.partition,
      topicId: s.key.topicId,
    };
    const compared = s.logRewriteComparedTo;
    const from = compared?.newestId === check.newestId ? compared.offset : undefined;
    (replica
      ? compareRewrittenRanges(target, replica, check.rewrites, from)
      : Promise.reject(new Error("no local replica"))
    )
      .then(({ cut, pendingFrom }) => {
        if (!replica || this.assigned.get(id) !== s || s.generation !== generation) return;
        if (cut !== undefined && cut < replica.logEndOffset()) replica.truncateTo(cut);
        if (pendingFrom !== undefined) {
          // The source holds nothing there yet: keep what this log holds, compare again on a later answer.
          s.logRewriteComparedTo = { newestId: check.newestId, offset: pendingFrom };
        } else {
          s.checkedLogRewrite = check.newestId;
          s.logRewriteComparedTo = undefined;
        }
        s.destinationLogEndOffset = replica.logEndOffset();
      })
      .catch(() => {
        // Source or destination unavailable: the next response asks again.
      })
      .finally(() => this.truncationCompleted(id, s, generation));
  }

  /**
   * OFFSET_OUT_OF_RANGE: below the source's log start, start over there. Past its end (the source lost
   * records, e.g. a leader that recovered shorter), truncate to the source's end only down to the high
   * watermark: what this cluster committed stays, and the next fetch (after the usual wait) asks again,
   * so the diverging-epoch answer decides once the source writes again. A log holding no records follows
   * the source's end.
   */
  private truncateOutOfRange(id: string): void {
    const s = this.assigned.get(id);
    if (!s) {
      this.send({ type: "TRUNCATION_COMPLETED", partition: id });
      return;
    }
    const generation = s.generation;
    const oor = s.outOfRange;
    s.outOfRange = undefined;
    const source = this.host.source(this.mirror);
    const { topic, partition } = s.source;
    const resolve = async (): Promise<{ fullyAt?: bigint; truncateTo?: bigint }> => {
      if (oor && oor.logStartOffset >= 0n && oor.fetchOffset < oor.logStartOffset)
        return { fullyAt: oor.logStartOffset };
      // By name, with the mirrored topic's id: a topic created again under the name is refused, not read.
      const logStart = await source.listOffsets(topic, partition, -2n, s.key.topicId);
      if (!oor || oor.fetchOffset < logStart) return { fullyAt: logStart };
      const end = await source.listOffsets(topic, partition, -1n, s.key.topicId);
      return oor.fetchOffset > end ? { truncateTo: end } : {};
    };
    resolve()
      .then((plan) => {
        if (this.assigned.get(id) !== s || s.generation !== generation) return;
        const replica = this.host.replica(s);
        if (!replica) return;
        if (plan.fullyAt !== undefined) replica.truncateFullyAndStartAt(plan.fullyAt);
        else if (plan.truncateTo !== undefined) {
          const leo = replica.logEndOffset();
          const hw = replica.highWatermark();
          const empty = leo === replica.logStartOffset();
          const floor = hw < leo ? hw : leo;
          const target = empty || plan.truncateTo > floor ? plan.truncateTo : floor;
          if (target < leo) replica.truncateTo(target);
        }
        s.destinationLogEndOffset = replica.logEndOffset();
      })
      .catch(() => {
        // Source or destination unavailable: the next fetch tells again.
      })
      .finally(() => this.truncationCompleted(id, s, generation));
  }

  /**
   * Ends the truncation the partition's assignment `generation` waited for. Not once the partition was
   * removed meanwhile: its removal ended the wait, and were it added again, the new assignment's own
   * truncation (if any) is the one the chart waits for. Ended by this late answer, that assignment would
   * fetch again before its truncation ran, meet the same answer and start a second truncation, which then
   * cuts what was mirrored after the first (committed records, gone until fetched again).
   */
  private truncationCompleted(id: string, s: FetchPartitionState, generation: number): void {
    if (this.assigned.get(id) !== s || s.generation !== generation) return;
    this.send({ type: "TRUNCATION_COMPLETED", partition: id });
  }
}

/**
 * The source's log rewrites the partition must compare its log with before appending this answer (see
 * `uncheckedLogRewrites`), or undefined when there are none.
 */
function rewritesToCheck(
  s: FetchPartitionState,
  answer: SourceFetchPartitionResult,
  fetchOffset: bigint,
): NonNullable<FetchPartitionState["logRewriteCheck"]> | undefined {
  if (!answer.logRewrites) return undefined;
  const { unchecked, newestId } = uncheckedLogRewrites(answer.logRewrites, s.checkedLogRewrite, fetchOffset);
  return unchecked.length > 0 ? { rewrites: unchecked, newestId } : undefined;
}

/**
 * How long to wait before fetching again after a round that brought nothing: `fetch.wait.max.ms`, or at 0
 * `fetch.backoff.ms` (Kafka's fetcher backs off `replica.fetch.backoff.ms` when it has nothing to fetch),
 * and at least 1 ms: fetching again at once would spin, and under a manual scheduler never let time move.
 */
function nothingFetchedWaitMs(round: FetchRoundConfig): number {
  return Math.max(1, round.fetchWaitMaxMs > 0 ? round.fetchWaitMaxMs : round.fetchBackoffMs);
}

/** The key of a topic-partition in a response's answers. */
function topicPartition(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}

function byTopicPartition(
  answers: readonly SourceFetchPartitionResult[],
): Map<string, SourceFetchPartitionResult> {
  return new Map(answers.map((a) => [topicPartition(a.topic, a.partition), a]));
}

/** True when the fetch sent ahead is exactly the fetch built now (see `PipelinedFetch`). */
function sameFetch(
  ahead: PipelinedFetch,
  requested: readonly RequestedPartition[],
  maxBytes: number,
  source: SourceCluster,
): boolean {
  if (ahead.source !== source || ahead.maxBytes !== maxBytes) return false;
  if (ahead.requested.length !== requested.length) return false;
  for (let i = 0; i < requested.length; i++) {
    const a = ahead.requested[i]!;
    const b = requested[i]!;
    if (a.id !== b.id || a.state !== b.state || ahead.generations[i] !== b.state.generation) return false;
    const x = a.request;
    const y = b.request;
    if (
      x.topic !== y.topic ||
      x.partition !== y.partition ||
      x.fetchOffset !== y.fetchOffset ||
      x.lastFetchedEpoch !== y.lastFetchedEpoch ||
      x.currentLeaderEpoch !== y.currentLeaderEpoch ||
      x.maxBytes !== y.maxBytes ||
      x.topicId !== y.topicId
    )
      return false;
  }
  return true;
}

function notLeader(s: FetchPartitionState): KafkaError {
  return new KafkaError(
    "NOT_LEADER_OR_FOLLOWER",
    6,
    true,
    `this broker no longer leads ${s.key.topic}-${s.key.partition} on the destination; the coordinator of its new leader takes the mirror partition over`,
  );
}

function isNotLeader(error: KafkaError): boolean {
  return error.errorName === "NOT_LEADER_OR_FOLLOWER";
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function isUnexpectedAppendOffset(error: unknown): boolean {
  return error instanceof KafkaError && error.errorName === "UNEXPECTED_APPEND_OFFSET";
}
