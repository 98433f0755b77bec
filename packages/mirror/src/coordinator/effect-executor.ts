import {
  type Cancel,
  type Clock,
  ClusterError,
  type Random,
  type Scheduler,
  ZERO_UUID,
} from "@cluster-mirror/cluster";
import type { MirrorPartitionEffect, MirrorPartitionEvent } from "@cluster-mirror/machines";
import {
  ControlRecordType,
  encodeEndTxnMarkerBatch,
  encodeMirrorPidResetBatch,
  KafkaError,
} from "@cluster-mirror/protocol";
import { isLive } from "../destination/live-transactions";
import { MIRROR_NAME_CONFIG, parseMirrorNameConfig } from "../metadata/mirror-topics";
import type {
  DestinationCluster,
  FetcherManager,
  LocalReplica,
  MirrorPartitionKey,
  SourceCluster,
} from "../ports";
import { DestinationLeaderReplica } from "./destination-leader-replica";
import type { FaultEndsWhileLoading } from "./fault-ends-while-loading";
import type { LeaderCatchUps } from "./leader-catch-ups";
import { NoDestinationLeaderError } from "./no-destination-leader-error";
import type { PartitionRuntime } from "./partition-runtime";
import { leaderChangedSince, type RefusingLeader, refusingLeader } from "./refusing-leader";
import { lastMirrorEpochRecord, partitionStateRecord } from "./state-records";
import type { AppendOutcome, StateWriteBatcher } from "./state-write-batcher";

/** Default interval between two `followersTruncated()` checks while waiting for the ISR. */
export const DEFAULT_ISR_POLL_INTERVAL_MS = 100;

/** What the executor of one shard uses: the ports, the shard's writer and timers, and its fencing check. */
export interface EffectExecutorContext {
  readonly brokerId: number;
  readonly destination: DestinationCluster;
  readonly sources: (mirror: string) => SourceCluster;
  readonly sourceClusterId: (mirror: string) => string;
  /** The fetcher manager of a destination broker; undefined when that broker is not running. */
  readonly fetchers: (brokerId: number) => FetcherManager | undefined;
  readonly clock: Clock;
  readonly random: Random;
  readonly scheduler: Scheduler;
  readonly writer: StateWriteBatcher;
  readonly isrPollIntervalMs: number;
  /** False once the shard lost its `__mirror_state` leadership: data-path effects must not run. */
  readonly stillCoordinator: () => boolean;
  /** Called once a `LastMirrorEpochs` record committed (null: tombstoned). */
  readonly onLastMirrorEpochCommitted: (partition: PartitionRuntime, lme: number | null) => void;
  /** Counts the retry timers that wait for a lagging leader's catch-up (see {@link LeaderCatchUps}). */
  readonly leaderCatchUps?: LeaderCatchUps;
  /** Whether a mirror's source did not answer this broker's last metadata refresh (see `onSourceBack`). */
  readonly sourceDown?: (mirror: string) => boolean;
  /** What ended while the shard loaded, heard by no coordinator (see {@link FaultEndsWhileLoading}). */
  readonly endedWhileLoading?: FaultEndsWhileLoading;
}

const TIMERS = ["retry", "commitRetry", "isr", "sourceBusy", "controller"] as const;
type Timer = (typeof TIMERS)[number];

/**
 * An armed timer: how to cancel it and what it runs when it fires; for a retry timer, what its FAILED waits
 * out (see {@link RetryWaitsFor}) and the destination leader that refused its step, if one did.
 */
interface ArmedTimer {
  cancel: Cancel;
  fire: () => void;
  waitsFor?: RetryWait;
  refused?: RefusingLeader;
}

/**
 * What a FAILED partition's retry waits out, when the step's error that failed it says so: the destination
 * partition's leader (the step found none, or the one it ran on stopped leading meanwhile:
 * NoDestinationLeaderError), the source (BROKER_NOT_AVAILABLE, a lost connection) or the destination's
 * controller (NOT_CONTROLLER: a step that asks it was refused for the whole {@link CONTROLLER_WAIT_MS}).
 * `EffectExecutor.retryNow` fires the retry early only once that ended; a FAILED whose leader was elected, or
 * whose controller came back, before it committed retries at once (for a step the leader itself refused, only
 * once that leader changed: see `leaderChangedSince`).
 */
export type RetryWaitsFor = "leader" | "source" | "controller";

/**
 * What an armed retry timer waits out: a known {@link RetryWaitsFor}, or, for a FAILED this coordinator
 * loaded (`PartitionRuntime.loadedStateEpoch`), the end of a fault it may wait out: `loaded`, the
 * controller's or the source's return, and `loadedLeaderless` (its partition had no running leader as it
 * loaded), also a leader elected. What it waits out was known to the coordinator that committed it, in
 * memory only (the record keeps no cause: spec §6): a coordinator that took over (the `__mirror_state`
 * leader crashed or moved) waited the whole backoff, an hour after a controller or a leader long back. Only
 * real ends: the controller and the source are said back only after they were seen gone, while a leader is
 * elected at every move (a rolling restart moves them all), and a retry that fails again uses one attempt of
 * the budget. One early retry per loaded FAILED at most (further ends before it runs bring no other), whose
 * failure records a precise cause, as any step's does here. Otherwise its wait starts over, as Kafka's
 * group coordinator arms every loaded member's session timeout afresh (`GroupMetadataManager.onLoaded`);
 * what it re-drives at once, as the transaction coordinator sends a loaded PrepareCommit's markers
 * (`TransactionStateManager.loadTransactionsForTxnTopicPartition`), is work already decided.
 */
type RetryWait = RetryWaitsFor | "loaded" | "loadedLeaderless";

/**
 * The source's answers to an LME lookup that mean "retry shortly": PREPARING waits them out.
 * COORDINATOR_NOT_AVAILABLE is the source's mirror coordinator moving (its `__mirror_state` leader
 * restarting, an election): retriable in Kafka, whose clients find the coordinator again and retry, as for
 * COORDINATOR_LOAD_IN_PROGRESS (the admin client's CoordinatorStrategy treats the two alike).
 */
const SOURCE_BUSY: ReadonlySet<string> = new Set([
  "MIRROR_FAILOVER_IN_PROGRESS",
  "COORDINATOR_LOAD_IN_PROGRESS",
  "COORDINATOR_NOT_AVAILABLE",
]);
/** How long PREPARING asks a busy source again before it fails (retryable). */
export const SOURCE_BUSY_WAIT_MS = 30_000;
/** How often it asks meanwhile. */
export const SOURCE_BUSY_POLL_MS = 500;

/**
 * The steps that ask the destination's controller and whose answer the chart waits for (STOPPING's leader
 * epoch bump, STOPPED's clearing of the read-only flag, PREPARING's truncation, which the controller records
 * before the leader cuts): refused with NOT_CONTROLLER (no active controller, a KRaft quorum electing one),
 * a step is asked again in place, as Kafka's clients retry it (the admin client's `retry.backoff.ms` 100 ms,
 * growing to `retry.backoff.max.ms` 1 s, KIP-580, until `default.api.timeout.ms` 60 s), instead of failing
 * the partition: each FAILED detour grows the backoff (up to 5 min), so a failover, and a failback waiting
 * for it, went on waiting long after the controller was back (soak `failback` FC_SEED=651). Each step is
 * idempotent (run again from the start, it finds what it did), and a refused one wrote nothing. Not
 * `markReadOnly`, each state's first step: the chart waits for no answer from it, so only its failure stops
 * the steps after it, which must not run before the engine holds the flag (reviewer r5). Except in the
 * states in {@link FLAG_SET_BY_GATE}, whose first awaited step that asks the controller sets the flag itself
 * before it answers: there a refused `markReadOnly` is let go and that step waits for the controller. One
 * step at most waits at a time, so one `controller` timer per partition is enough.
 */
