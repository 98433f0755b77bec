import {
  classifyFetchResult,
  DEFAULT_RETRY_BACKOFF,
  type FetcherContext,
  type FetcherEvent,
  type FetchPartitionError,
  fetcherMachine,
  type InFlightFetch,
  type MachineGraphTransition,
  type RetryBackoffOptions,
  retryBackoffDelayMs,
  toMachineGraph,
} from "@cluster-mirror/machines";

/**
 * A pure interpreter of `fetcherMachine` (machines/src/fetcher.machine.ts). The mirror package cannot load
 * xstate itself (it is not one of its dependencies), so the structure (states, events, guards, targets,
 * entry and transition actions, in document order) is read from the chart with `toMachineGraph`, and only
 * the named guards and actions are implemented here, with the machine's semantics. A chart that names an
 * action or guard this file does not know fails at load, so the two cannot drift silently.
 */

/** An effect the runtime must run, named as in the chart. */
export type FetcherEffect =
  | { readonly type: "sendFetch"; readonly params: InFlightFetch }
  | {
      readonly type: "reportPartitionFailures";
      readonly params: { fetchId: number; failures: readonly FetchPartitionError[] };
    }
  | {
      readonly type: "reroutePartitions";
      readonly params: { fetchId: number; partitions: readonly FetchPartitionError[] };
    }
  | { readonly type: "truncateFullyAndStartAt"; readonly params: { fetchId: number; partition: string } }
  | {
      readonly type: "truncateToDivergingEpoch";
      readonly params: { fetchId: number; partition: string; epoch: number; endOffset: number };
    }
  | { readonly type: "partitionsRemoved"; readonly params: { partitions: readonly string[] } }
  | { readonly type: "scheduleBackoff"; readonly params: { delayMs: number } }
  | { readonly type: "scheduleThrottle"; readonly params: { delayMs: number } }
  | { readonly type: "closeFetcher"; readonly params: { partitions: readonly string[] } };

/** The interpreter's snapshot: the chart's (flat) state and its context. */
export interface FetcherChartSnapshot {
  readonly state: string;
  readonly context: FetcherContext;
}

type Guard = (context: FetcherContext, event: FetcherEvent) => boolean;
/** An action: returns the next context and appends its effects. */
type Action = (context: FetcherContext, event: FetcherEvent, effects: FetcherEffect[]) => FetcherContext;

const without = (list: readonly string[], gone: ReadonlySet<string>) => list.filter((p) => !gone.has(p));

function fetchable(context: FetcherContext): string[] {
  const waiting = new Set(context.truncating);
  return context.partitions.filter((p) => !waiting.has(p));
}

const GUARDS: Record<string, Guard> = {
  currentFetch: (c, e) =>
    (e.type === "FETCH_COMPLETED" || e.type === "FETCH_FAILED") && e.fetchId === c.inFlight?.fetchId,
  hasFetchable: (c) => fetchable(c).length > 0,
  throttled: (c) => c.throttleTimeMs > 0,
};

const ACTIONS: Record<string, Action> = {
  addPartitions: (c, e) => {
    if (e.type !== "ADD_PARTITIONS") return c;
    const known = new Set(c.partitions);
    const added = e.partitions.filter((p) => !known.has(p));
    return { ...c, partitions: [...c.partitions, ...added], removing: without(c.removing, new Set(added)) };
  },
  removePartitions: (c, e, effects) => {
    if (e.type !== "REMOVE_PARTITIONS") return c;
    const gone = new Set(e.partitions);
    const inFlight = new Set(c.inFlight?.partitions ?? []);
    const later = e.partitions.filter((p) => inFlight.has(p));
    const now = e.partitions.filter((p) => !inFlight.has(p));
    if (now.length > 0) effects.push({ type: "partitionsRemoved", params: { partitions: now } });
    return {
      ...c,
      partitions: without(c.partitions, gone),
      truncating: without(c.truncating, gone),
      removing: [...c.removing, ...later.filter((p) => !c.removing.includes(p))],
    };
  },
  truncationCompleted: (c, e) =>
    e.type === "TRUNCATION_COMPLETED"
      ? { ...c, truncating: without(c.truncating, new Set([e.partition])) }
      : c,
  startFetch: (c, _e, effects) => {
    const request = { fetchId: c.nextFetchId, partitions: fetchable(c) };
    effects.push({ type: "sendFetch", params: request });
    return { ...c, inFlight: request, nextFetchId: c.nextFetchId + 1 };
  },
  settleFetch: (c, e, effects) => {
    if (e.type !== "FETCH_COMPLETED" && e.type !== "FETCH_FAILED") return c;
    const fetchId = e.fetchId;
    const assigned = new Set(c.partitions);
    const failures: FetchPartitionError[] = [];
    const reroute: FetchPartitionError[] = [];
    const truncating: string[] = [];
    if (e.type === "FETCH_COMPLETED") {
      for (const r of e.results) {
        if (!assigned.has(r.partition)) continue;
        const kind = classifyFetchResult(r);
        if (kind === "fatal")
          failures.push({ partition: r.partition, error: r.error ?? "UNKNOWN_SERVER_ERROR" });
        else if (kind === "retriable") reroute.push({ partition: r.partition, error: r.error ?? "" });
        else if (kind === "offsetOutOfRange") {
          truncating.push(r.partition);
          effects.push({ type: "truncateFullyAndStartAt", params: { fetchId, partition: r.partition } });
        } else if (kind === "divergingEpoch" && r.divergingEpoch) {
          truncating.push(r.partition);
          effects.push({
            type: "truncateToDivergingEpoch",
            params: { fetchId, partition: r.partition, ...r.divergingEpoch },
          });
        }
      }
    }
    if (failures.length > 0) effects.push({ type: "reportPartitionFailures", params: { fetchId, failures } });
    if (reroute.length > 0)
      effects.push({ type: "reroutePartitions", params: { fetchId, partitions: reroute } });
    if (c.removing.length > 0)
      effects.push({ type: "partitionsRemoved", params: { partitions: c.removing } });
    const dropped = new Set([...failures, ...reroute].map((f) => f.partition));
    return {
      ...c,
      partitions: without(c.partitions, dropped),
      truncating: [...c.truncating, ...truncating.filter((p) => !c.truncating.includes(p))],
      removing: [],
      inFlight: null,
      ...(e.type === "FETCH_COMPLETED"
        ? { consecutiveFailures: 0, throttleTimeMs: e.throttleTimeMs }
        : { consecutiveFailures: c.consecutiveFailures + 1, backoffJitter: e.random }),
    };
  },
  scheduleBackoff: (c, _e, effects) => {
    const delayMs = retryBackoffDelayMs(c.consecutiveFailures - 1, c.backoffJitter, c.backoff);
    effects.push({ type: "scheduleBackoff", params: { delayMs } });
    return c;
  },
  scheduleThrottle: (c, _e, effects) => {
    effects.push({ type: "scheduleThrottle", params: { delayMs: c.throttleTimeMs } });
    return c;
  },
  closeFetcher: (c, _e, effects) => {
    effects.push({ type: "closeFetcher", params: { partitions: [...c.partitions, ...c.removing] } });
    return c;
  },
};

