import { assign, enqueueActions, setup } from "xstate";
import { effect } from "./effect";
import {
  MAX_PARTITIONS_PER_GROUP,
  type MirrorPartitionSpawn,
  type MirrorPartitionsEvent,
  type MirrorPartitionsInput,
  mirrorPartitionsMachine,
} from "./mirror-partitions.machine";

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
  /**
   * The replay of the partition finished: `mirrors` are the partitions it found, grouped by mirror; the
   * shard spawns one group per mirror, which spawns (rehydrates) one partition actor per key.
   */
  | {
      readonly type: "LOAD_COMPLETED";
      readonly leaderEpoch: number;
      readonly mirrors?: readonly MirrorPartitionsInput[];
    }
  /** Partitions for keys without state (a command's first use), grouped by mirror; ACTIVE only. */
  | { readonly type: "SPAWN_PARTITIONS"; readonly mirrors: readonly MirrorPartitionsInput[] }
  /** A mirror's records were tombstoned: stop its partition actors. ACTIVE only. */
  | { readonly type: "STOP_MIRROR"; readonly mirror: string }
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
  /** Partition groups spawned while ACTIVE (stopped when it exits), in spawn order. */
  readonly groups: readonly PartitionGroup[];
}

/** A partition group of the shard: its actor id, its mirror and how many partitions it spawned. */
export interface PartitionGroup {
  readonly id: string;
  readonly mirror: string;
  readonly size: number;
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

/** The actor id of a mirror's `n`-th partition group inside its shard. */
export function mirrorGroupId(mirror: string, n: number): string {
  return `mirror:${mirror}#${n}`;
}

/**
 * Places a batch of new partitions: the mirror's last group is filled up to its limit, the rest go to new
 * groups. Returns the groups after the placement and what to spawn or send.
 */
function placePartitions(
  groups: readonly PartitionGroup[],
  batch: MirrorPartitionsInput,
): {
  groups: PartitionGroup[];
  fill?: { id: string; partitions: readonly MirrorPartitionSpawn[] };
  spawn: { id: string; input: MirrorPartitionsInput }[];
} {
  const out = [...groups];
  const own = out.filter((g) => g.mirror === batch.mirror);
  let rest = batch.partitions;
  let fill: { id: string; partitions: readonly MirrorPartitionSpawn[] } | undefined;
  const last = own.at(-1);
  if (last !== undefined && last.size < MAX_PARTITIONS_PER_GROUP && rest.length > 0) {
    const take = rest.slice(0, MAX_PARTITIONS_PER_GROUP - last.size);
    rest = rest.slice(take.length);
    fill = { id: last.id, partitions: take };
    out[out.indexOf(last)] = { ...last, size: last.size + take.length };
  }
  const spawn: { id: string; input: MirrorPartitionsInput }[] = [];
  let n = own.length;
  for (let i = 0; i < rest.length; i += MAX_PARTITIONS_PER_GROUP) {
    const partitions = rest.slice(i, i + MAX_PARTITIONS_PER_GROUP);
    const id = mirrorGroupId(batch.mirror, n++);
    spawn.push({ id, input: { mirror: batch.mirror, partitions } });
    out.push({ id, mirror: batch.mirror, size: partitions.length });
  }
  return fill === undefined ? { groups: out, spawn } : { groups: out, fill, spawn };
}

/**
 * Stops partition groups newest first, each after it stopped its own partitions newest first: XState
 * copies a parent's children for every child it stops, and those copies are cheapest when the child they
 * drop is the newest (see `STOP_PARTITIONS`).
 */
function stopGroups(
  groups: readonly PartitionGroup[],
  enqueue: {
    sendTo: (to: string, event: MirrorPartitionsEvent) => void;
    stopChild: (id: string) => void;
  },
): void {
  for (let i = groups.length - 1; i >= 0; i--) {
    const id = groups[i]!.id;
    enqueue.sendTo(id, { type: "STOP_PARTITIONS" });
    enqueue.stopChild(id);
  }
}

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
  actors: { mirrorPartitions: mirrorPartitionsMachine },
  actions: {
    // Place new partitions in the mirror's groups (filling the last, then new ones), one batch each.
    spawnPartitions: enqueueActions(({ context, event, enqueue }) => {
      const batches =
        event.type === "LOAD_COMPLETED" || event.type === "SPAWN_PARTITIONS" ? event.mirrors : [];
      let groups: readonly PartitionGroup[] = context.groups;
      for (const batch of batches ?? []) {
        const placed = placePartitions(groups, batch);
        groups = placed.groups;
        if (placed.fill) {
          enqueue.sendTo(placed.fill.id, { type: "SPAWN_PARTITIONS", partitions: placed.fill.partitions });
        }
        for (const g of placed.spawn) {
          const input: MirrorPartitionsInput = g.input;
          enqueue.spawnChild("mirrorPartitions", { id: g.id, input });
        }
      }
      if (groups !== context.groups) enqueue.assign({ groups: [...groups] });
    }),
    stopMirror: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== "STOP_MIRROR") return;
      const stopped = context.groups.filter((g) => g.mirror === event.mirror);
      if (stopped.length === 0) return;
      stopGroups(stopped, enqueue);
      enqueue.assign({ groups: context.groups.filter((g) => g.mirror !== event.mirror) });
    }),
    // Leaving ACTIVE drops every partition actor: stopping a group stops its partitions.
    stopAllMirrors: enqueueActions(({ context, enqueue }) => {
      stopGroups(context.groups, enqueue);
      enqueue.assign({ groups: [] });
    }),
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
  context: ({ input }) => ({ partition: input.partition, leaderEpoch: -1, errorMessage: null, groups: [] }),
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
        LOAD_COMPLETED: { guard: "currentEpoch", target: "ACTIVE", actions: "spawnPartitions" },
        LOAD_FAILED: { guard: "currentEpoch", target: "FAILED", actions: [abortLoad, "noteError"] },
        RESIGNED: { guard: "resignationApplies", target: "CLOSED", actions: [abortLoad, "adoptEpoch"] },
        SHUTDOWN: { target: "CLOSED", actions: abortLoad },
      },
    },
    ACTIVE: {
      entry: { type: "activateShard", params: epochParams },
      exit: "stopAllMirrors",
      on: {
        SPAWN_PARTITIONS: { actions: "spawnPartitions" },
        STOP_MIRROR: { actions: "stopMirror" },
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