const CONTROLLER_STEPS: ReadonlySet<string> = new Set([
  "checkMirrorLoop",
  "bumpLeaderEpoch",
  "clearReadOnly",
  "truncateToEpoch",
  "truncateFully",
]);
/** The steps that ask the destination's controller: only their NOT_CONTROLLER waits for its return. */
const ASKS_CONTROLLER: ReadonlySet<string> = new Set([...CONTROLLER_STEPS, "markReadOnly"]);
/**
 * The states where the engine may not hold the read-only flag when they begin, and the step that sets it
 * before anything after it runs: PREPARING (a re-add's or failback's, whose flag `mirror.name` set) by its
 * loop check; STOPPING (FAILED's retry of a partition failed again after STOPPED made its topic writable,
 * or a re-add's PREPARING removed) by its leader epoch bump. Before those only steps that need no flag run
 * (the fetcher removed, the LME recorded): the markers and the PID reset come after the bump.
 */
const FLAG_SET_BY_GATE: ReadonlySet<string> = new Set(["PREPARING", "STOPPING"]);
/** How long a step refused with NOT_CONTROLLER is asked again before it fails (retryable). */
export const CONTROLLER_WAIT_MS = 60_000;
/** The first wait before asking again; it doubles up to {@link CONTROLLER_RETRY_BACKOFF_MAX_MS}. */
export const CONTROLLER_RETRY_BACKOFF_MS = 100;
export const CONTROLLER_RETRY_BACKOFF_MAX_MS = 1_000;

/** Data-path effects that answer synchronously (or throw): run without a promise. */
const SYNC_EFFECTS: ReadonlySet<string> = new Set([
  "markReadOnly",
  "clearReadOnly",
  "addFetcher",
  "holdAppends",
  "releaseAppends",
  "abortOpenTransactions",
]);

/**
 * Runs a partition machine's effects against the ports and reports each result, carrying the effect's
 * `stateEpoch`, into the partition's mailbox (one executor per coordinator shard). Any thrown error becomes
 * EFFECT_FAILED (retryable unless the error says `retriable: false`). Effects on the data partition run on
 * the broker that leads it, which may not be this coordinator's broker: that call stands for an RPC.
 */
export class EffectExecutor {
  /**
   * The armed timers, by partition and timer name: how to cancel each, and what it runs when it fires; for a
   * retry timer, what its FAILED waits out and, for a step the destination leader refused, that leader.
   */
  private readonly timers = new Map<string, ArmedTimer>();
  /**
   * For each partition, what the step failure it reported last waits out (see {@link RetryWaitsFor}), with
   * that step's `stateEpoch` and, for a step the destination leader refused, that leader: the FAILED it
   * commits arms its retry timer with it.
   */
  private readonly failureWaits = new WeakMap<
    PartitionRuntime,
    { stateEpoch: number; waitsFor: RetryWaitsFor; refused?: RefusingLeader }
  >();
  /** For each controller step refused with NOT_CONTROLLER: until when it is asked again, and how often so far. */
  private readonly controllerWaits = new WeakMap<MirrorPartitionEffect, { until: number; attempt: number }>();
  /** Effects waiting for the next microtask, as pairs (partition, effect); run in order by one task. */
  private queued: (PartitionRuntime | MirrorPartitionEffect)[] = [];
  private drainScheduled = false;
  /**
   * The leader epoch bumps of the task being drained, as pairs (partition, effect): sent to the controller
   * together once the task's other effects ran, as one BumpLeaderEpochs request (one metadata record batch)
   * instead of one request per partition; a failover of thousands of partitions bumps them in a few batches.
   */
  private bumps: (PartitionRuntime | MirrorPartitionEffect)[] = [];
  /** Bumps refused with NOT_CONTROLLER whose wait ended, as pairs: asked again together (`retryBump`). */
  private retriedBumps: (PartitionRuntime | MirrorPartitionEffect)[] = [];
  /** The shard's one task that sends {@link retriedBumps}, while one is scheduled. */
  private retriedBumpsTask: Cancel | undefined;

  constructor(private readonly ctx: EffectExecutorContext) {}

  run(p: PartitionRuntime, effect: MirrorPartitionEffect): void {
    switch (effect.type) {
      case "appendStateRecord": {
        this.ctx.writer.writeTo(
          partitionStateRecord(p.stateKey, effect.params),
          this.onStateAppended,
          p,
          effect.params.stateEpoch,
        );
        return;
      }
      case "recordLastMirrorEpoch":
        this.writeLastMirrorEpoch(p, effect.params.stateEpoch, effect.params.lme);
        return;
      case "clearLastMirrorEpoch":
        this.writeLastMirrorEpoch(p, effect.params.stateEpoch, null);
        return;
      case "scheduleRetry": {
        // The fault this FAILED waits out, when the step failure that failed it said which.
        const cause = this.failureWaits.get(p);
        this.failureWaits.delete(p);
        const current =
          cause !== undefined && cause.stateEpoch < effect.params.stateEpoch ? cause : undefined;
        const waitsFor = current?.waitsFor;
        const fire = () =>
          p.send({
            type: "RETRY_TIMER_FIRED",
            stateEpoch: effect.params.stateEpoch,
            pauseRequested: this.pauseRequested(p.key),
          });
        if (current === undefined && effect.params.stateEpoch === p.loadedStateEpoch) {
          this.armLoadedRetry(p, effect.params.delayMs, fire);
          return;
        }
        // A leader elected between the step's failure and this FAILED's commit (a crashed leader the
        // controller fenced at once) told no one: its election came before there was a retry to bring on.
        // Likewise a controller back since the step was refused with NOT_CONTROLLER (only the destination's
        // controller answers it, and only while it has none: active now, it came back).
        const ended =
          (waitsFor === "leader" && this.hasNewRunningLeader(p.key, current?.refused)) ||
          (waitsFor === "controller" && this.ctx.destination.controllerActive?.() === true);
        this.after(p, "retry", ended ? 0 : effect.params.delayMs, fire, waitsFor, current?.refused);
        return;
      }
      case "scheduleCommitRetry":
        this.arm(p, "commitRetry", effect.params.delayMs, {
          type: "COMMIT_RETRY_TIMER_FIRED",
          stateEpoch: effect.params.stateEpoch,
        });
        return;
      case "cancelRetryTimer":
        this.cancel(p, "retry");
        return;
      case "cancelCommitRetry":
        this.cancel(p, "commitRetry");
        return;
      case "cancelTruncation":
        this.cancel(p, "isr");
        return;
      case "awaitIsrTruncated":
        this.pollIsr(p, effect.params.stateEpoch);
        return;
      default:
        this.runAsync(p, effect);
    }
  }

  /** Cancels a partition's timers (it was removed, or the shard unloads). */
  cancelTimers(p: PartitionRuntime): void {
    for (const t of TIMERS) this.cancel(p, t);
  }

  /** Cancels every timer of the shard. */
  cancelAll(): void {
    for (const [id, t] of this.timers) {
      t.cancel();
      this.forget(id);
    }
    this.retriedBumpsTask?.();
    this.retriedBumpsTask = undefined;
    this.retriedBumps = [];
  }

  private readonly onStateAppended = (o: AppendOutcome, p: PartitionRuntime, stateEpoch: number): void => {
    p.send(this.commitResult(o, stateEpoch));
  };

