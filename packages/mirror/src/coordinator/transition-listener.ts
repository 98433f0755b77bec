import type { MirrorPartitionStateRecord } from "@cluster-mirror/machines";
import type { MirrorPartitionKey } from "../ports";

/**
 * One committed change of a mirror partition: its `__mirror_state` record was replaced (a lifecycle change,
 * a retry count, a leader epoch). Emitted after the coordinator applied the commit, so `record` is what
 * `describe` answers from then on.
 */
export interface PartitionTransition {
  readonly key: MirrorPartitionKey;
  /** The event or command the actor handled when the record changed (`COMMITTED`, `STOP`, ...). */
  readonly event: { readonly type: string };
  /** The committed record before the change. */
  readonly previous: MirrorPartitionStateRecord;
  /** The committed record after the change. */
  readonly record: MirrorPartitionStateRecord;
}

/** Called synchronously for every committed change; it must not throw or block (copy what it needs). */
export type TransitionListener = (transition: PartitionTransition) => void;

/**
 * The listeners of one `ClusterMirroring`: subscribe and unsubscribe at any time; `emit` calls each one and
 * reports a throwing listener to `onError` instead of letting it break the partition actor that emitted.
 */
export class TransitionListeners {
  private readonly listeners = new Set<TransitionListener>();

  constructor(private readonly onError: (error: unknown) => void = () => {}) {}

  /** Adds `listener`; the returned function removes it. */
  subscribe(listener: TransitionListener): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** Calls every listener with `transition` (a bound function, safe to hand around). */
  readonly emit = (transition: PartitionTransition): void => {
    for (const listener of this.listeners) {
      try {
        listener(transition);
      } catch (error) {
        this.onError(error);
      }
    }
  };
}
