import { assign, setup } from "xstate";

/** Events of the coordinator shard: leadership of its `__mirror_state` partition and load results. */
export type CoordinatorShardEvent =
  /** This broker became leader of the `__mirror_state` partition (Kafka: `scheduleLoadOperation`). */
  | { readonly type: "ELECTED"; readonly leaderEpoch: number }
  /** This broker lost leadership (Kafka: `scheduleUnloadOperation`); the epoch is the new leader's. */
  | { readonly type: "RESIGNED"; readonly leaderEpoch: number }
  /** The replay of the partition finished; partition actors are rehydrated. */
  | { readonly type: "LOAD_COMPLETED"; readonly leaderEpoch: number }
  /** The replay failed (e.g. a corrupt record). */
  | { readonly type: "LOAD_FAILED"; readonly leaderEpoch: number; readonly message: string }
  /** An append returned an offset the shard did not expect: the in-memory state must be re-read. */
  | { readonly type: "STATE_DIVERGED"; readonly message: string }
  /** Try loading a FAILED shard again (same epoch), e.g. after a backoff timer the runtime owns. */
  | { readonly type: "RETRY_LOAD" }
  /** The broker is shutting down. */
  | { readonly type: "SHUTDOWN" };

/** Context of the coordinator shard. */
export interface CoordinatorShardContext {
  /** The `__mirror_state` partition this shard owns. */
  readonly partition: number;
  /** Leader epoch of the current (or last) leadership; -1 before the first election. */
  readonly leaderEpoch: number;
  /** Why the shard is FAILED; null otherwise. */
  readonly errorMessage: string | null;
}

/** Input of the coordinator shard machine. */
export interface CoordinatorShardInput {
  /** The `__mirror_state` partition this shard owns. */
  readonly partition: number;
}

/** Parameters of the shard's epoch-scoped effects. */
export interface CoordinatorShardEffectParams {
  readonly partition: number;
  readonly leaderEpoch: number;
}

function effect<P = undefined>(): (args: unknown, params: P) => void {
  return () => {};
}

const epochParams = ({ context }: { context: CoordinatorShardContext }): CoordinatorShardEffectParams => ({
  partition: context.partition,
  leaderEpoch: context.leaderEpoch,
});

/**
 * The mirror coordinator for one `__mirror_state` partition, modelled on Kafka's `CoordinatorRuntime`
 * context states (INITIAL, LOADING, ACTIVE, FAILED, CLOSED). Loads and unloads are guarded by the leader
 * epoch: an election or resignation with an epoch that is not newer is ignored, and a resignation during a
 * load aborts it.
 */
export const coordinatorShardMachine = setup({
  types: {} as {
    context: CoordinatorShardContext;
    events: CoordinatorShardEvent;
    input: CoordinatorShardInput;
  },
  actions: {
    adoptEpoch: assign(({ context, event }) => ({
      leaderEpoch: "leaderEpoch" in event ? event.leaderEpoch : context.leaderEpoch,
      errorMessage: null,
    })),
    noteError: assign(({ event }) => ({
      errorMessage: "message" in event ? event.message : null,
    })),
    /** Replay the partition from its log start into a map and rehydrate the partition actors. */
    loadPartition: effect<CoordinatorShardEffectParams>(),
    /** Stop a load in progress and discard what it read. */
    abortLoad: effect<CoordinatorShardEffectParams>(),
    /** Loaded: re-arm timers (retry backoff, metadata refresh) from state, start serving writes. */
    activateShard: effect<CoordinatorShardEffectParams>(),
    /** Cancel timers, drop partition actors, fail pending writes with NOT_COORDINATOR. */
    unloadShard: effect<CoordinatorShardEffectParams>(),
  },
  guards: {
    newerEpoch: ({ context, event }) => "leaderEpoch" in event && event.leaderEpoch > context.leaderEpoch,
    currentEpoch: ({ context, event }) => "leaderEpoch" in event && event.leaderEpoch === context.leaderEpoch,
  },
}).createMachine({
  id: "coordinatorShard",
  context: ({ input }) => ({ partition: input.partition, leaderEpoch: -1, errorMessage: null }),
  initial: "INITIAL",
  states: {
    INITIAL: {
      on: {
        ELECTED: { guard: "newerEpoch", target: "LOADING", actions: "adoptEpoch" },
        SHUTDOWN: "CLOSED",
      },
    },
    LOADING: {
      entry: { type: "loadPartition", params: epochParams },
      on: {
        // A newer election restarts the load; the old one is aborted first.
        ELECTED: {
          guard: "newerEpoch",
          target: "LOADING",
          reenter: true,
          actions: [{ type: "abortLoad", params: epochParams }, "adoptEpoch"],
        },
        LOAD_COMPLETED: { guard: "currentEpoch", target: "ACTIVE" },
        LOAD_FAILED: { guard: "currentEpoch", target: "FAILED", actions: "noteError" },
        RESIGNED: {
          guard: "newerEpoch",
          target: "CLOSED",
          actions: [{ type: "abortLoad", params: epochParams }, "adoptEpoch"],
        },
        SHUTDOWN: { target: "CLOSED", actions: { type: "abortLoad", params: epochParams } },
      },
    },
    ACTIVE: {
      entry: { type: "activateShard", params: epochParams },
      on: {
        ELECTED: {
          guard: "newerEpoch",
          target: "LOADING",
          actions: [{ type: "unloadShard", params: epochParams }, "adoptEpoch"],
        },
        STATE_DIVERGED: {
          target: "FAILED",
          actions: [{ type: "unloadShard", params: epochParams }, "noteError"],
        },
        RESIGNED: {
          guard: "newerEpoch",
          target: "CLOSED",
          actions: [{ type: "unloadShard", params: epochParams }, "adoptEpoch"],
        },
        SHUTDOWN: { target: "CLOSED", actions: { type: "unloadShard", params: epochParams } },
      },
    },
    FAILED: {
      on: {
        RETRY_LOAD: { target: "LOADING" },
        ELECTED: { guard: "newerEpoch", target: "LOADING", actions: "adoptEpoch" },
        RESIGNED: { guard: "newerEpoch", target: "CLOSED", actions: "adoptEpoch" },
        SHUTDOWN: "CLOSED",
      },
    },
    CLOSED: {
      on: { ELECTED: { guard: "newerEpoch", target: "LOADING", actions: "adoptEpoch" } },
    },
  },
});