  private commitResult(o: AppendOutcome, stateEpoch: number): MirrorPartitionEvent {
    switch (o.kind) {
      case "committed":
        return { type: "COMMITTED", stateEpoch };
      case "fenced":
        return { type: "FENCED", stateEpoch, message: o.message };
      case "failed":
        return {
          type: "COMMIT_FAILED",
          stateEpoch,
          message: o.message,
          random: this.ctx.random.next(),
          ...(o.maybeAppended ? { maybeAppended: true } : {}),
        };
    }
  }

  private writeLastMirrorEpoch(p: PartitionRuntime, stateEpoch: number, lme: number | null): void {
    this.ctx.writer.write(lastMirrorEpochRecord(p.lastMirrorEpochKey, lme), (o) => {
      if (o.kind === "committed") {
        this.ctx.onLastMirrorEpochCommitted(p, lme);
        p.send({ type: "LME_RECORDED", stateEpoch });
      } else {
        p.send(
          this.failure(stateEpoch, `could not write LastMirrorEpochs: ${o.message}`, o.kind !== "fenced"),
        );
      }
    });
  }

  /** Arms `timer`; `event` is sent when it fires (a function builds it then, from what holds at that time). */
  private arm(
    p: PartitionRuntime,
    timer: Timer,
    delayMs: number,
    event: MirrorPartitionEvent | (() => MirrorPartitionEvent),
  ): void {
    this.after(p, timer, delayMs, () => p.send(typeof event === "function" ? event() : event));
  }

  /**
   * Arms `timer` (replacing the partition's timer of that name) to run `fire` once after `delayMs`;
   * `waitsFor`, for a retry timer, what its FAILED waits out, and `refused`, the leader that refused its step.
   */
  private after(
    p: PartitionRuntime,
    timer: Timer,
    delayMs: number,
    fire: () => void,
    waitsFor?: RetryWait,
    refused?: RefusingLeader,
  ): void {
    this.cancel(p, timer);
    const id = `${p.id}\u0000${timer}`;
    const cancel = this.ctx.scheduler.schedule(() => {
      this.forget(id);
      fire();
    }, delayMs);
    const armed: ArmedTimer = { cancel, fire };
    if (waitsFor !== undefined) armed.waitsFor = waitsFor;
    if (refused !== undefined) armed.refused = refused;
    // A FAILED that waits for its lagging leader to catch up: that leader's epoch change is looked at.
    if (waitsFor === "leader" && refused?.lagged === true) this.ctx.leaderCatchUps?.add();
    this.timers.set(id, armed);
  }

  /** Drops an armed timer that fired or was cancelled. */
  private forget(id: string): void {
    const armed = this.timers.get(id);
    if (armed === undefined) return;
    this.timers.delete(id);
    if (armed.waitsFor === "leader" && armed.refused?.lagged === true) this.ctx.leaderCatchUps?.remove();
  }

  /**
   * Fires a FAILED partition's retry timer on the next scheduler turn, if one is armed and its FAILED waits
   * out the fault that `ended` (the step that failed it found no leader, no source, or no controller: see
   * {@link RetryWaitsFor}). The same retry the timer runs, only sooner (a full-jitter delay may be 0 anyway,
   * so it adds no behaviour the timer could not have), and from the scheduler as the timer's, not inside the
   * caller (a leadership change being applied). Not for any other failure: each retry uses one of the
   * budget's attempts (`mirror.failed.retry.max.attempts`), and a rolling restart of the destination, moving
   * leaders while the source was down, used them all up in seconds (FAILED for good, waiting for an
   * operator), with a PREPARING and a FAILED record per partition per move. For a step the destination leader
   * itself refused, only once that leader changed (`leaderChangedSince`), as the FAILED's own commit checks.
   * A FAILED this coordinator loaded takes the controller's or the source's return while its partition has
   * a running leader, and a leader elected when it had none (see {@link RetryWait}). False when none fires.
   */
  retryNow(p: PartitionRuntime, ended: RetryWaitsFor): boolean {
    const armed = this.timers.get(`${p.id}\u0000retry`);
    if (armed === undefined) return false;
    if (armed.waitsFor === "loaded" || armed.waitsFor === "loadedLeaderless") {
      if (ended === "leader" && armed.waitsFor === "loaded") return false;
      // No running leader now (none since it loaded, or lost since): a retry would fail on that at once and
      // use an attempt, as `armLoadedRetry` says. It waits for a leader's election instead, same deadline.
      if (ended !== "leader" && !this.hasNewRunningLeader(p.key, undefined)) {
        armed.waitsFor = "loadedLeaderless";
        return false;
      }
      this.after(p, "retry", 0, armed.fire, armed.waitsFor);
      return true;
    }
    if (armed.waitsFor !== ended) return false;
    if (ended === "leader" && !leaderChangedSince(this.ctx.destination, p.key, armed.refused)) return false;
    this.after(p, "retry", 0, armed.fire, armed.waitsFor, armed.refused);
    return true;
  }

  /**
   * Whether the topic's `mirror.name` asks this mirror to pause it now, read as a FAILED partition's retry
   * fires: the retry then ends PAUSED or MIRRORING as the operator asks, not as the partition was when it
   * failed (a pause or resume while FAILED, or one the failure overtook). Undefined when the topic's
   * `mirror.name` speaks for no mirror or for another one, or the topic of that name is another one (deleted
   * and created again): the partition keeps what it knew.
   */
  private pauseRequested(key: MirrorPartitionKey): boolean | undefined {
    const destination = this.ctx.destination;
    const id = destination.topicIdOf?.(key.topic);
    if (id !== undefined && key.topicId !== ZERO_UUID && id !== key.topicId) return undefined;
    const asked = parseMirrorNameConfig(destination.topicConfig?.(key.topic, MIRROR_NAME_CONFIG));
    if (asked === undefined || asked.mirror !== key.mirror || asked.desired === "REMOVED") return undefined;
    return asked.desired === "PAUSED";
  }

  private cancel(p: PartitionRuntime, timer: Timer): void {
    const id = `${p.id}\u0000${timer}`;
    this.timers.get(id)?.cancel();
    this.forget(id);
  }

  /**
   * The source's LME for the partition (PREPARING step 2). A source that says "retry shortly" (it is failing
   * the partition over itself, a failback right after the other side's removal; or its coordinator is
   * loading or moving) is asked again every {@link SOURCE_BUSY_POLL_MS} for up to
   * {@link SOURCE_BUSY_WAIT_MS}, the partition staying in PREPARING: failed at once, each retry's backoff
   * grew (1, 2, 4, 8, 16 s...) and a failback waited up to 16 s after the source's failover had ended (soak
   * `failback` FC_SEED=459). Longer than that, it fails as before (retryable, with the source's words).
   * Undefined once the partition left this state or the coordinator lost its leadership.
   */
  private async lastMirrorEpochOnceAnswered(
    p: PartitionRuntime,
    stateEpoch: number,
  ): Promise<number | undefined> {
    const key = p.key;
    const until = this.ctx.clock.now() + SOURCE_BUSY_WAIT_MS;
    for (;;) {
      try {
        return await this.ctx.sources(key.mirror).lastMirrorEpoch(key.topicId, key.partition);
      } catch (error) {
        const name = error instanceof KafkaError ? error.errorName : undefined;
        if (name === undefined || !SOURCE_BUSY.has(name) || this.ctx.clock.now() >= until) throw error;
      }
      // A timer of the partition's, so that removing the partition or unloading the shard cancels it (the
      // lookup then never ends: nothing is left to hear it) instead of keeping a closed cluster's process
      // alive, or a test's ManualScheduler busy, for the rest of the wait.
      await new Promise<void>((resolve) => this.after(p, "sourceBusy", SOURCE_BUSY_POLL_MS, resolve));
      if (!p.isStill(stateEpoch) || !this.ctx.stillCoordinator()) return undefined;
    }
  }

