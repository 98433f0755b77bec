import { ClusterError } from "@cluster-mirror/cluster";
import {
  commandRefusal,
  lifecycleStateOf,
  type MirrorPartitionActor,
  type MirrorPartitionCommand,
  type MirrorPartitionEvent,
  type MirrorPartitionSnapshot,
} from "@cluster-mirror/machines";
import type { MirrorPartitionKey, MirrorPartitionView } from "../ports";
import { lastMirrorEpochKey, stateRecordKey } from "./state-records";

/** The live partition actor (a child of its mirror's group, spawned by the coordinator shard). */
export type MirrorPartitionRef = Pick<MirrorPartitionActor, "send" | "getSnapshot" | "id">;

/** A command that started a change and waits for that change's commit. */
interface CommitWaiter {
  readonly stateEpoch: number;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

/** A command refused only because another change waits for its append: tried again once that settles. */
interface DeferredCommand {
  readonly command: MirrorPartitionCommand;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

/**
 * The coordinator's handle on one mirror partition actor: its key, its encoded record keys, and the
 * commands waiting for a commit. The actor itself (an XState actor of `mirrorPartitionMachine`, spawned by
 * the shard) owns the state and its mailbox: events are processed one at a time, in order, and an event
 * sent while one is being processed (an effect that answered at once) is queued behind it. Effects are the
 * machine's named actions, provided by the shard; the handle only routes events and settles commands.
 */
export class PartitionRuntime {
  private ref: MirrorPartitionRef | undefined;
  /** Events and commands sent before the actor was spawned (a batch spawns on the next microtask). */
  private early: (MirrorPartitionEvent | DeferredCommand)[] | undefined;
  private waiters: CommitWaiter[] | undefined;
  private deferred: DeferredCommand[] | undefined;
  private stateKeyBytes: Buffer | undefined;
  private lmeKeyBytes: Buffer | undefined;
  private closed = false;
  /** Nesting of `send` calls (an effect that answers inside the actor's processing sends again). */
  private depth = 0;
  /** PREPARING's truncation cut the log and its TRUNCATED is not delivered yet: commands wait for it. */
  private truncationUnreported = false;
  /** The failover barrier this coordinator wrote (STOPPING's state epoch and LME), until STOPPED takes it. */
  private barrier: { stateEpoch: number; lme: number } | undefined;

  constructor(
    /** The partition's id (`partitionKeyId`): the coordinator's map key and the actor's id. */
    readonly id: string,
    readonly key: MirrorPartitionKey,
    /**
     * The `StateEpoch` of the record this coordinator replayed the partition from as it loaded (-1 for a key
     * it created): a FAILED at that epoch was committed by an earlier coordinator, and what it waits out (see
     * `RetryWaitsFor`) was known only there.
     */
    readonly loadedStateEpoch = -1,
  ) {}

  /** The encoded `MirrorPartitionState` key of this partition, encoded once. */
  get stateKey(): Buffer {
    if (this.stateKeyBytes === undefined) this.stateKeyBytes = stateRecordKey(this.key);
    return this.stateKeyBytes;
  }

  /** The encoded `LastMirrorEpochs` key of this partition, encoded once. */
  get lastMirrorEpochKey(): Buffer {
    if (this.lmeKeyBytes === undefined) this.lmeKeyBytes = lastMirrorEpochKey(this.key);
    return this.lmeKeyBytes;
  }

  /** Whether the actor was spawned (a new key's actor is spawned with a batch, on the next microtask). */
  get isAttached(): boolean {
    return this.ref !== undefined;
  }

  /** The actor's snapshot (pending changes included; `view()` is the committed state). */
  get snapshot(): MirrorPartitionSnapshot | undefined {
    return this.ref?.getSnapshot();
  }

  /**
   * True while the state that requested an effect at `stateEpoch` still holds: the committed record is at
   * that epoch and no change to another lifecycle state waits for its append. An effect that changes the
   * data checks this once it has waited (for a source's answer), so a change that overtook it (a removal, a
   * failure) is never undone by it.
   */
  isStill(stateEpoch: number): boolean {
    if (this.isClosed) return false;
    const s = this.ref?.getSnapshot();
    if (s === undefined || s.context.record.stateEpoch !== stateEpoch) return false;
    const pending = s.context.pending;
    return pending === null || pending.to === s.context.record.state;
  }

  /** True once the shard unloaded this actor or another coordinator fenced it: it takes no more events. */
  get isClosed(): boolean {
    if (this.closed) return true;
    const s = this.ref?.getSnapshot();
    return s !== undefined && (s.status !== "active" || lifecycleStateOf(s) === "fenced");
  }

  /** Connects the spawned actor and delivers what was sent before, in order. */
  attach(ref: MirrorPartitionRef): void {
    this.ref = ref;
    const early = this.early;
    this.early = undefined;
    for (const item of early ?? []) {
      if ("command" in item) this.runCommand(item);
      else this.send(item);
    }
  }

  /**
   * PREPARING's truncation just cut the log; its TRUNCATED follows on a later microtask. Until it is
   * delivered, commands wait (as behind a pending change): a removal (STOP) that overtook it would find the
   * partition still taking its log for the topic's own, untruncated one, and its failover would then write
   * no ABORT markers: the source's transactions the cut reopened would hang.
   */
  noteTruncated(): void {
    this.truncationUnreported = true;
  }

  /**
   * STOPPING (at `stateEpoch`) wrote its PID reset barrier above `lme` and the in-sync replicas have it. The
   * STOPPED that follows checks the leader still holds it before the topic becomes writable: an unclean
   * election while STOPPED was being recorded can elect a replica without it (see `takeBarrier`).
   */
  noteBarrier(stateEpoch: number, lme: number): void {
    this.barrier = { stateEpoch, lme };
  }

