import { initialTransition, type SnapshotFrom, transition } from "xstate";
import {
  type FetcherEvent,
  type FetcherInput,
  type FetchPartitionError,
  fetcherMachine,
  type InFlightFetch,
} from "./fetcher.machine";

/** A snapshot of the fetcher machine. */
export type FetcherSnapshot = SnapshotFrom<typeof fetcherMachine>;

/** The fetcher machine's states. */
export type FetcherState =
  | "idle"
  | "routing"
  | "fetching"
  | "throttleCheck"
  | "backingOff"
  | "throttled"
  | "waiting"
  | "stopped";

/** An effect the runtime must run: a named action of `fetcherMachine` and its parameters. */
export type FetcherEffect =
  | { readonly type: "sendFetch"; readonly params: InFlightFetch }
  | {
      readonly type: "reportPartitionFailures";
      readonly params: { readonly fetchId: number; readonly failures: readonly FetchPartitionError[] };
    }
  | {
      readonly type: "reroutePartitions";
      readonly params: { readonly fetchId: number; readonly partitions: readonly FetchPartitionError[] };
    }
  | {
      readonly type: "truncateFullyAndStartAt";
      readonly params: { readonly fetchId: number; readonly partition: string };
    }
  | {
      readonly type: "truncateToDivergingEpoch";
      readonly params: {
        readonly fetchId: number;
        readonly partition: string;
        readonly epoch: number;
        readonly endOffset: number;
      };
    }
  | { readonly type: "partitionsRemoved"; readonly params: { readonly partitions: readonly string[] } }
  | {
      readonly type: "scheduleBackoff" | "scheduleThrottle" | "scheduleFetchWait";
      readonly params: { readonly delayMs: number };
    }
  | { readonly type: "closeFetcher"; readonly params: { readonly partitions: readonly string[] } };

/** The result of feeding one event to a fetcher snapshot. */
export interface FetcherStep {
  /** The next snapshot (the same reference when the event changed nothing). */
  readonly snapshot: FetcherSnapshot;
  /** Effects to run, in order. */
  readonly effects: readonly FetcherEffect[];
  /** False when the event was ignored (stale fetch id, or the fetcher is stopped). */
  readonly changed: boolean;
}

/** A fetcher with nothing assigned (idle). */
export function initialFetcherSnapshot(input?: FetcherInput): FetcherSnapshot {
  return initialTransition(fetcherMachine, input ?? {})[0]; // idle has no entry actions
}

/**
 * Feeds one event to the fetcher chart (eventless transitions included). Pure. Once the fetcher is stopped
 * (its final state) every event is ignored, as a done actor ignores them.
 */
export function applyFetcherEvent(snapshot: FetcherSnapshot, event: FetcherEvent): FetcherStep {
  if (snapshot.status !== "active") return { snapshot, effects: [], changed: false };
  const [next, actions] = transition(fetcherMachine, snapshot, event);
  return {
    snapshot: next,
    effects: actions.map((a) => ({ type: a.type, params: a.params }) as FetcherEffect),
    changed: next !== snapshot || actions.length > 0,
  };
}

/** The fetcher's state (the machine is flat, so `value` is the state name). */
export function fetcherStateOf(snapshot: FetcherSnapshot): FetcherState {
  return snapshot.value as FetcherState;
}
