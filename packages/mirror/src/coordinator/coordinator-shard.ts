import { type Clock, ClusterError, type Random, type Scheduler } from "@cluster-mirror/cluster";
import {
  type CoordinatorShardEvent,
  type CoordinatorShardState,
  commandRefusal,
  coordinatorShardMachine,
  type MirrorPartitionCommand,
  type MirrorPartitionEffect,
  type MirrorPartitionEvent,
  type MirrorPartitionInput,
  type MirrorPartitionSnapshot,
  type MirrorPartitionSpawn,
  type MirrorPartitionsInput,
  mirrorPartitionMachine,
  mirrorPartitionsMachine,
  type PartitionGroup,
  type RecoveredPartition,
  type RetryBackoffOptions,
  recoverPartition,
  UNKNOWN_PARTITION,
} from "@cluster-mirror/machines";
import { type Actor, type AnyActorRef, createActor } from "xstate";
import { MirrorStateError } from "../admin/errors";
import type { DestinationTopicLookup } from "../destination/embedded-destination";
import type { LeaderEpochCheck } from "../destination/embedded-state-log";
import type {
  DestinationCluster,
  FailoverPlan,
  FetcherManager,
  MirrorPartitionKey,
  MirrorPartitionView,
  SourceCluster,
  StateLog,
} from "../ports";
import { EffectExecutor, type RetryWaitsFor } from "./effect-executor";
import { FaultEndsWhileLoading } from "./fault-ends-while-loading";
import type { InspectionHub } from "./inspection-hub";
import type { LeaderCatchUps } from "./leader-catch-ups";
import { foldMirrorState } from "./load-mirror-state";
import { partitionKeyId } from "./mirror-state-partition";
import { type MirrorPartitionRef, PartitionRuntime } from "./partition-runtime";
import { tombstones } from "./state-records";
import { type AppendOutcome, StateWriteBatcher } from "./state-write-batcher";

/** What a shard needs; the `CoordinatorRuntime` builds one per `__mirror_state` partition. */
export interface CoordinatorShardOptions {
  readonly brokerId: number;
  readonly partition: number;
  readonly stateLog: StateLog;
  readonly destination: DestinationCluster;
  readonly topics: DestinationTopicLookup;
  readonly sources: (mirror: string) => SourceCluster;
  readonly sourceClusterId: (mirror: string) => string;
  readonly fetchers: (brokerId: number) => FetcherManager | undefined;
  readonly clock: Clock;
  readonly random: Random;
  readonly scheduler: Scheduler;
  readonly lingerMs: number;
  readonly maxAppendBytes: number;
  readonly isrPollIntervalMs: number;
  readonly retry: RetryBackoffOptions | undefined;
  readonly warn: (message: string) => void;
  /** Called once a load completed and the shard serves commands (its partition actors started). */
  readonly onActivated?: (shard: CoordinatorShard) => void;
  /** XState's inspection of the shard's actor system (the shard, its groups and partition actors). */
  readonly inspection?: InspectionHub;
  /** Counts the retries that wait for a lagging destination leader's catch-up, over the cluster's shards. */
  readonly leaderCatchUps?: LeaderCatchUps;
  /** Whether a mirror's source did not answer this broker's last metadata refresh. */
  readonly sourceDown?: (mirror: string) => boolean;
  /** The mirrors whose source this broker's latest refresh found back after it had not answered. */
  readonly sourcesJustBack?: () => readonly string[];
}

/** Kafka's WriteMirrorStates for one partition: a command, fenced by the caller's epochs. */
export interface MirrorStateWrite {
  readonly key: MirrorPartitionKey;
  /** The committed `stateEpoch` the caller read; -1 skips the check. */
  readonly stateEpoch: number;
  readonly command: MirrorPartitionCommand;
}

interface Loaded {
  readonly leaderEpoch: number;
  readonly partitions: Map<string, PartitionRuntime>;
  readonly lmes: Map<string, { key: MirrorPartitionKey; lme: number }>;
  readonly mirrors: MirrorPartitionsInput[];
}

/** The mirror partition machine's named effects: the actions the shard provides. */
const PARTITION_EFFECTS = [
  "appendStateRecord",
  "scheduleCommitRetry",
  "cancelCommitRetry",
  "markReadOnly",
  "clearReadOnly",
  "clearLastMirrorEpoch",
  "recordLastMirrorEpoch",
  "checkMirrorLoop",
  "lookupLastMirrorEpoch",
  "truncateFully",
  "truncateToEpoch",
  "cancelTruncation",
  "awaitIsrTruncated",
  "addFetcher",
  "removeFetcher",
  "holdAppends",
  "releaseAppends",
  "bumpLeaderEpoch",
  "abortOpenTransactions",
  "abortHangingTransactions",
  "appendPidReset",
  "scheduleRetry",
  "cancelRetryTimer",
] as const satisfies readonly MirrorPartitionEffect["type"][];

