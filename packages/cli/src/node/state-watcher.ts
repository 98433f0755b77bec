import type { Scheduler } from "@cluster-mirror/cluster";
import type { NodeCluster } from "./mirror-node";

/** One mirror partition's state change, as the watcher saw it. */
export interface StateChange {
  cluster: string;
  mirror: string;
  topic: string;
  partition: number;
  from: string | null;
  to: string;
  errorMessage: string | null;
}

/**
 * Polls the coordinators of every cluster every `intervalMs` and reports each mirror partition whose state
 * changed (for the node's structured logs). Returns the function that stops it.
 */
export function watchStates(
  clusters: readonly NodeCluster[],
  scheduler: Scheduler,
  onChange: (change: StateChange) => void,
  intervalMs = 200,
): () => void {
  const last = new Map<string, string>();
  let stopped = false;
  let cancel: (() => void) | undefined;
  const tick = () => {
    if (stopped) return;
    for (const c of clusters) {
      for (const v of c.mirroring.coordinators.describe()) {
        const key = [c.name, v.key.mirror, v.key.topic, v.key.partition].join("\u0000");
        const before = last.get(key);
        if (before === v.state) continue;
        last.set(key, v.state);
        onChange({
          cluster: c.name,
          mirror: v.key.mirror,
          topic: v.key.topic,
          partition: v.key.partition,
          from: before ?? null,
          to: v.state,
          errorMessage: v.errorMessage,
        });
      }
    }
    cancel = scheduler.schedule(tick, intervalMs);
  };
  tick();
  return () => {
    stopped = true;
    cancel?.();
  };
}