  /** Checks `followersTruncated()` now and then every `isrPollIntervalMs` until it holds (or is cancelled). */
  private pollIsr(p: PartitionRuntime, stateEpoch: number): void {
    const check = (delayMs: number): void =>
      this.after(p, "isr", delayMs, () => {
        if (p.isClosed) return;
        let truncated: boolean;
        try {
          truncated = this.leaderReplica(p.key).followersTruncated();
        } catch (error) {
          this.reportFailure(p, stateEpoch, error);
          return;
        }
        if (truncated) p.send({ type: "ISR_TRUNCATED", stateEpoch });
        else check(this.ctx.isrPollIntervalMs);
      });
    check(0);
  }

  /**
   * Runs a data-path effect on a later microtask, as its own task would: effects queued in the same tick run
   * in order in one task (no promise chain per effect); an effect that answers synchronously sends its
   * result at once, an asynchronous one when it settles.
   */
  private runAsync(p: PartitionRuntime, effect: MirrorPartitionEffect): void {
    this.queued.push(p, effect);
    if (this.drainScheduled) return;
    this.drainScheduled = true;
    queueMicrotask(this.drain);
  }

  private readonly drain = (): void => {
    const queued = this.queued;
    this.queued = [];
    this.drainScheduled = false;
    for (let i = 0; i < queued.length; i += 2) {
      const effect = queued[i + 1] as MirrorPartitionEffect;
      if (effect.type === "bumpLeaderEpoch") this.bumps.push(queued[i] as PartitionRuntime, effect);
      else this.start(queued[i] as PartitionRuntime, effect);
    }
    if (this.bumps.length > 0) this.bumpLeaderEpochs();
  };

  /**
   * Sends the task's bumps as one request and each partition its own result (EPOCH_BUMPED, or EFFECT_FAILED
   * with the error of that partition alone), in the order they were requested. What a partition asked for
   * before its bump still runs before it (EPOCH_FENCING holds appends first); the chart asks for nothing
   * after a bump in the same step, as the bump's result is what its next step waits for.
   */
  private bumpLeaderEpochs(): void {
    const queued = this.bumps;
    this.bumps = [];
    if (!this.ctx.stillCoordinator()) return; // a zombie coordinator must not touch the data
    // A partition whose topic name now belongs to another topic fails alone; the others bump together.
    const bumps: (PartitionRuntime | MirrorPartitionEffect)[] = [];
    for (let i = 0; i < queued.length; i += 2) {
      const p = queued[i] as PartitionRuntime;
      const effect = queued[i + 1] as MirrorPartitionEffect;
      try {
        this.requireSameTopic(p.key);
        // STOPPING's first awaited step that asks the controller: the engine holds the flag before the
        // markers (its entry's `markReadOnly`, refused with NOT_CONTROLLER, was let go: see `failed`). Only
        // there: MIRRORING and EPOCH_FENCING are entered holding it (their refused flag fails them), and on
        // a destination that cannot tell whether the engine holds it (no `mirrorReadOnlyHeld`), asking at
        // each of their bumps sent a flag request through the partition's leader, and failed the bump of a
        // partition whose leader was not reachable then.
        if (p.snapshot?.context.record.state === "STOPPING") this.holdReadOnlyFlag(p.key);
        bumps.push(p, effect);
      } catch (error) {
        this.failed(p, effect, error);
      }
    }
    if (bumps.length === 0) return;
    const requests: { topic: string; partition: number; minLeaderEpoch: number }[] = [];
    for (let i = 0; i < bumps.length; i += 2) {
      const key = (bumps[i] as PartitionRuntime).key;
      const effect = bumps[i + 1] as Extract<MirrorPartitionEffect, { type: "bumpLeaderEpoch" }>;
      requests.push({
        topic: key.topic,
        partition: key.partition,
        minLeaderEpoch: effect.params.minLeaderEpoch,
      });
    }
    const destination = this.ctx.destination;
    let results: readonly ({ leaderEpoch?: number; error?: Error } | undefined)[];
    if (destination.bumpLeaderEpochsBatch === undefined) {
      results = requests.map((req) => {
        try {
          return { leaderEpoch: destination.bumpLeaderEpochs([req])[0] };
        } catch (error) {
          return { error: error instanceof Error ? error : new Error(String(error)) };
        }
      });
    } else {
      try {
        results = destination.bumpLeaderEpochsBatch(requests);
      } catch (error) {
        const failed = { error: error instanceof Error ? error : new Error(String(error)) };
        results = requests.map(() => failed);
      }
    }
    for (let i = 0; i < bumps.length; i += 2) {
      const p = bumps[i] as PartitionRuntime;
      const effect = bumps[i + 1] as MirrorPartitionEffect;
      const stateEpoch = effect.params.stateEpoch;
      const result = results[i >> 1];
      const req = requests[i >> 1] as { topic: string; partition: number };
      if (result?.error !== undefined) this.failed(p, effect, result.error);
      else if (result?.leaderEpoch === undefined) {
        p.send(
          this.failureOf(
            stateEpoch,
            new Error(`BumpLeaderEpochs returned no epoch for ${req.topic}-${req.partition}`),
          ),
        );
      } else p.send({ type: "EPOCH_BUMPED", stateEpoch, leaderEpoch: result.leaderEpoch });
    }
  }

  private start(p: PartitionRuntime, effect: MirrorPartitionEffect): void {
    if (SYNC_EFFECTS.has(effect.type)) {
      let result: MirrorPartitionEvent | undefined;
      try {
        if (!this.ctx.stillCoordinator()) return; // a zombie coordinator must not touch the data
        result = this.executeSync(p, effect);
      } catch (error) {
        this.failed(p, effect, error);
        return;
      }
      if (result !== undefined) p.send(result);
      return;
    }
    this.execute(p, effect).then(
      (result) => {
        if (result !== undefined) p.send(result);
      },
      (error: unknown) => this.failed(p, effect, error),
    );
  }

  /** Runs one effect that answers synchronously (or throws). */
  private executeSync(p: PartitionRuntime, effect: MirrorPartitionEffect): MirrorPartitionEvent | undefined {
    const key = p.key;
    const stateEpoch = effect.params.stateEpoch;
    switch (effect.type) {
      case "markReadOnly":
        this.leaderReplica(key).setReadOnly(true);
        return undefined;
      case "clearReadOnly":
        this.stoppedStepOnLoad(p, effect);
        return undefined;
      case "addFetcher":
        this.fetchers(key).addPartition(key);
        return undefined;
      case "holdAppends":
        this.fetchers(key).holdAppends(key);
        return undefined;
      case "releaseAppends":
        this.fetchers(key).releaseAppends(key);
        return undefined;
      case "abortOpenTransactions": {
        const replica = this.leaderReplica(key);
        // Idempotent: a resumed STOPPING finds the transactions it aborted closed.
        this.abort(replica, replica.ongoingTransactions());
        return { type: "TXNS_ABORTED", stateEpoch };
      }
      default:
        throw new Error(`the coordinator has no executor for effect '${effect.type}'; this is a bug`);
    }
  }