/** Whether the operator asked to pause `topic` (`mirror.name` ends with `.paused`). */
function pauseRequested(topics: DestinationTopicLookup, topic: string): boolean {
  return topics.topicConfig(topic, "mirror.name")?.endsWith(".paused") ?? false;
}

/** A fresh partition (no state yet), to check a command against before spawning an actor for it. */
let unknownSnapshot: MirrorPartitionSnapshot | undefined;

/**
 * The mirror coordinator of one `__mirror_state` partition (Kafka's `CoordinatorShard` inside the
 * `CoordinatorRuntime`), an XState actor of `coordinatorShardMachine`. On election it replays the partition
 * from its log start and spawns, per mirror, a group actor that spawns one partition actor per key (each
 * rehydrated through `recovering`, so its state's effects run again); then it serves commands and the
 * partition actors run their effects through the actions the shard provides. On resignation the shard
 * leaves ACTIVE, which stops every group and so every partition actor.
 */
export class CoordinatorShard {
  private readonly actor: Actor<typeof coordinatorShardMachine>;
  /** Bumped on every load and unload: work of an older generation is discarded. */
  private generation = 0;
  private partitions = new Map<string, PartitionRuntime>();
  private lmes = new Map<string, { key: MirrorPartitionKey; lme: number }>();
  private writer: StateWriteBatcher | undefined;
  private executor: EffectExecutor | undefined;
  private loaded: Loaded | undefined;
  /** New keys' partitions waiting to be spawned together on the next microtask, by mirror. */
  private spawnQueue: Map<string, PartitionRuntime[]> | undefined;
  /** Removes the shard's actor system from the inspection hub; set while it is attached. */
  private detachInspection: (() => void) | undefined;
  /**
   * Mirrors whose tombstones are being written (how many deletions of each run): their partitions take no
   * command or data-path event until then, so no record of theirs lands after the tombstones.
   */
  private readonly deleting = new Map<string, number>();
  /**
   * Mirrors whose deletion failed after some of its tombstones were (or may have been) appended: a write
   * that timed out may still commit, as Kafka's transaction coordinator keeps a transition pending after
   * REQUEST_TIMED_OUT or NOT_ENOUGH_REPLICAS_AFTER_APPEND. The states held here may be gone from the log,
   * so the mirror's partitions take no command or data-path event until the deletion is retried and
   * completes, or this shard loads again (it then reads what the log holds).
   */
  private readonly deletionsInDoubt = new Set<string>();
  /** Rejects the deletions waiting for their tombstones when the shard unloads (its writer drops them). */
  private readonly deletionAborts = new Set<(error: Error) => void>();
  /** What ended while the shard loads, for the FAILED partitions it loads; handed to the executor once ACTIVE. */
  private endedWhileLoading: FaultEndsWhileLoading | undefined;

  constructor(private readonly options: CoordinatorShardOptions) {
    const actions: Record<string, (args: { self: AnyActorRef }, params: unknown) => void> = {};
    for (const type of PARTITION_EFFECTS) {
      actions[type] = ({ self }, params) => this.runEffect(self, type, params);
    }
    const partitionLogic = mirrorPartitionMachine.provide({ actions });
    const logic = coordinatorShardMachine.provide({
      actors: {
        mirrorPartitions: mirrorPartitionsMachine.provide({ actors: { mirrorPartition: partitionLogic } }),
      },
      actions: {
        loadPartition: (_, params) => this.scheduleLoad(params.leaderEpoch),
        abortLoad: ({ event }) => {
          this.generation++;
          this.loaded = undefined;
          // A newer election restarts the load (LOADING again): what ended since the first began is still
          // unheard, and kept (`scheduleLoad`). Leaving LOADING otherwise (resigned, shut down, failed) drops it.
          if (event.type !== "ELECTED") this.endedWhileLoading = undefined;
        },
        activateShard: () => this.activate(),
        updateShardEpoch: () => {}, // the writer reads the epoch from the shard's context on every append
        unloadShard: () => this.unload(),
      },
    });
    this.actor = createActor(logic, {
      id: `__mirror_state-${options.partition}`,
      input: { partition: options.partition },
    });
    this.detachInspection = options.inspection?.attach(this.actor.system);
    this.actor.start();
  }

  /** The `__mirror_state` partition this shard owns. */
  get partition(): number {
    return this.options.partition;
  }
  /** INITIAL, LOADING, ACTIVE, FAILED or CLOSED. */
  get state(): CoordinatorShardState {
    return this.actor.getSnapshot().value as CoordinatorShardState;
  }
  /** The leader epoch of the current (or last) leadership. */
  get leaderEpoch(): number {
    return this.actor.getSnapshot().context.leaderEpoch;
  }
  /** Why the load failed, when FAILED. */
  get errorMessage(): string | null {
    return this.actor.getSnapshot().context.errorMessage;
  }
  /** Number of partition actors loaded. */
  get size(): number {
    return this.partitions.size;
  }