  /** The LME of the barrier the STOPPING just before the STOPPED at `stateEpoch` wrote, once; else undefined. */
  takeBarrier(stateEpoch: number): number | undefined {
    const barrier = this.barrier;
    this.barrier = undefined;
    return barrier !== undefined && barrier.stateEpoch + 1 === stateEpoch ? barrier.lme : undefined;
  }

  /** Sends an event (effect result, observation, commit result) to the actor; dropped once closed. */
  send(event: MirrorPartitionEvent): void {
    if (this.closed) return;
    if (event.type === "TRUNCATED") this.truncationUnreported = false;
    const ref = this.ref;
    if (ref === undefined) {
      if (this.early === undefined) this.early = [];
      this.early.push(event);
      return;
    }
    this.depth++;
    try {
      ref.send(event);
    } finally {
      this.depth--;
    }
    if (this.depth === 0) this.settle();
  }

  /**
   * Sends an operator or metadata command. Resolves once the change it started is committed to
   * `__mirror_state` (at once when it needs no append); rejects with `InvalidMirrorStateError` when the
   * state does not allow it, or NOT_COORDINATOR when the coordinator unloads or is fenced first.
   */
  command(command: MirrorPartitionCommand): Promise<void> {
    if (this.closed) return Promise.reject(notCoordinator(this.key));
    return new Promise((resolve, reject) => {
      const item = { command, resolve, reject };
      if (this.ref === undefined) {
        if (this.early === undefined) this.early = [];
        this.early.push(item);
      } else this.runCommand(item);
    });
  }

  /** Stops routing: later events are dropped and waiting commands fail with NOT_COORDINATOR. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    const pending = [...(this.waiters ?? []), ...(this.deferred ?? [])];
    for (const e of this.early ?? []) if ("command" in e) pending.push(e);
    this.waiters = undefined;
    this.deferred = undefined;
    this.early = undefined;
    for (const w of pending) w.reject(notCoordinator(this.key));
  }

  /** The committed state, as `describe` reads it (undefined before the actor is spawned). */
  view(lastMirrorEpoch: number): MirrorPartitionView | undefined {
    const r = this.ref?.getSnapshot().context.record;
    if (r === undefined) return undefined;
    return {
      key: this.key,
      state: r.state,
      stateEpoch: r.stateEpoch,
      leaderEpoch: r.leaderEpoch,
      lastMirrorEpoch,
      errorMessage: r.errorMessage,
      retryAttempt: r.retryAttempt,
      previousState: r.previousState,
    };
  }

  private runCommand(item: DeferredCommand): void {
    if (this.closed) {
      item.reject(notCoordinator(this.key));
      return;
    }
    const ref = this.ref as MirrorPartitionRef;
    if (this.truncationUnreported) {
      // Tried again once the truncation's TRUNCATED is delivered (`settle`).
      if (this.deferred === undefined) this.deferred = [];
      this.deferred.push(item);
      return;
    }
    const before = ref.getSnapshot();
    if (before.status !== "active" || !before.can(item.command)) {
      const refusal = commandRefusal(before, item.command);
      // Refused only because a change is waiting for its append: the command is kept and tried again once
      // that change settles, so an operator's remove or pause is never lost to a race with the partition's
      // own progress. A command the settled state refuses is refused then.
      if (before.status === "active" && refusal.pendingTo !== null) {
        if (this.deferred === undefined) this.deferred = [];
        this.deferred.push(item);
      } else item.reject(refusal);
      return;
    }
    this.depth++;
    try {
      ref.send(item.command);
    } finally {
      this.depth--;
    }
    const pending = ref.getSnapshot().context.pending;
    if (pending === null || pending.record.stateEpoch <= before.context.record.stateEpoch) item.resolve();
    else {
      if (this.waiters === undefined) this.waiters = [];
      this.waiters.push({
        stateEpoch: pending.record.stateEpoch,
        resolve: item.resolve,
        reject: item.reject,
      });
    }
    if (this.depth === 0) this.settle();
  }

  /** After the actor processed everything sent: resolve commits, retry deferred commands. */
  private settle(): void {
    const ref = this.ref;
    if (ref === undefined || (this.waiters === undefined && this.deferred === undefined)) return;
    const s = ref.getSnapshot();
    if (s.status !== "active" || lifecycleStateOf(s) === "fenced") {
      const all = [...(this.waiters ?? []), ...(this.deferred ?? [])];
      this.waiters = undefined;
      this.deferred = undefined;
      for (const w of all) w.reject(notCoordinator(this.key));
      return;
    }
    const waiters = this.waiters;
    if (waiters !== undefined) {
      const committed = s.context.record.stateEpoch;
      let kept = 0;
      for (let i = 0; i < waiters.length; i++) {
        const w = waiters[i] as CommitWaiter;
        if (committed < w.stateEpoch) waiters[kept++] = w;
        else w.resolve();
      }
      if (kept === 0) this.waiters = undefined;
      else waiters.length = kept;
    }
    const deferred = this.deferred;
    if (deferred !== undefined && s.context.pending === null && !this.truncationUnreported) {
      this.deferred = undefined;
      for (const d of deferred) this.runCommand(d);
    }
  }
}

function notCoordinator(key: MirrorPartitionKey): ClusterError {
  return new ClusterError(
    "NOT_COORDINATOR",
    `the coordinator of mirror partition ${key.mirror}/${key.topic}-${key.partition} unloaded or was fenced; find the current coordinator (leader of its __mirror_state partition) and retry`,
  );
}