  /**
   * STOPPED's step as STOPPED is entered: the barrier this coordinator's STOPPING just wrote and saw
   * replicated (`takeBarrier`) is checked on the leader; one it did not write (`unconfirmedBarrier`) is
   * also awaited on the leader's in-sync replicas, as the coordinator that wrote it (lost meanwhile) may not
   * have seen it replicated.
   */
  private stoppedStepOnLoad(p: PartitionRuntime, effect: MirrorPartitionEffect): void {
    const stateEpoch = effect.params.stateEpoch;
    const written = p.takeBarrier(stateEpoch);
    if (written !== undefined) this.stoppedStep(p, effect, written, false);
    else this.stoppedStep(p, effect, this.unconfirmedBarrier(p, stateEpoch), true);
  }

  /**
   * STOPPED's step (`clearReadOnly`). With `barrierLme` (a failover barrier above it is due on the log, see
   * `takeBarrier` and `unconfirmedBarrier`), the topic becomes writable only once the partition's leader
   * ends with it and its in-sync replicas have it: a leader elected uncleanly without it gets the ABORT
   * markers and the PID reset again (`rewriteLostBarrier`), and the step runs again once they are
   * replicated (another unclean election meanwhile loses them again, and they are written again). No leader:
   * LEADER_NOT_AVAILABLE (retriable), the flag stays set, and the failover's steps run again after the
   * backoff (FAILED, then STOPPING and STOPPED), rather than a topic that becomes writable unchecked under
   * whichever leader is elected later.
   */
  private stoppedStep(
    p: PartitionRuntime,
    effect: MirrorPartitionEffect,
    barrierLme: number | undefined,
    awaitReplication: boolean,
  ): void {
    const key = p.key;
    const stateEpoch = effect.params.stateEpoch;
    const asked = parseMirrorNameConfig(this.ctx.destination.topicConfig?.(key.topic, MIRROR_NAME_CONFIG));
    if (barrierLme !== undefined && (asked === undefined || asked.mirror === key.mirror)) {
      const replicated = this.rewriteLostBarrier(key, barrierLme, awaitReplication);
      if (replicated !== undefined) {
        replicated.then(
          () => {
            if (!this.ctx.stillCoordinator() || !p.isStill(stateEpoch)) return;
            try {
              this.stoppedStep(p, effect, barrierLme, false);
            } catch (error) {
              this.failed(p, effect, error);
            }
          },
          (error: unknown) => {
            // A change under way (a START's PREPARING, which keeps the flag and aligns the log again) or a
            // coordinator lost meanwhile (the next one runs STOPPED's step again): the wait's failure is not
            // theirs. Sent, a START's commit would take it for its own (deferred, then FAILED).
            if (!this.ctx.stillCoordinator() || !p.isStill(stateEpoch)) return;
            this.reportFailure(p, stateEpoch, error);
          },
        );
        return;
      }
    }
    this.clearReadOnly(key, true);
  }

  /**
   * Whether STOPPED partition `p`'s step has still to clear the read-only flag the engine set (it waits for
   * the destination's controller, or for the failover's barrier on the in-sync replicas): the flag is the
   * engine's (not one `mirror.name` set) on the mirror partition's own topic, and no other mirror's
   * `mirror.name` owns the topic now (whose steps would own the flag). Tombstoned now, the partition would
   * leave the topic read-only for good: nothing runs STOPPED's step once its record is gone.
   */
  stoppedStepPending(p: PartitionRuntime): boolean {
    const record = p.snapshot?.context.record;
    if (record?.state !== "STOPPED") return false;
    const key = p.key;
    const destination = this.ctx.destination;
    if (destination.mirrorReadOnlyHeld?.(key.topic, key.partition) !== true) return false;
    const id = destination.topicIdOf?.(key.topic);
    if (id !== undefined && key.topicId !== ZERO_UUID && id !== key.topicId) return false;
    const asked = parseMirrorNameConfig(destination.topicConfig?.(key.topic, MIRROR_NAME_CONFIG));
    return asked === undefined || asked.mirror === key.mirror;
  }

  /**
   * Whether STOPPED partition `p` keeps its read-only flag until its own step found the failover's barrier
   * on the leader and its in-sync replicas (`unconfirmedBarrier`): a clear from outside its steps
   * (`CoordinatorShard.clearReadOnlyIfStopped`) must leave the flag to that step.
   */
  barrierUnconfirmed(p: PartitionRuntime): boolean {
    const stateEpoch = p.snapshot?.context.record.stateEpoch;
    return stateEpoch !== undefined && this.unconfirmedBarrier(p, stateEpoch) !== undefined;
  }

  /**
   * The LME of a barrier a STOPPED at `stateEpoch` must find on the log although this coordinator did not
   * write it (it loaded the STOPPED record after the coordinator that wrote the barrier was lost, or a retry
   * from FAILED ran STOPPING again without writing one): the read-only flag the engine set is still set, so
   * nothing but the engine wrote to the partition since, and its log holds mirrored data (the STOPPED record's
   * leaderEpoch, the highest mirrored batch epoch of the episode, is at least 0), so its failover wrote ABORT
   * markers and a PID reset above the recorded LME. A failover over a log that held no mirrored data wrote
   * none and gets none (its open transactions are the cluster's own, live: KIP-664 hanging ones only); a
   * STOPPED whose flag was cleared already (local producers may write) is never checked. (Set again by a
   * later STOPPING's first step, after a STOPPED failed again once local producers wrote: their data above
   * the LME tells, and `rewriteLostBarrier` leaves that log alone.)
   */
  private unconfirmedBarrier(p: PartitionRuntime, stateEpoch: number): number | undefined {
    const context = p.snapshot?.context;
    const record = context?.record;
    if (record?.state !== "STOPPED" || record.stateEpoch !== stateEpoch || record.leaderEpoch < 0)
      return undefined;
    const held = this.ctx.destination.mirrorReadOnlyHeld?.(p.key.topic, p.key.partition) === true;
    return held ? context?.lastMirrorEpoch : undefined;
  }

  /**
   * A STOPPED read-only partition whose log holds mirrored data and this failover's markers only must end
   * with the PID reset above `lme`. A leader that does not (elected uncleanly, without them, after the
   * in-sync replicas had them and before STOPPED's step) holds the source's open transactions and producer
   * ids again: STOPPING's steps 3 and 4 run again on it, and the promise settles once its in-sync replicas
   * have them (acks=all, as STOPPING's `appendPidReset`); undefined when the leader ends with the barrier
   * (unless `awaitReplication`: then once its in-sync replicas have the log up to it).
   * (Kafka: an unclean election loses what the ISR acknowledged, `unclean.leader.election.enable`; here the
   * barrier is written again while nothing else can write to the partition.)
   */
  private rewriteLostBarrier(
    key: MirrorPartitionKey,
    lme: number,
    awaitReplication: boolean,
  ): Promise<void> | undefined {
    // Even with unclean elections off, the leader elected next may lack the barrier: a last in-sync replica
    // whose recovery dropped its tail leads again (Kafka before KIP-966). The topic stays read-only until a
    // leader is checked; the retry costs a FAILED detour, never a hanging transaction.
    const replica = this.leaderReplica(
      key,
      "the topic stays read-only until a leader holds the failover's ABORT markers and PID reset; the failover's steps are retried after the election",
    );
    if (replica.endsWithPidResetAbove(lme)) {
      return awaitReplication ? replica.awaitReplicated(replica.logEndOffset() - 1n) : undefined;
    }
    // Local producers wrote above the LME: the topic was writable after this failover's barrier, and the
    // flag was set again since by a later STOPPING's first step (a STOPPED failed again, and FAILED's retry
    // ran STOPPING). Its transactions are live and its producer state the topic's own: no marker, no reset.
    if (replica.hasDataBatchAbove(lme)) return undefined;
    this.abort(replica, replica.ongoingTransactions());
    replica.appendControlBatch(
      encodeMirrorPidResetBatch({
        sourceClusterId: this.ctx.sourceClusterId(key.mirror),
        timestamp: BigInt(this.ctx.clock.now()),
      }),
    );
    return replica.awaitReplicated(replica.logEndOffset() - 1n);
  }