interface ChartTable {
  root: string;
  initial: string;
  finals: ReadonlySet<string>;
  entry: ReadonlyMap<string, readonly string[]>;
  transitions: readonly MachineGraphTransition[];
}

function loadChart(): ChartTable {
  const graph = toMachineGraph(fetcherMachine);
  const entry = new Map<string, readonly string[]>();
  const finals = new Set<string>();
  for (const node of graph.root.children) {
    entry.set(node.id, node.entry);
    if (node.type === "final") finals.add(node.id);
    for (const a of node.entry) if (!ACTIONS[a]) throw unknownName("action", a);
  }
  for (const t of graph.transitions) {
    if (t.guard !== null && !GUARDS[t.guard]) throw unknownName("guard", t.guard);
    for (const a of t.actions) if (!ACTIONS[a]) throw unknownName("action", a);
    if (t.targets.length > 1)
      throw new Error(`fetcher chart: parallel targets are not supported (${t.event})`);
  }
  if (!graph.root.initial) throw new Error("fetcher chart: the root has no initial state");
  return { root: graph.root.id, initial: graph.root.initial, finals, entry, transitions: graph.transitions };
}

function unknownName(kind: string, name: string): Error {
  return new Error(
    `fetcher chart names ${kind} '${name}' that packages/mirror/src/fetcher/fetcher-chart.ts does not implement; implement it there with the machine's semantics`,
  );
}

const CHART = loadChart();

/** The chart's initial snapshot (nothing assigned, idle). */
export function initialFetcherSnapshot(
  backoff: RetryBackoffOptions = DEFAULT_RETRY_BACKOFF,
): FetcherChartSnapshot {
  return {
    state: CHART.initial,
    context: {
      partitions: [],
      truncating: [],
      removing: [],
      inFlight: null,
      nextFetchId: 0,
      consecutiveFailures: 0,
      backoffJitter: 1,
      throttleTimeMs: 0,
      backoff,
    },
  };
}

function enabled(
  source: string,
  event: string,
  context: FetcherContext,
  e: FetcherEvent,
): MachineGraphTransition | undefined {
  return CHART.transitions.find(
    (t) => t.source === source && t.event === event && (t.guard === null || GUARDS[t.guard]!(context, e)),
  );
}

/**
 * Feeds one event to the chart: the state's own transition if one is enabled, else the root's; then entry
 * actions and eventless (`always`) transitions until the state is stable. Returns the next snapshot and the
 * effects to run, in order. Pure. An event no transition takes returns the same snapshot and no effects.
 */
export function fetcherTransition(
  snapshot: FetcherChartSnapshot,
  event: FetcherEvent,
): { snapshot: FetcherChartSnapshot; effects: FetcherEffect[] } {
  if (CHART.finals.has(snapshot.state)) return { snapshot, effects: [] };
  const effects: FetcherEffect[] = [];
  let { state, context } = snapshot;
  const taken = enabled(state, event.type, context, event) ?? enabled(CHART.root, event.type, context, event);
  if (!taken) return { snapshot, effects };
  const take = (t: MachineGraphTransition, e: FetcherEvent) => {
    for (const a of t.actions) context = ACTIONS[a]!(context, e, effects);
    const target = t.targets[0];
    if (target === undefined) return false;
    state = target;
    for (const a of CHART.entry.get(target) ?? []) context = ACTIONS[a]!(context, e, effects);
    return true;
  };
  take(taken, event);
  // Eventless transitions run after every step, as in xstate's macrostep; the chart's are acyclic.
  for (let step = 0; step < 100; step++) {
    const always = enabled(state, "always", context, event);
    if (!always || !take(always, event)) break;
  }
  return { snapshot: { state, context }, effects };
}

/** The short state name (`fetching`, `throttled`...) of a snapshot. */
export function fetcherStateName(snapshot: FetcherChartSnapshot): string {
  return snapshot.state.slice(snapshot.state.lastIndexOf(".") + 1);
}