  /** This broker became leader of the partition at `leaderEpoch`. */
  elected(leaderEpoch: number, reload = false): void {
    this.dispatch({ type: "ELECTED", leaderEpoch, reload });
  }
  /** This broker stopped leading the partition (`leaderEpoch`: the new leader's, when known). */
  resigned(leaderEpoch?: number): void {
    this.dispatch(leaderEpoch === undefined ? { type: "RESIGNED" } : { type: "RESIGNED", leaderEpoch });
  }
  /** The broker shuts down. */
  shutdown(): void {
    this.dispatch({ type: "SHUTDOWN" });
  }
  /** Loads a FAILED shard again at the same epoch. */
  retryLoad(): void {
    this.dispatch({ type: "RETRY_LOAD", leaderEpoch: this.leaderEpoch });
  }

  /**
   * Sends a command to a partition's actor. A key without state gets an actor (in UNKNOWN) only when the
   * command is one UNKNOWN accepts; new keys' actors are spawned together on the next microtask, one batch
   * per mirror, and the command is delivered once its actor runs.
   */
  command(key: MirrorPartitionKey, command: MirrorPartitionCommand): Promise<void> {
    this.requireActive(key);
    if (this.deleting.has(key.mirror)) {
      return Promise.reject(
        new MirrorStateError(
          key.mirror,
          `Mirror '${key.mirror}' is being deleted: ${key.topic}-${key.partition} takes no ${command.type} while its state is tombstoned. Create the mirror again once the deletion completed.`,
        ),
      );
    }
    if (this.deletionsInDoubt.has(key.mirror)) {
      return Promise.reject(
        new MirrorStateError(
          key.mirror,
          `Mirror '${key.mirror}' was being deleted and its tombstones may be in __mirror_state (their append failed after it reached the log): ${key.topic}-${key.partition} takes no ${command.type} until the deletion completes. Delete the mirror again.`,
        ),
      );
    }
    const id = partitionKeyId(key);
    let p = this.partitions.get(id);
    if (p === undefined) {
      if (unknownSnapshot === undefined) unknownSnapshot = recoverPartition({}).snapshot;
      if (!unknownSnapshot.can(command)) return Promise.reject(commandRefusal(unknownSnapshot, command));
      p = new PartitionRuntime(id, key);
      this.partitions.set(id, p);
      this.enqueueSpawn(p);
    }
    return p.command(command);
  }

  private enqueueSpawn(p: PartitionRuntime): void {
    if (this.spawnQueue === undefined) {
      this.spawnQueue = new Map();
      const generation = this.generation;
      queueMicrotask(() => this.spawnQueued(generation));
    }
    const list = this.spawnQueue.get(p.key.mirror);
    if (list === undefined) this.spawnQueue.set(p.key.mirror, [p]);
    else list.push(p);
  }

  private spawnQueued(generation: number): void {
    const queue = this.spawnQueue;
    this.spawnQueue = undefined;
    if (queue === undefined) return;
    if (generation !== this.generation || this.state !== "ACTIVE") {
      for (const list of queue.values()) for (const p of list) p.close();
      return;
    }
    const mirrors: MirrorPartitionsInput[] = [];
    for (const [mirror, list] of queue) {
      mirrors.push({
        mirror,
        partitions: list.map((p) => ({
          id: p.id,
          input: this.recoveryInput(p.key, UNKNOWN_PARTITION),
        })),
      });
    }
    const before = this.actor.getSnapshot().context.groups;
    this.actor.send({ type: "SPAWN_PARTITIONS", mirrors });
    this.attachSpawned(before);
  }

  /**
   * Connects each partition actor spawned since the shard had `before` groups to its handle (delivering what
   * was sent meanwhile): the children of the groups that are new or grew. Partition actors are found as
   * their group's children by id (no `systemId`: registering 100,000 names in the actor system cost time
   * and memory for nothing else).
   */
  private attachSpawned(before: readonly PartitionGroup[]): void {
    const snapshot = this.actor.getSnapshot();
    const sizes = new Map(before.map((g) => [g.id, g.size]));
    for (const g of snapshot.context.groups) {
      if (sizes.get(g.id) === g.size) continue;
      const group = snapshot.children[g.id] as AnyActorRef | undefined;
      const children = (group?.getSnapshot() as { children?: Record<string, AnyActorRef | undefined> })
        ?.children;
      if (children === undefined) continue;
      for (const id in children) {
        const p = this.partitions.get(id);
        const ref = children[id];
        if (p !== undefined && ref !== undefined && !p.isAttached) p.attach(ref as MirrorPartitionRef);
      }
    }
  }