  /** Appends an ABORT marker on the partition's leader for each transaction, at its producer epoch. */
  private abort(
    replica: LocalReplica,
    transactions: readonly { producerId: bigint; producerEpoch: number }[],
  ): void {
    for (const txn of transactions) {
      replica.appendControlBatch(
        encodeEndTxnMarkerBatch({
          type: ControlRecordType.ABORT,
          producerId: txn.producerId,
          producerEpoch: txn.producerEpoch,
          coordinatorEpoch: 0,
          timestamp: BigInt(this.ctx.clock.now()),
        }),
      );
    }
  }

  /** Runs one effect that talks to the data partition, the source or the fetchers; returns its result. */
  private async execute(
    p: PartitionRuntime,
    effect: MirrorPartitionEffect,
  ): Promise<MirrorPartitionEvent | undefined> {
    const key = p.key;
    const stateEpoch = effect.params.stateEpoch;
    if (!this.ctx.stillCoordinator()) return undefined; // a zombie coordinator must not touch the data
    switch (effect.type) {
      case "checkMirrorLoop": {
        const mirrors = await this.ctx.sources(key.mirror).listMirrors();
        const here = this.ctx.destination.clusterId;
        const loop = mirrors.find((m) => m.sourceClusterId === here && m.topics.includes(key.topic));
        if (loop === undefined) {
          // PREPARING's first step the chart waits for: the engine holds the read-only flag before the chart
          // goes on (its entry's `markReadOnly`, refused with NOT_CONTROLLER, was let go: see `failed`), asked
          // again in place while the controller is away. A no-op when the flag is held already.
          if (!p.isStill(stateEpoch)) return undefined;
          this.holdReadOnlyFlag(key);
          return { type: "MIRROR_LOOP_CHECKED", stateEpoch };
        }
        return {
          type: "MIRROR_LOOP_FOUND",
          stateEpoch,
          message: `mirror loop: the source's mirror '${loop.name}' already mirrors topic '${key.topic}' from this cluster (${here}); remove the topic from one of the two mirrors`,
        };
      }
      case "appendPidReset": {
        const replica = this.leaderReplica(key);
        // Mirrored batches are at or below the LME and this failover writes above it: a barrier at the log
        // end above it is this failover's own, written before a coordinator change (spec §4 STOPPING 5); one
        // at or below it is the source's, mirrored, and this failover still writes its own.
        if (!replica.endsWithPidResetAbove(effect.params.lme)) {
          replica.appendControlBatch(
            encodeMirrorPidResetBatch({
              sourceClusterId: this.ctx.sourceClusterId(key.mirror),
              timestamp: BigInt(this.ctx.clock.now()),
            }),
          );
        }
        // As Kafka's coordinator appends (acks=all): the barrier, and the ABORT markers before it, count
        // only once the in-sync replicas have them. Counted at once, a leader crash right after STOPPED
        // could elect a replica without them: a writable partition with no PID reset and open
        // transactions that hang.
        await replica.awaitReplicated(replica.logEndOffset() - 1n);
        p.noteBarrier(stateEpoch, effect.params.lme);
        return { type: "PID_RESET_APPENDED", stateEpoch };
      }
      case "abortHangingTransactions": {
        // KIP-664: read the transaction coordinators' state first, then the log, in one synchronous step (no
        // await before the markers), so a transaction that ends meanwhile is closed on the log before it is
        // read. A coordinator whose state is not known tells nothing: EFFECT_FAILED (retriable), and the
        // failover runs again after a backoff.
        const replica = this.leaderReplica(key);
        const port = this.ctx.destination;
        if (port.liveTransactions === undefined) return { type: "TXNS_ABORTED", stateEpoch };
        const live = port.liveTransactions(key.topic, key.partition);
        if (live === undefined) {
          throw new ClusterError(
            "COORDINATOR_NOT_AVAILABLE",
            `${key.topic}-${key.partition}: a transaction coordinator's state is not known, so no transaction open on the log can be told hanging; the failover is retried`,
          );
        }
        this.abort(
          replica,
          replica.ongoingTransactions().filter((txn) => !isLive(live, txn)),
        );
        // As appendPidReset: the ABORT markers count only once the in-sync replicas have them (this step's,
        // or a coordinator's before it that was lost). Counted at once, a leader crash right after STOPPED
        // could elect a replica without them, and nothing would ever end those transactions there.
        const end = replica.logEndOffset();
        if (end > 0n) await replica.awaitReplicated(end - 1n);
        return { type: "TXNS_ABORTED", stateEpoch };
      }
      case "lookupLastMirrorEpoch": {
        const lme = await this.lastMirrorEpochOnceAnswered(p, stateEpoch);
        return lme === undefined ? undefined : { type: "LME_FOUND", stateEpoch, lme };
      }
      // A truncation asked for by PREPARING runs only while PREPARING still holds: a removal that overtook it
      // while the source answered has made the partition writable (and may have written its PID reset
      // barrier, or the application its records), which a late truncation would destroy.
      // The source is read by topic name: each read names the mirrored topic's id, so a topic deleted and
      // created again under the name is refused (UNKNOWN_TOPIC_ID) rather than truncated by.
      // Once it cut, commands wait for its TRUNCATED (`noteTruncated`): a removal must know that the log holds
      // the source's data again, whose open transactions its failover then aborts.
      case "truncateFully": {
        const start = await this.ctx
          .sources(key.mirror)
          .listOffsets(key.topic, key.partition, -2n, key.topicId);
        if (!p.isStill(stateEpoch)) return undefined;
        this.leaderReplica(key).truncateFullyAndStartAt(start);
        this.ctx.destination.clampGroupOffsets?.(key.topic, key.partition);
        p.noteTruncated();
        return { type: "TRUNCATED", stateEpoch };
      }
      case "truncateToEpoch": {
        if (!p.isStill(stateEpoch)) return undefined;
        const replica = this.leaderReplica(key);
        const end = replica.endOffsetForEpoch(effect.params.lme);
        if (end.endOffset < 0n) {
          // This log never had the epoch (nor any later one): nothing of ours can be kept.
          const start = await this.ctx
            .sources(key.mirror)
            .listOffsets(key.topic, key.partition, -2n, key.topicId);
          if (!p.isStill(stateEpoch)) return undefined;
          this.leaderReplica(key).truncateFullyAndStartAt(start);
          this.ctx.destination.clampGroupOffsets?.(key.topic, key.partition);
          p.noteTruncated();
          return { type: "TRUNCATED", stateEpoch };
        }
        // Where the source's own copy of that epoch ends, when earlier (it failed over before it had all of
        // it: an unplanned failover): the cut KIP-320's divergence check would make at the first fetch, made
        // here, so the log is a copy of the source's before MIRRORING (and before any lag reads 0).
        let cut = end.endOffset;
        const theirs = await this.ctx
          .sources(key.mirror)
          .endOffsetForEpoch(key.topic, key.partition, effect.params.lme, key.topicId);
        if (!p.isStill(stateEpoch)) return undefined;
        if (theirs.leaderEpoch >= 0 && theirs.endOffset >= 0n) {
          const ours = this.leaderReplica(key).endOffsetForEpoch(theirs.leaderEpoch).endOffset;
          for (const o of [theirs.endOffset, ours]) if (o >= 0n && o < cut) cut = o;
        }
        // At the log end too: nothing is cut, but the epoch cache drops entries starting there, epochs this
        // topic's leaders recorded while it was writable with no batch in them. Kept, the latest of them would
        // read as the last mirrored epoch (the fetcher's lastFetchedEpoch, and the LME of a failover before
        // the first fetch) though no mirrored batch carries it (soak `failback` FC_SEED=25).
        const now = this.leaderReplica(key);
        if (cut <= now.logEndOffset()) now.truncateTo(cut);
        // Committed offsets past the cut name records that are gone (the local writes of an old primary, or
        // what its consumers committed past its log end): the source's records will take those offsets, and
        // a group resuming there would skip them. The cut is where it resumes (the sync may move it on).
        this.ctx.destination.clampGroupOffsets?.(key.topic, key.partition);
        p.noteTruncated();
        return { type: "TRUNCATED", stateEpoch };
      }
      case "removeFetcher": {
        await this.fetchers(key).removePartition(key);
        // The LME is the latest epoch of the leader's log once no fetcher appends to it, read on the leader
        // now: the removal waits for the fetcher's in-flight fetch, and leadership may move meanwhile (a
        // preferred leader election, a reassignment). The fetcher's broker, a follower then, has no leader
        // replica to read, and an LME of -1 would make a failback truncate fully.
        const latestMirroredEpoch = this.leaderReplica(key).latestEpoch();
        return { type: "FETCHER_REMOVED", stateEpoch, latestMirroredEpoch };
      }
      default:
        throw new Error(`the coordinator has no executor for effect '${effect.type}'; this is a bug`);
    }
  }

