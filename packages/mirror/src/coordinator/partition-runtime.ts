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
import { lastMirrorEpochKey, stateRecordKey } from "./state-records";
import type { TransitionListener } from "./transition-listener";

/** Where a partition runtime sends the effects its machine returns. */
export interface EffectSink {
  run(partition: PartitionRuntime, effect: MirrorPartitionEffect): void;
}

/** A command waiting in the mailbox, then (once it started a change) for that change's commit. */
class CommandItem {
  /** The `stateEpoch` of the change it started; set once it waits for the commit. */
  stateEpoch = 0;
  constructor(
    readonly command: MirrorPartitionCommand,
    readonly resolve: () => void,
    readonly reject: (error: unknown) => void,
  ) {}
}

type MailboxItem = MirrorPartitionEvent | CommandItem;

/**
 * One mirror partition actor inside its coordinator: the machine's snapshot and a mailbox. Events for the
 * partition are handled one at a time, in arrival order: each goes through the pure `applyEvent` (commands
 * through `sendCommand`, which refuses invalid ones), the snapshot is replaced and the returned effects are
 * handed to the shard's executor exactly as returned (the machine only starts state effects after
 * COMMITTED). An effect that answers at once enqueues its result behind the current event.
 */
export class PartitionRuntime {
  /** Items behind the one being handled, read from `head` on (no `Array.shift`). */
  private mailbox: MailboxItem[] | undefined;
  private head = 0;
  private draining = false;
  private waiters: CommandItem[] | undefined;
  private deferred: CommandItem[] | undefined;
  private stateKeyBytes: Buffer | undefined;
  private lmeKeyBytes: Buffer | undefined;
  private closed = false;

  constructor(
    readonly id: string,
    readonly key: MirrorPartitionKey,
    private current: MirrorPartitionSnapshot,
    private readonly sink: EffectSink,
    private readonly onTransition?: TransitionListener,
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
    this.enqueue(event);
  }

  /**
   * Enqueues an operator or metadata command. Resolves once the change it started is committed to
   * `__mirror_state` (at once when it needs no append); rejects with `InvalidMirrorStateError` when the
   * state does not allow it, or NOT_COORDINATOR when the coordinator unloads or is fenced first.
   */
  command(command: MirrorPartitionCommand): Promise<void> {
    if (this.closed) return Promise.reject(notCoordinator(this.key));
    return new Promise((resolve, reject) => this.enqueue(new CommandItem(command, resolve, reject)));
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
    this.head = 0;
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
    if (this.draining) {
      if (this.mailbox === undefined) this.mailbox = [];
      this.mailbox.push(item);
      return;
    }
    this.draining = true;
    try {
      // Items left behind by a handler that threw go first, as they would have.
      if (this.mailbox !== undefined && this.head < this.mailbox.length) this.mailbox.push(item);
      else this.handle(item);
      // Items enqueued meanwhile (effect results that answered at once, retried commands), in order.
      for (;;) {
        const mailbox = this.mailbox;
        if (mailbox === undefined) break;
        if (this.head >= mailbox.length) {
          this.mailbox = undefined;
          this.head = 0;
          break;
        }
        const next = mailbox[this.head++] as MailboxItem;
        this.handle(next);
      }
    } finally {
      this.draining = false;
      if (this.mailbox !== undefined && this.head >= this.mailbox.length) {
        this.mailbox = undefined;
        this.head = 0;
      }
    }
  }

  private handle(item: MailboxItem): void {
    if (this.closed) {
      if (item instanceof CommandItem) item.reject(notCoordinator(this.key));
      return;
    }
    let step: MirrorPartitionStep;
    const isCommand = item instanceof CommandItem;
    if (isCommand) {
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
      step = applyEvent(this.current, item);
      if (!step.changed) return; // a stale result or an event this state ignores
    }
    const previous = this.current.context.record;
    this.current = step.snapshot;
    if (this.onTransition !== undefined && this.current.context.record !== previous) {
      const event = isCommand ? item.command : item;
      this.onTransition({ key: this.key, event, previous, record: this.current.context.record });
    }
    if (isCommand) {
      const pending = this.current.context.pending;
      if (pending === null) item.resolve();
      else {
        item.stateEpoch = pending.record.stateEpoch;
        if (this.waiters === undefined) this.waiters = [];
        this.waiters.push(item);
      }
    }
    if (this.waiters !== undefined) this.settleWaiters();
    const effects = step.effects;
    for (let i = 0; i < effects.length; i++) this.sink.run(this, effects[i] as MirrorPartitionEffect);
    this.retryDeferred();
  }

  /** Puts commands deferred behind a pending change back in the mailbox once nothing is pending. */
  private retryDeferred(): void {
    const deferred = this.deferred;
    if (deferred === undefined || this.current.context.pending !== null) return;
    this.deferred = undefined;
    if (this.mailbox === undefined) this.mailbox = [];
    for (const d of deferred) this.mailbox.push(d);
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
    let kept = 0;
    for (let i = 0; i < waiters.length; i++) {
      const w = waiters[i] as CommandItem;
      if (committed < w.stateEpoch) waiters[kept++] = w;
      else w.resolve();
    }
    if (kept === 0) this.waiters = undefined;
    else waiters.length = kept;
  }
}

function notCoordinator(key: MirrorPartitionKey): ClusterError {
  return new ClusterError(
    "NOT_COORDINATOR",
    `the coordinator of mirror partition ${key.mirror}/${key.topic}-${key.partition} unloaded or was fenced; find the current coordinator (leader of its __mirror_state partition) and retry`,
  );
}
