import type { InspectionEvent, PartitionContext } from "../inspection";

/** One partition as the grid shows it. */
export interface FleetCell {
  /** The actor id, `cluster/mirror/topic-partition`. */
  readonly id: string;
  readonly state: string;
  readonly context: PartitionContext;
}

/** One mirror's roll-up: partitions per state and the distinct errors of its FAILED partitions. */
export interface MirrorSummary {
  readonly cluster: string;
  readonly mirror: string;
  readonly total: number;
  /** Partitions per lifecycle state, only states with at least one partition. */
  readonly counts: Readonly<Record<string, number>>;
  /** Error messages of FAILED partitions with how many partitions have each, most frequent first. */
  readonly errors: readonly { readonly message: string; readonly count: number }[];
}

/**
 * How urgent a state is in the grid (lower first): FAILED, then transitional states, then resting ones, so
 * exceptions come first and 10,000 MIRRORING partitions sink to the end.
 */
const URGENCY: Readonly<Record<string, number>> = {
  FAILED: 0,
  UNKNOWN: 1,
  STOPPING: 2,
  EPOCH_FENCING: 3,
  PREPARING: 4,
  PAUSING: 5,
  PAUSED: 6,
  STOPPED: 7,
  MIRRORING: 8,
};

/** The short text each state shows in a grid cell, so the grid reads without colour. */
export const STATE_ABBREVIATIONS: Readonly<Record<string, string>> = {
  UNKNOWN: "UNK",
  PREPARING: "PREP",
  MIRRORING: "MIR",
  EPOCH_FENCING: "FENCE",
  PAUSING: "PAUSING",
  PAUSED: "PAUSED",
  STOPPING: "STOPPING",
  STOPPED: "STOPPED",
  FAILED: "FAILED",
};

/**
 * The live fleet, fed by inspection events: the latest snapshot per partition, roll-ups per mirror, and the
 * grid order (exceptions first, then by lag, then by name). `version` grows on every change, so a view
 * redraws at most once per frame whatever the event rate; the order is recomputed only when asked after a
 * change.
 */
export class FleetModel {
  private readonly cells = new Map<string, FleetCell>();
  private orderCache: FleetCell[] | null = null;
  /** Bumped on every applied event. */
  version = 0;

  /** Applies one stream event (a `stopped` snapshot removes the partition); returns whether it changed anything. */
  apply(event: InspectionEvent): boolean {
    if (event.type === "@xstate.event") return false;
    const { value, context, status } = event.snapshot;
    const id = event.sessionId;
    const before = this.cells.get(id);
    if (status === "stopped") {
      // The partition is gone (its mirror deleted): it leaves the grid and the roll-ups.
      if (!this.cells.delete(id)) return false;
      this.version++;
      this.orderCache = null;
      return true;
    }
    if (before && before.state === value && sameContext(before.context, context)) return false;
    this.cells.set(id, { id, state: value, context });
    this.version++;
    this.orderCache = null;
    return true;
  }

  /** Removes every partition (a new connection sends the full state again). */
  clear(): void {
    this.cells.clear();
    this.version++;
    this.orderCache = null;
  }

  get size(): number {
    return this.cells.size;
  }

  get(id: string): FleetCell | undefined {
    return this.cells.get(id);
  }

  /** Every partition, exceptions first (by state urgency), then by lag (largest first), then by name. */
  ordered(): readonly FleetCell[] {
    if (this.orderCache === null) {
      this.orderCache = [...this.cells.values()].sort(
        (a, b) =>
          (URGENCY[a.state] ?? 1) - (URGENCY[b.state] ?? 1) ||
          (b.context.lag ?? -1) - (a.context.lag ?? -1) ||
          compareNames(a, b),
      );
    }
    return this.orderCache;
  }

  /** One summary per mirror (cluster, then mirror name). */
  mirrors(): MirrorSummary[] {
    const by = new Map<
      string,
      {
        cluster: string;
        mirror: string;
        counts: Record<string, number>;
        errors: Map<string, number>;
        total: number;
      }
    >();
    for (const c of this.cells.values()) {
      const key = `${c.context.cluster}/${c.context.mirror}`;
      let s = by.get(key);
      if (s === undefined) {
        s = { cluster: c.context.cluster, mirror: c.context.mirror, counts: {}, errors: new Map(), total: 0 };
        by.set(key, s);
      }
      s.total++;
      s.counts[c.state] = (s.counts[c.state] ?? 0) + 1;
      if (c.state === "FAILED") {
        const message = c.context.errorMessage ?? "(no error message)";
        s.errors.set(message, (s.errors.get(message) ?? 0) + 1);
      }
    }
    return [...by.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, s]) => ({
        cluster: s.cluster,
        mirror: s.mirror,
        total: s.total,
        counts: s.counts,
        errors: [...s.errors.entries()]
          .map(([message, count]) => ({ message, count }))
          .sort((a, b) => b.count - a.count || (a.message < b.message ? -1 : 1)),
      }));
  }
}

function sameContext(a: PartitionContext, b: PartitionContext): boolean {
  return (
    a.stateEpoch === b.stateEpoch &&
    a.lag === b.lag &&
    a.errorMessage === b.errorMessage &&
    a.retryAttempt === b.retryAttempt &&
    a.leaderEpoch === b.leaderEpoch
  );
}

function compareNames(a: FleetCell, b: FleetCell): number {
  const x = a.context;
  const y = b.context;
  if (x.cluster !== y.cluster) return x.cluster < y.cluster ? -1 : 1;
  if (x.mirror !== y.mirror) return x.mirror < y.mirror ? -1 : 1;
  if (x.topic !== y.topic) return x.topic < y.topic ? -1 : 1;
  return x.partition - y.partition;
}
