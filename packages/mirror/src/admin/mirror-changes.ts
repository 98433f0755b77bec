import type { Cancel, Scheduler } from "@cluster-mirror/cluster";
import type { StateLog } from "../ports";

/**
 * Change notifications of a cluster's mirroring engine: a mirror partition's state record was committed to
 * `__mirror_state`, or mirrored batches were appended to a destination log. Waiters (promote) re-check
 * their condition on each notification instead of polling. Notifications are coalesced and delivered on
 * the scheduler, after the step that caused them, so a listener sees the state they announce.
 */
export class MirrorChanges {
  private readonly listeners = new Set<() => void>();
  private pending: Cancel | undefined;

  constructor(private readonly scheduler: Scheduler) {}

  /** Calls `listener` after every change from now on; returns the unsubscribe. */
  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** Announces a change (called by the engine's hooks); listeners run once per scheduler step at most. */
  notify(): void {
    if (this.pending !== undefined || this.listeners.size === 0) return;
    this.pending = this.scheduler.schedule(() => {
      this.pending = undefined;
      for (const listener of [...this.listeners]) listener();
    }, 0);
  }
}

/** One evaluation of a waited-for condition: done with a value, or not yet with why (for the timeout report). */
export type ConditionCheck<T> = () => Promise<{ done: true; value: T } | { done: false; why: T }>;

/**
 * Resolves with the check's value once it reports done; evaluates it now and again after every change that
 * `subscribe` reports (one evaluation at a time: changes during one cause exactly one more). After
 * `timeoutMs` on `scheduler` it calls `onTimeout` with the last "not yet" answer and rejects with what that
 * returns. A check that throws rejects at once.
 */
export function waitForCondition<T>(options: {
  subscribe: (listener: () => void) => () => void;
  scheduler: Scheduler;
  timeoutMs: number;
  check: ConditionCheck<T>;
  onTimeout: (lastNotYet: T | undefined) => Error;
}): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    let running = false;
    let again = false;
    let lastNotYet: T | undefined;
    const unsubscribers: (() => void)[] = [];
    const finish = (action: () => void) => {
      if (settled) return;
      settled = true;
      for (const u of unsubscribers) u();
      cancelTimer();
      action();
    };
    const evaluate = () => {
      if (settled) return;
      if (running) {
        again = true;
        return;
      }
      running = true;
      options.check().then(
        (answer) => {
          running = false;
          if (answer.done) finish(() => resolve(answer.value));
          else {
            lastNotYet = answer.why;
            if (again) {
              again = false;
              evaluate();
            }
          }
        },
        (error: unknown) => {
          running = false;
          finish(() => reject(error));
        },
      );
    };
    const cancelTimer = options.scheduler.schedule(
      () => finish(() => reject(options.onTimeout(lastNotYet))),
      options.timeoutMs,
    );
    unsubscribers.push(options.subscribe(evaluate));
    evaluate();
  });
}

/** `log` with every successful append announced on `changes` (a state record committed). */
export function announceAppends<L extends StateLog>(log: L, changes: MirrorChanges): L {
  return Object.assign(Object.create(log) as L, {
    append: (records: { key: Buffer; value: Buffer | null }[], leaderEpoch: number) =>
      log.append(records, leaderEpoch).then(() => changes.notify()),
  });
}
