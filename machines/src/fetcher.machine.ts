import { and, assign, setup } from "xstate";
import { DEFAULT_RETRY_BACKOFF, type RetryBackoffOptions, retryBackoffDelayMs } from "./retry-backoff";

/** One partition's error from a fetch response; it fails that partition only. */
export interface FetchPartitionError {
  /** The partition key, e.g. `topic-0` (the runtime chooses the format). */
  readonly partition: string;
  /** Kafka error name or message. */
  readonly message: string;
  /** Whether the partition actor may retry (it decides; the fetcher only drops the partition). */
  readonly retryable: boolean;
}

/** Events of the mirror fetcher. */
export type FetcherEvent =
  | { readonly type: "ADD_PARTITIONS"; readonly partitions: readonly string[] }
  | { readonly type: "REMOVE_PARTITIONS"; readonly partitions: readonly string[] }
  /** A fetch response arrived: per-partition errors and the source's quota throttle time. */
  | {
      readonly type: "FETCH_COMPLETED";
      readonly errors: readonly FetchPartitionError[];
      readonly throttleTimeMs: number;
    }
  /** The whole request failed (connection lost, source broker unavailable). */
  | { readonly type: "FETCH_FAILED"; readonly message: string; readonly random: number }
  | { readonly type: "BACKOFF_ELAPSED" }
  | { readonly type: "THROTTLE_ELAPSED" }
  | { readonly type: "STOP" };

/** Context of the mirror fetcher. */
export interface FetcherContext {
  /** Partitions this fetcher replicates, in the order they were added. */
  readonly partitions: readonly string[];
  /** Request failures in a row (reset by a completed fetch); drives the backoff. */
  readonly consecutiveFailures: number;
  /** Jitter in [0, 1) of the current backoff (from the FETCH_FAILED event). */
  readonly backoffJitter: number;
  /** The source's throttle time from the last response, in ms. */
  readonly throttleTimeMs: number;
  /** Backoff tuning for whole-request failures. */
  readonly backoff: RetryBackoffOptions;
}

/** Input of the mirror fetcher machine. */
export interface FetcherInput {
  /** Backoff tuning for whole-request failures; defaults to `DEFAULT_RETRY_BACKOFF`. */
  readonly backoff?: RetryBackoffOptions;
}

function effect<P = undefined>(): (args: unknown, params: P) => void {
  return () => {};
}

const reportErrors = {
  type: "reportPartitionErrors",
  params: ({ event }: { event: FetcherEvent }) => ({
    errors: event.type === "FETCH_COMPLETED" ? event.errors : [],
  }),
} as const;

/**
 * A mirror fetcher (per source broker and fetcher index): consumer-style fetches for a set of partitions.
 * A partition error is reported to that partition's actor and the partition is dropped from the fetch; the
 * other partitions keep fetching. A whole-request failure backs off; a quota throttle waits; STOP ends it.
 */
export const fetcherMachine = setup({
  types: {} as { context: FetcherContext; events: FetcherEvent; input: FetcherInput | undefined },
  actions: {
    addPartitions: assign(({ context, event }) => ({
      partitions:
        event.type === "ADD_PARTITIONS"
          ? [...context.partitions, ...event.partitions.filter((p) => !context.partitions.includes(p))]
          : context.partitions,
    })),
    removePartitions: assign(({ context, event }) => {
      const gone = new Set<string>();
      if (event.type === "REMOVE_PARTITIONS") for (const p of event.partitions) gone.add(p);
      if (event.type === "FETCH_COMPLETED") for (const e of event.errors) gone.add(e.partition);
      return { partitions: context.partitions.filter((p) => !gone.has(p)) };
    }),
    noteResponse: assign(({ event }) => ({
      consecutiveFailures: 0,
      throttleTimeMs: event.type === "FETCH_COMPLETED" ? event.throttleTimeMs : 0,
    })),
    noteFailure: assign(({ context, event }) => ({
      consecutiveFailures: context.consecutiveFailures + 1,
      backoffJitter: event.type === "FETCH_FAILED" ? event.random : 1,
    })),
    /** Send one fetch request for the current partitions. */
    sendFetch: effect<{ partitions: readonly string[] }>(),
    /** Tell each failed partition's actor (EFFECT_FAILED); the fetcher itself keeps going. */
    reportPartitionErrors: effect<{ errors: readonly FetchPartitionError[] }>(),
    /** Ask the runtime for a BACKOFF_ELAPSED after `delayMs`. */
    scheduleBackoff: effect<{ delayMs: number }>(),
    /** Ask the runtime for a THROTTLE_ELAPSED after `delayMs`. */
    scheduleThrottle: effect<{ delayMs: number }>(),
    /** Close the connection and cancel timers. */
    closeFetcher: effect(),
  },
  guards: {
    hasPartitionsAfterEvent: ({ context, event }) => {
      const gone = new Set<string>();
      if (event.type === "REMOVE_PARTITIONS") for (const p of event.partitions) gone.add(p);
      if (event.type === "FETCH_COMPLETED") for (const e of event.errors) gone.add(e.partition);
      return context.partitions.some((p) => !gone.has(p));
    },
    addsPartitions: ({ event }) => event.type === "ADD_PARTITIONS" && event.partitions.length > 0,
    throttled: ({ event }) => event.type === "FETCH_COMPLETED" && event.throttleTimeMs > 0,
  },
}).createMachine({
  id: "fetcher",
  context: ({ input }) => ({
    partitions: [],
    consecutiveFailures: 0,
    backoffJitter: 1,
    throttleTimeMs: 0,
    backoff: input?.backoff ?? DEFAULT_RETRY_BACKOFF,
  }),
  initial: "idle",
  states: {
    idle: {
      on: { ADD_PARTITIONS: { guard: "addsPartitions", target: "fetching", actions: "addPartitions" } },
    },
    fetching: {
      entry: { type: "sendFetch", params: ({ context }) => ({ partitions: context.partitions }) },
      on: {
        FETCH_COMPLETED: [
          {
            guard: and(["hasPartitionsAfterEvent", "throttled"]),
            target: "throttled",
            actions: [reportErrors, "removePartitions", "noteResponse"],
          },
          {
            guard: "hasPartitionsAfterEvent",
            target: "fetching",
            reenter: true,
            actions: [reportErrors, "removePartitions", "noteResponse"],
          },
          { target: "idle", actions: [reportErrors, "removePartitions", "noteResponse"] },
        ],
        FETCH_FAILED: { target: "backingOff", actions: "noteFailure" },
      },
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
      on: { BACKOFF_ELAPSED: "fetching" },
    },
    throttled: {
      entry: { type: "scheduleThrottle", params: ({ context }) => ({ delayMs: context.throttleTimeMs }) },
      on: { THROTTLE_ELAPSED: "fetching" },
    },
    stopped: { type: "final", entry: "closeFetcher" },
  },
  on: {
    ADD_PARTITIONS: { actions: "addPartitions" },
    REMOVE_PARTITIONS: [
      { guard: "hasPartitionsAfterEvent", actions: "removePartitions" },
      { target: ".idle", actions: "removePartitions" },
    ],
    STOP: ".stopped",
  },
});