  /**
   * STOPPED's step: clears the partition's read-only flag. The flag is metadata: a STOPPED partition (a
   * coordinator that loaded one again) clears it while its partition has no leader, rather than failing a
   * topic its applications already write to. Nothing once the topic was re-added under another mirror,
   * whether that mirror still copies it or fails it over (`.removed`: its STOPPING writes the barrier
   * first, and its STOPPED clears the flag): this mirror's STOPPED record no longer speaks for the flag,
   * that mirror's steps own it. (Re-added under this mirror, the controller keeps the flag `mirror.name`
   * set until the re-add's PREPARING takes it over.) As STOPPED's step (`clampGroupOffsets`), it first moves committed
   * offsets past the log end back to it (`DestinationCluster.clampGroupOffsets`); `stoppedStep` checks the
   * failover's barrier first.
   */
  clearReadOnly(key: MirrorPartitionKey, clampGroupOffsets = false): void {
    const destination = this.ctx.destination;
    const asked = parseMirrorNameConfig(destination.topicConfig?.(key.topic, MIRROR_NAME_CONFIG));
    if (asked !== undefined && asked.mirror !== key.mirror) return;
    if (clampGroupOffsets) {
      // Before the first local write: a committed offset past the log end (synced before an unclean
      // election on this cluster cut the log below it) would make its group skip the records written there.
      this.requireSameTopic(key);
      destination.clampGroupOffsets?.(key.topic, key.partition);
    }
    if (destination.setMirrorReadOnly === undefined) this.leaderReplica(key).setReadOnly(false);
    else {
      this.requireSameTopic(key);
      destination.setMirrorReadOnly(key.topic, key.partition, false);
    }
  }

  /**
   * Throws, not retriable, when the destination's topic of that name is no longer the mirror partition's
   * (deleted, maybe created again: ids are never reused): a step must not write a barrier or markers into,
   * truncate, or flip the read-only flag of another topic. The partition goes FAILED and stays there.
   */
  private requireSameTopic(key: MirrorPartitionKey): void {
    // A source topic from before Kafka 2.8 has no id (ZERO_UUID): its copy is known by name alone.
    if (this.ctx.destination.topicIdOf === undefined || key.topicId === ZERO_UUID) return;
    const now = this.ctx.destination.topicIdOf(key.topic);
    if (now === key.topicId) return;
    throw new KafkaError(
      "UNKNOWN_TOPIC_ID",
      100,
      false,
      `${key.topic}-${key.partition}: the destination topic (id ${key.topicId}) was deleted${
        now === undefined
          ? ""
          : `, and '${key.topic}' is now another topic (id ${now}), which mirror '${key.mirror}' never writes to`
      }. The partition stays FAILED; its state is dropped when the mirror is deleted`,
    );
  }

  /** The leader replica of the data partition, on whichever broker leads it (an RPC when not this one). */
  private leaderReplica(
    key: MirrorPartitionKey,
    meanwhile = "the step is retried after the election",
  ): LocalReplica {
    this.requireSameTopic(key);
    const destination = this.ctx.destination;
    const leader = destination.leaderOf(key.topic, key.partition);
    const replica = leader >= 0 ? destination.replica(leader, key.topic, key.partition) : undefined;
    const leaderEpoch = destination.leaderEpochOf(key.topic, key.partition);
    if (replica === undefined) {
      // A leader the metadata names whose broker is down (it crashed while no controller ran) goes with the
      // error as the leader that refused: that broker back at the same epoch, still with no controller, is
      // no new leader (`leaderChangedSince`), as for a step it refused itself.
      const down = leader >= 0 && this.ctx.fetchers(leader) === undefined;
      throw new NoDestinationLeaderError(
        `${key.topic}-${key.partition} has no running leader on the destination (leader ${leader}); ${meanwhile}`,
        "LEADER_NOT_AVAILABLE",
        down ? { ranOn: { leader, leaderEpoch } } : undefined,
      );
    }
    return new DestinationLeaderReplica(replica, { leader, leaderEpoch });
  }

  /**
   * Whether the destination partition has a running leader a step can run on now (its replica leads there,
   * and its broker runs the mirror's fetchers): what a FAILED waiting for a leader waits for. After a step
   * that leader itself refused (`refused`: it said it no longer leads), only once that leader changed
   * (`leaderChangedSince`: another leader, a newer epoch, or a lagging leader caught up): a leader whose
   * metadata lags the controller's (a broker whose owed truncation failed on a full disk keeps its old epoch)
   * refuses every retry alike, and each at once used up the budget's attempts in a moment (FAILED for good,
   * waiting for an operator).
   */
  private hasNewRunningLeader(key: MirrorPartitionKey, refused: RefusingLeader | undefined): boolean {
    const destination = this.ctx.destination;
    const leader = destination.leaderOf(key.topic, key.partition);
    if (
      leader < 0 ||
      destination.replica(leader, key.topic, key.partition) === undefined ||
      this.ctx.fetchers(leader) === undefined
    )
      return false;
    return leaderChangedSince(destination, key, refused);
  }

  /**
   * Arms the retry timer of a FAILED this coordinator loaded (see {@link RetryWait}): at once when a fault it
   * may wait out ended while the shard loaded, heard by no coordinator (the controller back, or its source),
   * and holds no more (the controller active, the source answering the last refresh here), and its partition
   * has a running leader (a retry would fail on that at once); else after its backoff, or sooner at the
   * first end of a fault.
   */
  private armLoadedRetry(p: PartitionRuntime, delayMs: number, fire: () => void): void {
    const key = p.key;
    const ended = this.ctx.endedWhileLoading;
    const led = this.hasNewRunningLeader(key, undefined);
    const endedUnheard =
      (ended?.controllerCameBack === true && this.ctx.destination.controllerActive?.() !== false) ||
      (ended?.sourceCameBack(key.mirror) === true && this.ctx.sourceDown?.(key.mirror) !== true);
    this.after(p, "retry", led && endedUnheard ? 0 : delayMs, fire, led ? "loaded" : "loadedLeaderless");
  }