  /** Delivers an observation or failure from the data path to a loaded partition (ignored otherwise). */
  observe(key: MirrorPartitionKey, event: MirrorPartitionEvent): void {
    if (this.state !== "ACTIVE" || this.deleting.has(key.mirror) || this.deletionsInDoubt.has(key.mirror))
      return;
    this.partitions.get(partitionKeyId(key))?.send(event);
  }

  /** Committed views of this shard's partitions (of one mirror when given). */
  describe(mirror?: string): MirrorPartitionView[] {
    if (this.state !== "ACTIVE") return [];
    const out: MirrorPartitionView[] = [];
    for (const [id, p] of this.partitions) {
      if (mirror !== undefined && p.key.mirror !== mirror) continue;
      if (p.isClosed) continue;
      const view = p.view(this.lmes.get(id)?.lme ?? -1);
      if (view !== undefined) out.push(view);
    }
    return out;
  }

  /** The committed view of one partition, if this shard has it. */
  view(key: MirrorPartitionKey): MirrorPartitionView | undefined {
    const id = partitionKeyId(key);
    const p = this.partitions.get(id);
    return p === undefined || p.isClosed ? undefined : p.view(this.lmes.get(id)?.lme ?? -1);
  }

  /**
   * Retries now the FAILED partitions of `mirror` in this shard whose retry timer waits for the source
   * (`EffectExecutor.retryNow`): it answers again. Returns how many. Nothing unless ACTIVE; noted while
   * LOADING, for the FAILED partitions it loads (see {@link FaultEndsWhileLoading}).
   */
  retryFailedNow(mirror: string): number {
    if (this.state === "LOADING") this.endedWhileLoading?.sourceBack(mirror);
    let retried = 0;
    for (const p of this.partitions.values())
      if (p.key.mirror === mirror && this.retry(p, "source")) retried++;
    return retried;
  }

  /**
   * Retries now the FAILED partitions in this shard whose retry timer waits for the destination's controller
   * (a step refused with NOT_CONTROLLER: `EffectExecutor.retryNow`), active again. Returns how many. Noted
   * while LOADING, as `retryFailedNow`.
   */
  retryControllerWaitsNow(): number {
    if (this.state === "LOADING") this.endedWhileLoading?.controllerBack();
    let retried = 0;
    for (const p of this.partitions.values()) if (this.retry(p, "controller")) retried++;
    return retried;
  }

  /** Retries `key` now if its FAILED waits for a destination leader, which it has again: whether it did. */
  retryNow(key: MirrorPartitionKey): boolean {
    const p = this.partitions.get(partitionKeyId(key));
    return p !== undefined && this.retry(p, "leader");
  }

  private retry(p: PartitionRuntime, ended: RetryWaitsFor): boolean {
    const executor = this.executor;
    if (this.state !== "ACTIVE" || executor === undefined || p.isClosed) return false;
    return executor.retryNow(p, ended);
  }

  /**
   * The partitions of `mirror` in this shard that a deletion must wait for, each with why: a change waits
   * for its append, it is not STOPPED, or STOPPED's step has not cleared the read-only flag yet (it waits for
   * the destination's controller or the failover's barrier: tombstoned, nothing would ever clear it).
   */
  partitionsNotAtRest(mirror: string): string[] {
    const busy: string[] = [];
    for (const p of this.partitions.values()) {
      if (p.key.mirror !== mirror || p.isClosed) continue;
      const s = p.snapshot;
      if (s === undefined || s.context.pending !== null)
        busy.push(`${p.key.topic}-${p.key.partition} (a change waits)`);
      else if (s.context.record.state !== "STOPPED" && s.context.record.state !== "UNKNOWN") {
        busy.push(`${p.key.topic}-${p.key.partition} (${s.context.record.state})`);
      } else if (this.executor?.stoppedStepPending(p) === true) {
        busy.push(
          `${p.key.topic}-${p.key.partition} (STOPPED, its read-only flag not cleared yet: STOPPED's step waits for the destination's controller or the failover's barrier)`,
        );
      }
    }
    return busy;
  }

  /** See `MirrorCoordinators.failoverPlan`: read from the actor's context, undefined before it is spawned. */
  failoverPlan(key: MirrorPartitionKey): FailoverPlan | undefined {
    const p = this.partitions.get(partitionKeyId(key));
    const c = p === undefined || p.isClosed ? undefined : p.snapshot?.context;
    if (c === undefined) return undefined;
    return {
      aligned: c.aligned && !c.lmeCaptured,
      lastMirrorEpoch: c.lastMirrorEpoch,
      holdsMirroredData: c.holdsMirroredData,
      localLeaderEpoch: c.localLeaderEpoch,
    };
  }

