import { ClusterError } from "@cluster-mirror/cluster";
import {
  applyEvent,
  InvalidMirrorStateError,
  lifecycleStateOf,
  type MirrorPartitionCommand,
  type MirrorPartitionEffect,
  type MirrorPartitionEvent,
  type MirrorPartitionSnapshot,
  type MirrorPartitionStep,
  sendCommand,
} from "@cluster-mirror/machines";
import type { MirrorPartitionKey, MirrorPartitionView } from "../ports";

/** Where a partition runtime sends the effects its machine returns. */
export interface EffectSink {
  run(partition: PartitionRuntime, effect: MirrorPartitionEffect): void;
}

type MailboxItem =
  | { readonly kind: "event"; readonly event: MirrorPartitionEvent }
  | {
      readonly kind: "command";
      readonly command: MirrorPartitionCommand;
      readonly resolve: () => void;
      readonly reject: (error: unknown) => void;
    };

interface CommitWaiter {
  readonly stateEpoch: number;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

/**
 * One mirror partition actor inside its coordinator: the machine's snapshot and a mailbox. Events for the
 * partition are handled one at a time, in arrival order: each goes through the pure `applyEvent` (commands
 * through `sendCommand`, which refuses invalid ones), the snapshot is replaced and the returned effects are
 * handed to the shard's executor exactly as returned (the machine only starts state effects after
 * COMMITTED). An effect that answers at once enqueues its result behind the current event.
 */
export class PartitionRuntime {
  private mailbox: MailboxItem[] | undefined;
  private draining = false;
  private waiters: CommitWaiter[] | undefined;
  private deferred: Extract<MailboxItem, { kind: "command" }>[] | undefined;
  private closed = false;

  constructor(
    readonly id: string,
    readonly key: MirrorPartitionKey,
    private current: MirrorPartitionSnapshot,
    private readonly sink: EffectSink,
  ) {}

  /** The machine snapshot (pending changes included; `view()` is the committed state). */
  get snapshot(): MirrorPartitionSnapshot {
    return this.current;
  }

  /** True once the shard unloaded this actor or another coordinator fenced it: it takes no more events. */
  get isClosed(): boolean {
    return this.closed || lifecycleStateOf(this.current) === "fenced";
  }

  /** Enqueues an event (effect result, observation, commit result); dropped once closed. */
  send(event: MirrorPartitionEvent): void {
    if (this.closed) return;
    this.enqueue({ kind: "event", event });
  }

  /**
   * Enqueues an operator or metadata command. Resolves once the change it started is committed to
   * `__mirror_state` (at once when it needs no append); rejects with `InvalidMirrorStateError` when the
   * state does not allow it, or NOT_COORDINATOR when the coordinator unloads or is fenced first.
   */
  command(command: MirrorPartitionCommand): Promise<void> {
    if (this.closed) return Promise.reject(notCoordinator(this.key));
    return new Promise((resolve, reject) => this.enqueue({ kind: "command", command, resolve, reject }));
  }

  /** Runs effects returned outside the mailbox (the recovery effects of a rehydrated snapshot). */
  runEffects(effects: readonly MirrorPartitionEffect[]): void {
    for (const e of effects) this.sink.run(this, e);
  }

  /** Stops the actor: later events are dropped and waiting commands fail with NOT_COORDINATOR. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.mailbox = undefined;
    const waiters = this.waiters ?? [];
    this.waiters = undefined;
    for (const w of waiters) w.reject(notCoordinator(this.key));
    const deferred = this.deferred ?? [];
    this.deferred = undefined;
    for (const d of deferred) d.reject(notCoordinator(this.key));
  }

  /** The committed state, as `describe` reads it. */
  view(lastMirrorEpoch: number): MirrorPartitionView {
    const r = this.current.context.record;
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

  private enqueue(item: MailboxItem): void {
    if (this.mailbox === undefined) this.mailbox = [];
    this.mailbox.push(item);
    if (this.draining) return;
    this.draining = true;
    try {
      let next = this.mailbox?.shift();
      while (next !== undefined) {
        this.handle(next);
        next = this.mailbox?.shift();
      }
    } finally {
      this.draining = false;
      if (this.mailbox?.length === 0) this.mailbox = undefined;
    }
  }

  private handle(item: MailboxItem): void {
    if (this.closed) {
      if (item.kind === "command") item.reject(notCoordinator(this.key));
      return;
    }
    let step: MirrorPartitionStep;
    if (item.kind === "command") {
      try {
        step = sendCommand(this.current, item.command);
      } catch (error) {
        // Refused only because a change is waiting for its append: the command is kept and tried again
        // once that change settles, so an operator's remove or pause is never lost to a race with the
        // partition's own progress. A command the settled state refuses is refused then.
        if (error instanceof InvalidMirrorStateError && error.pendingTo !== null) {
          if (this.deferred === undefined) this.deferred = [];
          this.deferred.push(item);
        } else item.reject(error);
        return;
      }
    } else {
      step = applyEvent(this.current, item.event);
      if (!step.changed) return; // a stale result or an event this state ignores
    }
    this.current = step.snapshot;
    if (item.kind === "command") {
      const pending = this.current.context.pending;
      if (pending === null) item.resolve();
      else {
        if (this.waiters === undefined) this.waiters = [];
        this.waiters.push({ stateEpoch: pending.record.stateEpoch, ...item });
      }
    }
    this.settleWaiters();
    for (const e of step.effects) this.sink.run(this, e);
    this.retryDeferred();
  }

  /** Puts commands deferred behind a pending change back in the mailbox once nothing is pending. */
  private retryDeferred(): void {
    const deferred = this.deferred;
    if (deferred === undefined || this.current.context.pending !== null) return;
    this.deferred = undefined;
    if (this.mailbox === undefined) this.mailbox = [];
    this.mailbox.push(...deferred);
  }

  private settleWaiters(): void {
    const waiters = this.waiters;
    if (waiters === undefined) return;
    if (lifecycleStateOf(this.current) === "fenced") {
      this.waiters = undefined;
      for (const w of waiters) w.reject(notCoordinator(this.key));
      const deferred = this.deferred ?? [];
      this.deferred = undefined;
      for (const d of deferred) d.reject(notCoordinator(this.key));
      return;
    }
    const committed = this.current.context.record.stateEpoch;
    const remaining = waiters.filter((w) => {
      if (committed < w.stateEpoch) return true;
      w.resolve();
      return false;
    });
    this.waiters = remaining.length > 0 ? remaining : undefined;
  }
}

function notCoordinator(key: MirrorPartitionKey): ClusterError {
  return new ClusterError(
    "NOT_COORDINATOR",
    `the coordinator of mirror partition ${key.mirror}/${key.topic}-${key.partition} unloaded or was fenced; find the current coordinator (leader of its __mirror_state partition) and retry`,
  );
}