  /**
   * Sets the partition's read-only flag unless the engine holds it already (a no-op then: nothing asks the
   * controller); a flag only `mirror.name` set is taken over. Throws what the controller answers.
   */
  private holdReadOnlyFlag(key: MirrorPartitionKey): void {
    if (this.ctx.destination.mirrorReadOnlyHeld?.(key.topic, key.partition) !== true)
      this.leaderReplica(key).setReadOnly(true);
  }

  /**
   * The fetcher manager of the broker that leads the data partition (it appends the fetched batches). No
   * leader, or one that is not running (it crashed while no controller fenced it and elected another):
   * LEADER_NOT_AVAILABLE, as `leaderReplica` says, so a FAILED partition retries at the election.
   */
  private fetchers(key: MirrorPartitionKey): FetcherManager {
    this.requireSameTopic(key);
    const leader = this.ctx.destination.leaderOf(key.topic, key.partition);
    if (leader < 0) {
      throw new NoDestinationLeaderError(
        `${key.topic}-${key.partition} has no leader on the destination; the fetcher step is retried after the election`,
      );
    }
    const fetchers = this.ctx.fetchers(leader);
    if (fetchers === undefined) {
      throw new NoDestinationLeaderError(
        `${key.topic}-${key.partition} has no running leader on the destination (leader ${leader} is not running, and no controller elected another yet); the fetcher step is retried once a running broker is elected its leader (start one of its replicas' brokers if none runs)`,
      );
    }
    return fetchers;
  }

  private failure(stateEpoch: number, message: string, retryable: boolean): MirrorPartitionEvent {
    return { type: "EFFECT_FAILED", stateEpoch, message, retryable, random: this.ctx.random.next() };
  }

  /**
   * Reports `effect`'s failure, or, for a controller step refused with NOT_CONTROLLER (see
   * {@link CONTROLLER_STEPS}) within {@link CONTROLLER_WAIT_MS} of its first refusal, runs it again after
   * the client backoff, the partition staying in its step, as long as it is still at the effect's
   * `stateEpoch` with no change waiting and this coordinator still leads (the timer is the partition's:
   * removing it or unloading the shard cancels the wait).
   */
  private failed(p: PartitionRuntime, effect: MirrorPartitionEffect, error: unknown): void {
    const stateEpoch = effect.params.stateEpoch;
    const notController = error instanceof KafkaError && error.errorName === "NOT_CONTROLLER";
    // PREPARING's loop check, STOPPING's bump, sets the flag before the chart goes on, and waits for the
    // controller itself.
    if (
      notController &&
      effect.type === "markReadOnly" &&
      FLAG_SET_BY_GATE.has(p.snapshot?.context.record.state ?? "") &&
      p.isStill(stateEpoch)
    )
      return;
    const refusedByController = notController && CONTROLLER_STEPS.has(effect.type);
    const now = this.ctx.clock.now();
    let wait = refusedByController ? this.controllerWaits.get(effect) : undefined;
    if (refusedByController && wait === undefined) {
      wait = { until: now + CONTROLLER_WAIT_MS, attempt: 0 };
      this.controllerWaits.set(effect, wait);
    }
    if (wait === undefined || now >= wait.until) {
      this.reportFailure(p, stateEpoch, error, effect.type);
      return;
    }
    const delayMs = Math.min(
      CONTROLLER_RETRY_BACKOFF_MAX_MS,
      CONTROLLER_RETRY_BACKOFF_MS * 2 ** wait.attempt,
    );
    wait.attempt++;
    // Asked again in the timer's own task, right after the check: queued for a microtask instead, a task due
    // at the same instant (a START's commit, run before any microtask by the simulator's scheduler) could
    // change the state first, and STOPPED's step would clear the flag under the new PREPARING.
    this.after(p, "controller", delayMs, () => {
      if (!p.isStill(stateEpoch) || !this.ctx.stillCoordinator()) return;
      if (effect.type === "bumpLeaderEpoch") this.retryBump(p, effect);
      else this.start(p, effect);
    });
  }

  /** Sends the step failure `error` (EFFECT_FAILED), noting what the FAILED it commits waits out. */
  private reportFailure(p: PartitionRuntime, stateEpoch: number, error: unknown, effectType?: string): void {
    // Only a failure the chart takes now (not a stale one, nor FAILED's own step's, which commits nothing)
    // tells.
    if (p.isStill(stateEpoch) && p.snapshot?.context.record.state !== "FAILED") {
      let waitsFor = retryWaitsFor(error);
      // A NOT_CONTROLLER is the destination controller's absence only from a step that asks it: from
      // another (a source answering it to an LME lookup), its return would be no end of the fault, and the
      // FAILED, retried at once on an active controller, would use up its budget in a moment.
      if (waitsFor === "controller" && effectType !== undefined && !ASKS_CONTROLLER.has(effectType))
        waitsFor = undefined;
      if (waitsFor === undefined) this.failureWaits.delete(p);
      else {
        const ranOn = error instanceof NoDestinationLeaderError ? error.ranOn : undefined;
        const refused = ranOn === undefined ? undefined : refusingLeader(this.ctx.destination, p.key, ranOn);
        this.failureWaits.set(p, { stateEpoch, waitsFor, ...(refused === undefined ? {} : { refused }) });
      }
    }
    p.send(this.failureOf(stateEpoch, error));
  }

  /**
   * Asks again for a bump refused with NOT_CONTROLLER, together with every other one whose wait ends at the
   * same time: the partitions of one refused BumpLeaderEpochs request wait alike, and their timers fire one
   * after the other, each (on Node's event loop) followed by its own microtasks; sent from each timer, a
   * failover of 10,000 partitions meeting a controller election asked again with 10,000 requests of one
   * partition (one metadata record batch each). One task scheduled after those timers sends them as one
   * request, as Kafka's admin client retries a refused call whole. Each is asked only if its partition is
   * still at the bump's `stateEpoch` then, and this coordinator still leads (`bumpLeaderEpochs` checks).
   */
  private retryBump(p: PartitionRuntime, effect: MirrorPartitionEffect): void {
    this.retriedBumps.push(p, effect);
    if (this.retriedBumpsTask !== undefined) return;
    this.retriedBumpsTask = this.ctx.scheduler.schedule(() => {
      this.retriedBumpsTask = undefined;
      const retried = this.retriedBumps;
      this.retriedBumps = [];
      for (let i = 0; i < retried.length; i += 2) {
        const q = retried[i] as PartitionRuntime;
        const bump = retried[i + 1] as MirrorPartitionEffect;
        if (q.isStill(bump.params.stateEpoch)) this.bumps.push(q, bump);
      }
      if (this.bumps.length > 0) this.bumpLeaderEpochs();
    }, 0);
  }

  private failureOf(stateEpoch: number, error: unknown): MirrorPartitionEvent {
    const message = error instanceof Error ? error.message : String(error);
    const retriable = (error as { retriable?: unknown } | null)?.retriable;
    return this.failure(stateEpoch, message, typeof retriable === "boolean" ? retriable : true);
  }
}

/** What a step's `error` says its FAILED waits out (see {@link RetryWaitsFor}); undefined when nothing known. */
function retryWaitsFor(error: unknown): RetryWaitsFor | undefined {
  if (!(error instanceof KafkaError) || !error.retriable) return undefined;
  if (error instanceof NoDestinationLeaderError) return "leader";
  if (error.errorName === "NOT_CONTROLLER") return "controller";
  return error.errorName === "BROKER_NOT_AVAILABLE" ? "source" : undefined;
}
