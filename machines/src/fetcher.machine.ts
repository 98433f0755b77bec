import { assign, enqueueActions, setup } from "xstate";
import { effect } from "./effect";
import { DEFAULT_RETRY_BACKOFF, type RetryBackoffOptions, retryBackoffDelayMs } from "./retry-backoff";

/** One partition's part of a fetch response. */
export interface FetchPartitionResult {
  /** The partition key, e.g. `topic-0` (the runtime chooses the format). */
  readonly partition: string;
  /** Kafka error name, or null for success (batches were appended). */
  readonly error: string | null;
  /** KIP-320 diverging epoch from the source: truncate to `endOffset` of `epoch` before fetching again. */
  readonly divergingEpoch?: { readonly epoch: number; readonly endOffset: number };
}

/** What the fetcher does about one partition's result. */
export type FetchResultClass = "ok" | "fatal" | "retriable" | "offsetOutOfRange" | "divergingEpoch";

/** Errors that mean "the source leader moved or is not ready": delay the partition and route it again. */
export const RETRIABLE_FETCH_ERRORS: ReadonlySet<string> = new Set([
  "NOT_LEADER_OR_FOLLOWER",
  "FENCED_LEADER_EPOCH",
  "UNKNOWN_LEADER_EPOCH",
  "LEADER_NOT_AVAILABLE",
]);

/**
 * Classifies one partition's fetch result. `CORRUPT_MESSAGE` (reported by the runtime after its own
 * re-reads) and any error not known here are fatal for that partition only.
 */
export function classifyFetchResult(result: FetchPartitionResult): FetchResultClass {
  if (result.error === null) return result.divergingEpoch ? "divergingEpoch" : "ok";
  if (result.error === "OFFSET_OUT_OF_RANGE") return "offsetOutOfRange";
  if (RETRIABLE_FETCH_ERRORS.has(result.error)) return "retriable";
  return "fatal";
}

/** A fetch request in flight. */
export interface InFlightFetch {
  readonly fetchId: number;
  readonly partitions: readonly string[];
}

/** Events of the mirror fetcher. */
export type FetcherEvent =
  | { readonly type: "ADD_PARTITIONS"; readonly partitions: readonly string[] }
  /** Stop fetching these; acknowledged with `partitionsRemoved` once no in-flight fetch includes them. */
  | { readonly type: "REMOVE_PARTITIONS"; readonly partitions: readonly string[] }
  /**
   * The response to `sendFetch` number `fetchId`: per-partition results; `throttleTimeMs`, how long a quota
   * holds the next fetch back (the source's throttle time, or the destination's replication quota when it
   * throttled every partition); `fetchWaitMs`, how long to wait because the round brought nothing (absent
   * or 0: fetch again at once).
   */
  | {
      readonly type: "FETCH_COMPLETED";
      readonly fetchId: number;
      readonly results: readonly FetchPartitionResult[];
      readonly throttleTimeMs: number;
      readonly fetchWaitMs?: number;
    }
  /** The whole request `fetchId` failed (connection lost, source broker unavailable). */
  | {
      readonly type: "FETCH_FAILED";
      readonly fetchId: number;
      readonly message: string;
      readonly random: number;
    }
  /** A truncation this fetcher asked for is done: fetch the partition again. */
  | { readonly type: "TRUNCATION_COMPLETED"; readonly partition: string }
  | { readonly type: "BACKOFF_ELAPSED" }
  | { readonly type: "THROTTLE_ELAPSED" }
  | { readonly type: "FETCH_WAIT_ELAPSED" }
  | { readonly type: "STOP" };

/** Context of the mirror fetcher. */
export interface FetcherContext {
  /** Partitions this fetcher replicates, in the order they were added. */
  readonly partitions: readonly string[];
  /** Partitions waiting for a truncation (not fetched until TRUNCATION_COMPLETED). */
  readonly truncating: readonly string[];
  /** Removed partitions that the in-flight fetch still includes: acknowledged when it settles. */
  readonly removing: readonly string[];
  /** The fetch request in flight, or null. */
  readonly inFlight: InFlightFetch | null;
  /** Id of the next `sendFetch`. */
  readonly nextFetchId: number;
  /** Request failures in a row (reset by a completed fetch); drives the backoff. */
  readonly consecutiveFailures: number;
  /** Jitter in [0, 1) of the current backoff (from the FETCH_FAILED event). */
  readonly backoffJitter: number;
  /** How long a quota holds the next fetch back, from the last response, in ms (0: not throttled). */
  readonly throttleTimeMs: number;
  /** How long to wait before the next fetch because the last round brought nothing, in ms. */
  readonly fetchWaitMs: number;
  /** Backoff tuning for whole-request failures. */
  readonly backoff: RetryBackoffOptions;
}

/** Input of the mirror fetcher machine. */
export interface FetcherInput {
  /** Backoff tuning for whole-request failures; defaults to `DEFAULT_RETRY_BACKOFF`. */
  readonly backoff?: RetryBackoffOptions;
}

