import { assign, setup } from "xstate";
import { effect } from "./effect";

/** Events of the coordinator shard: leadership of its `__mirror_state` partition and load results. */
export type CoordinatorShardEvent =
  /**
   * This broker became leader of the `__mirror_state` partition (Kafka: `scheduleLoadOperation`). `reload`:
   * the runtime cannot vouch that no other leader wrote since this shard loaded (e.g. it missed a
   * resignation), so an ACTIVE shard must load again instead of adopting the epoch in place.
   */
  | { readonly type: "ELECTED"; readonly leaderEpoch: number; readonly reload?: boolean }
  /**
   * This broker lost leadership (Kafka: `scheduleUnloadOperation`). `leaderEpoch` is the new leader's when
   * known; without it the shard unloads whatever its epoch (Kafka's empty `OptionalInt`).
   */
  | { readonly type: "RESIGNED"; readonly leaderEpoch?: number }
  /** The replay of the partition finished; partition actors are rehydrated. */
  | { readonly type: "LOAD_COMPLETED"; readonly leaderEpoch: number }
  /** The replay failed (e.g. a corrupt record). */
  | { readonly type: "LOAD_FAILED"; readonly leaderEpoch: number; readonly message: string }
  /** An append returned an offset the shard did not expect: the in-memory state must be re-read. */
  | { readonly type: "STATE_DIVERGED"; readonly leaderEpoch: number; readonly message: string }
  /** Try loading a FAILED shard again (same epoch), e.g. after a backoff timer the runtime owns. */
  | { readonly type: "RETRY_LOAD"; readonly leaderEpoch: number }
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

const epochParams = ({ context }: { context: CoordinatorShardContext }): CoordinatorShardEffectParams => ({
  partition: context.partition,
  leaderEpoch: context.leaderEpoch,
});

const abortLoad = { type: "abortLoad", params: epochParams } as const;
const unloadShard = { type: "unloadShard", params: epochParams } as const;

/**
 * The mirror coordinator for one `__mirror_state` partition, modelled on Kafka's `CoordinatorRuntime`
 * context states (INITIAL, LOADING, ACTIVE, FAILED, CLOSED). Every event that answers a load or reports on
 * the loaded state carries the leader epoch it belongs to and is ignored when that is not the current one.
 * An election with a newer epoch while LOADING restarts the load; while ACTIVE it updates the epoch in
 * place, as Kafka does (the broker stayed leader, so the loaded state is still the log's), unless the
 * runtime asks for a `reload`. A resignation with no epoch or a newer one unloads.
 */
export const coordinatorShardMachine = setup({
  types: {} as {
    context: CoordinatorShardContext;
    events: CoordinatorShardEvent;
    input: CoordinatorShardInput;
  },
  actions: {
    adoptEpoch: assign(({ context, event }) => ({
      leaderEpoch:
        "leaderEpoch" in event && event.leaderEpoch !== undefined ? event.leaderEpoch : context.leaderEpoch,
      errorMessage: null,
    })),
    noteError: assign(({ event }) => ({
      errorMessage: "message" in event ? event.message : null,
    })),
    /** Replay the partition from its log start into a map and rehydrate the partition actors. */
    loadPartition: effect<CoordinatorShardEffectParams>(),
    /** Stop a load in progress and discard everything it read (no partial state survives). */
    abortLoad: effect<CoordinatorShardEffectParams>(),
    /** Loaded: re-arm timers (retry backoff, metadata refresh) from state, start serving writes. */
    activateShard: effect<CoordinatorShardEffectParams>(),
    /** Still leader with a newer epoch: write with this epoch from now on. */
    updateShardEpoch: effect<CoordinatorShardEffectParams>(),
    /** Cancel timers, drop partition actors, fail pending writes with NOT_COORDINATOR. */
    unloadShard: effect<CoordinatorShardEffectParams>(),
  },
  guards: {
    newerEpoch: ({ context, event }) =>
      "leaderEpoch" in event && event.leaderEpoch !== undefined && event.leaderEpoch > context.leaderEpoch,
    newerEpochWithReload: ({ context, event }) =>
      event.type === "ELECTED" && event.leaderEpoch > context.leaderEpoch && event.reload === true,
    currentEpoch: ({ context, event }) => "leaderEpoch" in event && event.leaderEpoch === context.leaderEpoch,
    resignationApplies: ({ context, event }) =>
      event.type === "RESIGNED" &&
      (event.leaderEpoch === undefined || event.leaderEpoch > context.leaderEpoch),
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
          actions: [abortLoad, "adoptEpoch"],
        },
        LOAD_COMPLETED: { guard: "currentEpoch", target: "ACTIVE" },
        LOAD_FAILED: { guard: "currentEpoch", target: "FAILED", actions: [abortLoad, "noteError"] },
        RESIGNED: { guard: "resignationApplies", target: "CLOSED", actions: [abortLoad, "adoptEpoch"] },
        SHUTDOWN: { target: "CLOSED", actions: abortLoad },
      },
    },
    ACTIVE: {
      entry: { type: "activateShard", params: epochParams },
      on: {
        ELECTED: [
          { guard: "newerEpochWithReload", target: "LOADING", actions: [unloadShard, "adoptEpoch"] },
          { guard: "newerEpoch", actions: ["adoptEpoch", { type: "updateShardEpoch", params: epochParams }] },
        ],
        STATE_DIVERGED: { guard: "currentEpoch", target: "FAILED", actions: [unloadShard, "noteError"] },
        RESIGNED: { guard: "resignationApplies", target: "CLOSED", actions: [unloadShard, "adoptEpoch"] },
        SHUTDOWN: { target: "CLOSED", actions: unloadShard },
      },
    },
    FAILED: {
      on: {
        RETRY_LOAD: { guard: "currentEpoch", target: "LOADING" },
        ELECTED: { guard: "newerEpoch", target: "LOADING", actions: "adoptEpoch" },
        RESIGNED: { guard: "resignationApplies", target: "CLOSED", actions: "adoptEpoch" },
        SHUTDOWN: "CLOSED",
      },
    },
    CLOSED: {
      on: { ELECTED: { guard: "newerEpoch", target: "LOADING", actions: "adoptEpoch" } },
    },
  },
});