  /**
   * Runs STOPPED's step (clear the read-only flag) again for a partition of a removed topic that is STOPPED
   * with no change waiting for its append, or that has no state at all: a re-add removed again before its
   * START leaves the flag its `mirror.name` set, and a topic created as a mirror whose START never came is
   * read-only by its `mirror.name` alone; nothing else would ever make them writable. Ordered with the
   * partition's commands (all of this runs synchronously): a START waiting for its append is left to
   * commit, and the removal's STOP that follows it ends in STOPPED, which clears the flag. Clearing it under
   * that START instead would let produces land that its PREPARING then truncates. Nothing when this shard
   * is not active. Returns true when a change waits there (a START appended, or queued for an actor not
   * spawned yet): the committed view the caller read says STOPPED (or nothing), so it would send no STOP,
   * and the START would go on to MIRRORING under a removed `mirror.name`; the caller sends STOP, which waits
   * behind that change.
   */
  clearReadOnlyIfStopped(key: MirrorPartitionKey): boolean {
    const executor = this.executor;
    if (this.state !== "ACTIVE" || executor === undefined) return false;
    const p = this.partitions.get(partitionKeyId(key));
    if (p !== undefined) {
      if (p.isClosed) return false;
      const s = p.snapshot;
      if (s === undefined || s.context.pending !== null) return true;
      if (s.context.record.state !== "STOPPED") return false;
      // The flag its failover set is still set: STOPPED's own step clears it once the barrier is confirmed.
      if (executor.barrierUnconfirmed(p)) return false;
    }
    try {
      executor.clearReadOnly(key);
    } catch (error) {
      // The controller failing over (NOT_CONTROLLER), say: the next drive tries again. Thrown out of the
      // drive, it would cut short the commands of every partition after this one.
      const why = error instanceof Error ? error.message : String(error);
      this.options.warn(`could not clear the read-only flag of ${key.topic}-${key.partition}: ${why}`);
    }
    return false;
  }

  /**
   * Writes tombstones for both records of every partition of `mirror` through the write path, then drops
   * their actors. Resolves once every tombstone is committed. NOT_COORDINATOR (or
   * COORDINATOR_NOT_AVAILABLE while loading) when the shard is not ACTIVE: it would know none of the keys.
   * INVALID_MIRROR_STATE, before anything is written, while a partition of the mirror is not at rest
   * (a change waits for its append, or it is not STOPPED): its next records would land after the
   * tombstones and bring it back at the next load. Also while a STOPPED one's step has not cleared the
   * read-only flag yet (`EffectExecutor.stoppedStepPending`: it waits for the destination's controller):
   * tombstoned, nothing would ever clear it. Until the tombstones are committed, the mirror's
   * partitions take no command (`command` refuses) and no data-path event, for the same reason; after a
   * failure that left some of them on the log (or may have: a timeout), until a retry of the deletion
   * completes or the shard loads again. NOT_COORDINATOR, not a wait without end, when the shard unloads
   * before every tombstone's append settled.
   */
  async tombstoneMirror(mirror: string): Promise<void> {
    this.requireActive(undefined);
    refuseUnlessAtRest(mirror, this.partitionsNotAtRest(mirror));
    const keys = new Map<string, MirrorPartitionKey>();
    for (const [id, p] of this.partitions) if (p.key.mirror === mirror && !p.isClosed) keys.set(id, p.key);
    for (const [id, l] of this.lmes) if (l.key.mirror === mirror) keys.set(id, l.key);
    const writer = this.writer;
    if (writer === undefined || keys.size === 0) return;
    const generation = this.generation;
    this.deleting.set(mirror, (this.deleting.get(mirror) ?? 0) + 1);
    try {
      await this.writeTombstones(mirror, keys, writer);
    } finally {
      const n = (this.deleting.get(mirror) ?? 1) - 1;
      if (n > 0) this.deleting.set(mirror, n);
      else this.deleting.delete(mirror);
    }
    if (generation !== this.generation) return;
    this.deletionsInDoubt.delete(mirror);
    for (const id of keys.keys()) {
      const p = this.partitions.get(id);
      if (p) {
        this.executor?.cancelTimers(p);
        p.close();
      }
      this.partitions.delete(id);
      this.lmes.delete(id);
    }
    // Stopping the mirror's group stops its partition actors (one child of the shard, not one per key).
    this.actor.send({ type: "STOP_MIRROR", mirror });
  }