/** A partition and the error that took it out of this fetcher. */
export interface FetchPartitionError {
  readonly partition: string;
  readonly error: string;
}

const without = (list: readonly string[], gone: ReadonlySet<string>) => list.filter((p) => !gone.has(p));

/** The partitions the next fetch includes. */
function fetchable(context: FetcherContext): string[] {
  const waiting = new Set(context.truncating);
  return context.partitions.filter((p) => !waiting.has(p));
}

/**
 * A mirror fetcher (per source broker and fetcher index): consumer-style fetches for a set of partitions.
 * Each result is classified per partition: a fatal error fails that partition only; a retriable one sends
 * it back to the fetcher manager to be routed again after a delay; OFFSET_OUT_OF_RANGE and a diverging
 * epoch ask for a truncation and fetch the partition again once it is done. Fetch ids tie each response to
 * its request. A whole-request failure backs off; a quota throttle waits (`throttled`); a round that brought
 * nothing waits too (`waiting`, as Kafka's fetcher backs off when it has nothing to fetch); STOP ends it.
 */
export const fetcherMachine = setup({
  types: {} as { context: FetcherContext; events: FetcherEvent; input: FetcherInput | undefined },
  actions: {
    /** Send fetch request `fetchId` for `partitions`. */
    sendFetch: effect<InFlightFetch>(),
    /** Tell each failed partition's actor (EFFECT_FAILED); the fetcher keeps going without it. */
    reportPartitionFailures: effect<{ fetchId: number; failures: readonly FetchPartitionError[] }>(),
    /** Give partitions back to the fetcher manager: re-resolve their source leader after a delay. */
    reroutePartitions: effect<{ fetchId: number; partitions: readonly FetchPartitionError[] }>(),
    /** The source's log start moved past our fetch offset: truncate fully and start at its log start. */
    truncateFullyAndStartAt: effect<{ fetchId: number; partition: string }>(),
    /** KIP-320: truncate to the source's end offset for the diverging epoch. */
    truncateToDivergingEpoch: effect<{
      fetchId: number;
      partition: string;
      epoch: number;
      endOffset: number;
    }>(),
    /** These partitions are no longer fetched (the answer to REMOVE_PARTITIONS). */
    partitionsRemoved: effect<{ partitions: readonly string[] }>(),
    /** Ask the runtime for a BACKOFF_ELAPSED after `delayMs`. */
    scheduleBackoff: effect<{ delayMs: number }>(),
    /** Ask the runtime for a THROTTLE_ELAPSED after `delayMs`. */
    scheduleThrottle: effect<{ delayMs: number }>(),
    /** Ask the runtime for a FETCH_WAIT_ELAPSED after `delayMs`. */
    scheduleFetchWait: effect<{ delayMs: number }>(),
    /** Close the connection and cancel timers; `partitions` are no longer fetched. */
    closeFetcher: effect<{ partitions: readonly string[] }>(),
    addPartitions: assign(({ context, event }) => {
      if (event.type !== "ADD_PARTITIONS") return {};
      const known = new Set(context.partitions);
      const added = event.partitions.filter((p) => !known.has(p));
      return {
        partitions: [...context.partitions, ...added],
        removing: without(context.removing, new Set(added)),
      };
    }),
    removePartitions: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== "REMOVE_PARTITIONS") return;
      const gone = new Set(event.partitions);
      const inFlight = new Set(context.inFlight?.partitions ?? []);
      const later = event.partitions.filter((p) => inFlight.has(p));
      const now = event.partitions.filter((p) => !inFlight.has(p));
      enqueue.assign({
        partitions: without(context.partitions, gone),
        truncating: without(context.truncating, gone),
        removing: [...context.removing, ...later.filter((p) => !context.removing.includes(p))],
      });
      if (now.length > 0) enqueue({ type: "partitionsRemoved", params: { partitions: now } });
    }),
    truncationCompleted: assign(({ context, event }) =>
      event.type === "TRUNCATION_COMPLETED"
        ? { truncating: without(context.truncating, new Set([event.partition])) }
        : {},
    ),
    startFetch: enqueueActions(({ context, enqueue }) => {
      const request = { fetchId: context.nextFetchId, partitions: fetchable(context) };
      enqueue.assign({ inFlight: request, nextFetchId: context.nextFetchId + 1 });
      enqueue({ type: "sendFetch", params: request });
    }),
    /** Settles the in-flight fetch: classify results, ask for what each needs, acknowledge removals. */
    settleFetch: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== "FETCH_COMPLETED" && event.type !== "FETCH_FAILED") return;
      const fetchId = event.fetchId;
      const assigned = new Set(context.partitions);
      const failures: FetchPartitionError[] = [];
      const reroute: FetchPartitionError[] = [];
      const truncating: string[] = [];
      if (event.type === "FETCH_COMPLETED") {
        for (const r of event.results) {
          if (!assigned.has(r.partition)) continue; // removed meanwhile: its result is dropped
          const kind = classifyFetchResult(r);
          if (kind === "fatal")
            failures.push({ partition: r.partition, error: r.error ?? "UNKNOWN_SERVER_ERROR" });
          else if (kind === "retriable") reroute.push({ partition: r.partition, error: r.error ?? "" });
          else if (kind === "offsetOutOfRange") {
            truncating.push(r.partition);
            enqueue({ type: "truncateFullyAndStartAt", params: { fetchId, partition: r.partition } });
          } else if (kind === "divergingEpoch" && r.divergingEpoch) {
            truncating.push(r.partition);
            enqueue({
              type: "truncateToDivergingEpoch",
              params: { fetchId, partition: r.partition, ...r.divergingEpoch },
            });
          }
        }
      }
      if (failures.length > 0) enqueue({ type: "reportPartitionFailures", params: { fetchId, failures } });
      if (reroute.length > 0)
        enqueue({ type: "reroutePartitions", params: { fetchId, partitions: reroute } });
      if (context.removing.length > 0)
        enqueue({ type: "partitionsRemoved", params: { partitions: context.removing } });
      const dropped = new Set([...failures, ...reroute].map((f) => f.partition));
      enqueue.assign({
        partitions: without(context.partitions, dropped),
        truncating: [...context.truncating, ...truncating.filter((p) => !context.truncating.includes(p))],
        removing: [],
        inFlight: null,
        ...(event.type === "FETCH_COMPLETED"
          ? {
              consecutiveFailures: 0,
              throttleTimeMs: event.throttleTimeMs,
              fetchWaitMs: event.fetchWaitMs ?? 0,
            }
          : { consecutiveFailures: context.consecutiveFailures + 1, backoffJitter: event.random }),
      });
    }),
  },
  guards: {
    currentFetch: ({ context, event }) =>
      (event.type === "FETCH_COMPLETED" || event.type === "FETCH_FAILED") &&
      event.fetchId === context.inFlight?.fetchId,
    hasFetchable: ({ context }) => fetchable(context).length > 0,
    throttled: ({ context }) => context.throttleTimeMs > 0,
    nothingFetched: ({ context }) => context.fetchWaitMs > 0,
  },
}).createMachine({
  id: "fetcher",
  context: ({ input }) => ({
    partitions: [],
    truncating: [],
    removing: [],
    inFlight: null,
    nextFetchId: 0,
    consecutiveFailures: 0,
    backoffJitter: 1,
    throttleTimeMs: 0,
    fetchWaitMs: 0,
    backoff: input?.backoff ?? DEFAULT_RETRY_BACKOFF,
  }),
  initial: "idle",
  states: {
    idle: {
      description: "Nothing to fetch: no partitions, or all of them wait for a truncation.",
      on: {
        ADD_PARTITIONS: { target: "routing", actions: "addPartitions" },
        TRUNCATION_COMPLETED: { target: "routing", actions: "truncationCompleted" },
      },
    },
    routing: {
      description: "Decide the next step after a response, a timer or new work.",
      always: [{ guard: "hasFetchable", target: "fetching" }, { target: "idle" }],
    },
    fetching: {
      entry: "startFetch",
      on: {
        FETCH_COMPLETED: [{ guard: "currentFetch", target: "throttleCheck", actions: "settleFetch" }],
        FETCH_FAILED: { guard: "currentFetch", target: "backingOff", actions: "settleFetch" },
      },
    },
    throttleCheck: {
      description: "After a response: a quota throttles the next fetch, or the round brought nothing.",
      always: [
        { guard: "throttled", target: "throttled" },
        { guard: "nothingFetched", target: "waiting" },
        { target: "routing" },
      ],
    },
    backingOff: {
      entry: {
        type: "scheduleBackoff",
        params: ({ context }) => ({
          delayMs: retryBackoffDelayMs(
            context.consecutiveFailures - 1,
            context.backoffJitter,
            context.backoff,
          ),
        }),
      },
      on: { BACKOFF_ELAPSED: "routing" },
    },
    throttled: {
      description:
        "A quota holds the next fetch back: the source's throttle time, or the destination's replication quota.",
      entry: {
        type: "scheduleThrottle",
        params: ({ context }) => ({ delayMs: Math.max(context.throttleTimeMs, context.fetchWaitMs) }),
      },
      on: { THROTTLE_ELAPSED: "routing" },
    },
    waiting: {
      description:
        "The round brought nothing: wait out what is left of fetch.wait.max.ms before fetching again (the time a long-polling source held the fetch counts).",
      entry: { type: "scheduleFetchWait", params: ({ context }) => ({ delayMs: context.fetchWaitMs }) },
      on: { FETCH_WAIT_ELAPSED: "routing" },
    },
    stopped: {
      type: "final",
      entry: {
        type: "closeFetcher",
        params: ({ context }) => ({ partitions: [...context.partitions, ...context.removing] }),
      },
    },
  },
  on: {
    ADD_PARTITIONS: { actions: "addPartitions" },
    REMOVE_PARTITIONS: { actions: "removePartitions" },
    TRUNCATION_COMPLETED: { actions: "truncationCompleted" },
    STOP: ".stopped",
  },
});