  /**
   * Appends both tombstones of every key; resolves once all are committed. Rejects once every append
   * settled when one failed (the mirror's deletion is then in doubt if another landed, or may have), and at
   * once with NOT_COORDINATOR when the shard unloads first (its writer drops what it holds).
   */
  private writeTombstones(
    mirror: string,
    keys: Map<string, MirrorPartitionKey>,
    writer: StateWriteBatcher,
  ): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let waiting = keys.size * 2;
      let landed = false;
      let failure: Error | undefined;
      const abort = (error: Error): void => {
        this.deletionAborts.delete(abort);
        reject(error);
      };
      this.deletionAborts.add(abort);
      const done = (o: AppendOutcome): void => {
        if (o.kind === "committed" || (o.kind === "failed" && o.maybeAppended)) landed = true;
        if (o.kind !== "committed" && failure === undefined) {
          failure = new ClusterError(
            o.kind === "fenced" ? "NOT_COORDINATOR" : "REQUEST_TIMED_OUT",
            `tombstone for mirror '${mirror}' not written: ${o.message}; retry the deletion`,
          );
        }
        if (--waiting > 0 || !this.deletionAborts.delete(abort)) return;
        if (failure === undefined) resolve();
        else {
          if (landed) this.deletionsInDoubt.add(mirror);
          reject(failure);
        }
      };
      for (const key of keys.values()) for (const record of tombstones(key)) writer.write(record, done);
    });
  }

  /**
   * Kafka's ReadMirrorStates: committed states of `keys` with this coordinator's leader epoch, which the
   * reader validates. `leaderEpoch`, when given, must be this shard's (a stale reader is refused).
   */
  readMirrorStates(
    keys: readonly MirrorPartitionKey[],
    leaderEpoch?: number,
  ): { leaderEpoch: number; states: (MirrorPartitionView | undefined)[] } {
    this.requireActive(keys[0]);
    if (leaderEpoch !== undefined) this.checkEpoch(leaderEpoch);
    return { leaderEpoch: this.leaderEpoch, states: keys.map((k) => this.view(k)) };
  }

  /**
   * Kafka's WriteMirrorStates: applies commands for remote brokers. Refused as a whole with
   * FENCED_LEADER_EPOCH when the caller's coordinator epoch is stale; a write whose `stateEpoch` is not the
   * committed one is refused on its own (the caller acted on an old state).
   */
  async writeMirrorStates(
    leaderEpoch: number,
    writes: readonly MirrorStateWrite[],
  ): Promise<{ key: MirrorPartitionKey; error?: Error }[]> {
    this.requireActive(writes[0]?.key);
    this.checkEpoch(leaderEpoch);
    return Promise.all(
      writes.map(async (w) => {
        const current = w.stateEpoch >= 0 ? (this.view(w.key)?.stateEpoch ?? 0) : -1;
        if (w.stateEpoch >= 0 && w.stateEpoch !== current) {
          return {
            key: w.key,
            error: new ClusterError(
              "INVALID_REQUEST",
              `stale write for ${w.key.mirror}/${w.key.topic}-${w.key.partition}: state epoch ${w.stateEpoch}, committed ${current}; read the state again and retry`,
            ),
          };
        }
        try {
          await this.command(w.key, w.command);
          return { key: w.key };
        } catch (error) {
          return { key: w.key, error: error instanceof Error ? error : new Error(String(error)) };
        }
      }),
    );
  }

  private checkEpoch(leaderEpoch: number): void {
    const mine = this.leaderEpoch;
    if (leaderEpoch < mine) {
      throw new ClusterError(
        "FENCED_LEADER_EPOCH",
        `__mirror_state-${this.partition}: the caller's coordinator epoch ${leaderEpoch} is older than ${mine}; refresh metadata and retry`,
      );
    }
    if (leaderEpoch > mine) {
      throw new ClusterError(
        "UNKNOWN_LEADER_EPOCH",
        `__mirror_state-${this.partition}: the caller's coordinator epoch ${leaderEpoch} is newer than ${mine}; this broker lags, retry`,
      );
    }
  }

  private requireActive(key: MirrorPartitionKey | undefined): void {
    if (this.state === "ACTIVE") return;
    const what = key ? ` for ${key.mirror}/${key.topic}-${key.partition}` : "";
    if (this.state === "FAILED") {
      // Kafka answers NOT_COORDINATOR too; retrying elsewhere does not help until the load succeeds.
      throw new ClusterError(
        "NOT_COORDINATOR",
        `broker ${this.options.brokerId} leads __mirror_state-${this.partition} but could not load it, so no coordinator serves its mirror partitions${what}: ${this.errorMessage ?? "no reason given"}`,
      );
    }
    throw new ClusterError(
      this.state === "LOADING" ? "COORDINATOR_NOT_AVAILABLE" : "NOT_COORDINATOR",
      `broker ${this.options.brokerId} is not an active coordinator of __mirror_state-${this.partition}${what} (state ${this.state}); retry on the partition's leader`,
    );
  }

  /**
   * The shard's actor system is inspected unless the shard is CLOSED (it resigned or its broker shut down):
   * attached again before an event that may load it, so an election is seen whole, and detached once the
   * shard closed, so a moved leadership leaves neither a system nor an observer behind in the hub.
   */
  private dispatch(event: CoordinatorShardEvent): void {
    if (this.detachInspection === undefined) {
      this.detachInspection = this.options.inspection?.attach(this.actor.system);
    }
    this.actor.send(event);
    if (this.state === "CLOSED") {
      this.detachInspection?.();
      this.detachInspection = undefined;
    }
  }

  /** Runs a partition actor's named effect (the shard provides the machine's actions with this). */
  private runEffect(self: AnyActorRef, type: MirrorPartitionEffect["type"], params: unknown): void {
    const executor = this.executor;
    if (executor === undefined) return;
    const p = this.partitions.get(self.id);
    if (p === undefined || p.isClosed) return;
    executor.run(p, { type, params } as MirrorPartitionEffect);
  }

  /**
   * The replay runs as its own task so that a resignation or a newer election can abort it. It waits (polling
   * every `isrPollIntervalMs`) until the log holds nothing above its high watermark: records an earlier
   * leader appended that not every in-sync replica has yet are truncated should one of those be elected
   * next, and a partition actor rehydrated from one would run its effects (truncate a log, write a barrier)
   * for a transition that never counted. This leader never truncates its own log, so once the high
   * watermark reaches its end they are committed.
   */
  private scheduleLoad(leaderEpoch: number): void {
    const generation = ++this.generation;
    // A load started again (a newer election while loading) keeps what ended since the first began. A source
    // this broker's latest refresh found back may be unheard by the coordinator before (its refresh later).
    if (this.endedWhileLoading === undefined) {
      const ended = new FaultEndsWhileLoading();
      for (const mirror of this.options.sourcesJustBack?.() ?? []) ended.sourceBack(mirror);
      this.endedWhileLoading = ended;
    }
    const task = (): void => {
      if (generation !== this.generation || this.state !== "LOADING") return;
      let uncommitted = false;
      try {
        uncommitted = this.options.stateLog.hasUncommittedTail?.() ?? false;
      } catch {
        // The load below reports what is wrong with the log.
      }
      if (uncommitted) {
        this.options.scheduler.schedule(task, this.options.isrPollIntervalMs);
        return;
      }
      let loaded: Loaded;
      try {
        loaded = this.load(leaderEpoch);
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        // Kafka's CoordinatorRuntime logs the failed load as an error: nothing else tells the operator.
        this.options.warn(
          `broker ${this.options.brokerId} could not load __mirror_state-${this.partition} (leader epoch ${leaderEpoch}); its mirror partitions have no coordinator until the partition loads (a new leader or election): ${message}`,
        );
        this.dispatch({ type: "LOAD_FAILED", leaderEpoch, message });
        return;
      }
      this.loaded = loaded;
      // Spawns the groups and their partition actors; each starts in `recovering`, so the effects its
      // recovered state's commit started run again (Kafka's onLoaded: they are idempotent).
      const before = this.actor.getSnapshot().context.groups;
      this.dispatch({ type: "LOAD_COMPLETED", leaderEpoch, mirrors: loaded.mirrors });
      if ((this.state as CoordinatorShardState) !== "ACTIVE" || this.leaderEpoch !== leaderEpoch) return;
      this.attachSpawned(before);
      this.options.onActivated?.(this);
    };
    this.options.scheduler.schedule(task, 0);
  }

  private load(leaderEpoch: number): Loaded {
    const o = this.options;
    const folded = foldMirrorState(o.stateLog.readAll(), o.warn);
    const partitions = new Map<string, PartitionRuntime>();
    const lmes = new Map<string, { key: MirrorPartitionKey; lme: number }>();
    const byMirror = new Map<string, MirrorPartitionSpawn[]>();
    // A topic's name and pause flag are read once per topic, not once per partition: the load runs as one
    // task, so they cannot change in between.
    const topics = new Map<string, { name: string; paused: boolean }>();
    for (const [id, entry] of folded) {
      let topic = topics.get(entry.topicId);
      if (topic === undefined) {
        const name = o.topics.topicName(entry.topicId) ?? entry.topicId;
        topic = { name, paused: pauseRequested(o.topics, name) };
        topics.set(entry.topicId, topic);
      }
      const key: MirrorPartitionKey = {
        mirror: entry.mirrorName,
        topic: topic.name,
        topicId: entry.topicId,
        partition: entry.partition,
      };
      if (entry.lastMirrorEpoch >= 0) lmes.set(id, { key, lme: entry.lastMirrorEpoch });
      if (entry.state === null) continue;
      const record = {
        ...entry.state,
        lastMirrorEpoch: entry.lastMirrorEpoch,
        ...(entry.lastMirrorEpochSinceState ? { lastMirrorEpochCaptured: true } : {}),
        ...(entry.alignedInSession ? { alignedInSession: true } : {}),
      };
      const input = this.recoveryInput(key, record, topic.paused, entry.lastMirrorEpochRecorded);
      partitions.set(id, new PartitionRuntime(id, key, record.stateEpoch));
      const spawns = byMirror.get(key.mirror);
      if (spawns === undefined) byMirror.set(key.mirror, [{ id, input }]);
      else spawns.push({ id, input });
    }
    const mirrors = [...byMirror].map(([mirror, spawns]) => ({ mirror, partitions: spawns }));
    return { leaderEpoch, partitions, lmes, mirrors };
  }

  private recoveryInput(
    key: MirrorPartitionKey,
    record: RecoveredPartition,
    paused = pauseRequested(this.options.topics, key.topic),
    lmeRecorded = false,
  ): MirrorPartitionInput {
    const o = this.options;
    const leader = o.destination.leaderOf(key.topic, key.partition);
    let localLeaderEpoch = -1;
    // The log's last epoch: a recovered PREPARING reads from it whether its truncation cut the log already.
    let logLatestEpoch: number | undefined;
    // Local producers' data above the recorded LME: a recovered failover retried after STOPPED leaves it alone.
    let localWritesAboveLme: boolean | undefined;
    try {
      const replica = leader >= 0 ? o.destination.replica(leader, key.topic, key.partition) : undefined;
      localLeaderEpoch = replica?.leaderEpoch() ?? -1;
      logLatestEpoch = replica?.latestEpoch();
      // Not known when the leader cannot be read: the records decide alone, as before.
      try {
        localWritesAboveLme = lmeRecorded ? replica?.hasDataBatchAbove(record.lastMirrorEpoch) : undefined;
      } catch {
        localWritesAboveLme = undefined;
      }
    } catch {
      localLeaderEpoch = -1;
      logLatestEpoch = undefined;
    }
    const failedRetryable = record.state === "FAILED" && record.retryAttempt >= 0;
    return {
      record,
      localLeaderEpoch,
      ...(logLatestEpoch === undefined ? {} : { logLatestEpoch }),
      ...(localWritesAboveLme === undefined ? {} : { localWritesAboveLme }),
      pauseRequested: paused,
      ...(failedRetryable ? { retryJitter: o.random.next() } : {}),
      ...(o.retry ? { retry: o.retry } : {}),
    };
  }

  private activate(): void {
    const loaded = this.loaded;
    const endedWhileLoading = this.endedWhileLoading;
    this.loaded = undefined;
    this.endedWhileLoading = undefined;
    if (loaded === undefined) return;
    const o = this.options;
    const writer = new StateWriteBatcher(
      o.stateLog,
      () => this.leaderEpoch,
      o.scheduler,
      o.lingerMs,
      o.maxAppendBytes,
    );
    const check = o.stateLog as Partial<LeaderEpochCheck>;
    const generation = this.generation;
    this.writer = writer;
    this.executor = new EffectExecutor({
      brokerId: o.brokerId,
      destination: o.destination,
      sources: o.sources,
      sourceClusterId: o.sourceClusterId,
      fetchers: o.fetchers,
      clock: o.clock,
      random: o.random,
      scheduler: o.scheduler,
      writer,
      isrPollIntervalMs: o.isrPollIntervalMs,
      stillCoordinator: () =>
        generation === this.generation &&
        this.state === "ACTIVE" &&
        (check.isLeaderAt?.(this.leaderEpoch) ?? true),
      onLastMirrorEpochCommitted: (p, lme) => {
        if (p.isClosed) return;
        if (lme === null) this.lmes.delete(p.id);
        else this.lmes.set(p.id, { key: p.key, lme });
      },
      ...(o.leaderCatchUps ? { leaderCatchUps: o.leaderCatchUps } : {}),
      ...(o.sourceDown ? { sourceDown: o.sourceDown } : {}),
      ...(endedWhileLoading ? { endedWhileLoading } : {}),
    });
    this.partitions = loaded.partitions;
    this.lmes = loaded.lmes;
  }

  private unload(): void {
    this.generation++;
    this.endedWhileLoading = undefined;
    // What this shard held is dropped; the next load reads what the log holds, the tombstones among it.
    this.deletionsInDoubt.clear();
    for (const abort of [...this.deletionAborts]) {
      abort(
        new ClusterError(
          "NOT_COORDINATOR",
          `broker ${this.options.brokerId} stopped coordinating __mirror_state-${this.partition} before the deletion's tombstones were acknowledged (some may still commit); retry the deletion on its new leader`,
        ),
      );
    }
    this.writer?.close();
    this.writer = undefined;
    this.executor?.cancelAll();
    this.executor = undefined;
    for (const p of this.partitions.values()) p.close();
    this.partitions = new Map();
    this.lmes = new Map();
    this.loaded = undefined;
    // The partition actors themselves stop with their groups as the shard leaves ACTIVE.
  }
}

/** INVALID_MIRROR_STATE naming the partitions of `mirror` a deletion must wait for, if any. */
export function refuseUnlessAtRest(mirror: string, busy: readonly string[]): void {
  if (busy.length === 0) return;
  throw new MirrorStateError(
    mirror,
    `Mirror '${mirror}' still has partitions that are not STOPPED and writable: ${busy.join(", ")}. Wait until they are STOPPED and their topics writable, then delete the mirror.`,
  );
}
