import { initialTransition, type SnapshotFrom, transition } from "xstate";
import {
  type CoordinatorShardEffectParams,
  type CoordinatorShardEvent,
  type CoordinatorShardInput,
  coordinatorShardMachine,
} from "./coordinator-shard.machine";

/** A snapshot of the coordinator shard machine. */
export type CoordinatorShardSnapshot = SnapshotFrom<typeof coordinatorShardMachine>;

/** Kafka's `CoordinatorState`: the shard machine's top-level states. */
export type CoordinatorShardState = "INITIAL" | "LOADING" | "ACTIVE" | "FAILED" | "CLOSED";

/** An effect of a shard transition: a named action of the chart and the epoch it was issued for. */
export interface CoordinatorShardEffect {
  readonly type: "loadPartition" | "abortLoad" | "activateShard" | "updateShardEpoch" | "unloadShard";
  // Spawning and stopping partition groups are XState's own actions (not effects): `transition()` leaves
  // them out of what it returns.
  readonly params: CoordinatorShardEffectParams;
}

/** The result of feeding one event to a shard snapshot. */
export interface CoordinatorShardStep {
  /** The next snapshot (the same reference when the event changed nothing). */
  readonly snapshot: CoordinatorShardSnapshot;
  /** Effects to run, in xstate's order (exit, transition, entry). */
  readonly effects: readonly CoordinatorShardEffect[];
  /** False when the event was ignored (no enabled transition, e.g. a stale epoch). */
  readonly changed: boolean;
}

/** The shard before its first election (INITIAL, epoch -1). `partition` defaults to 0. */
export function initialShardSnapshot(
  input: CoordinatorShardInput = { partition: 0 },
): CoordinatorShardSnapshot {
  return initialTransition(coordinatorShardMachine, input)[0]; // INITIAL has no entry actions
}

/** Feeds one event to the shard chart. Pure: the machine's guards, assigns and named effects, no I/O. */
export function applyShardEvent(
  snapshot: CoordinatorShardSnapshot,
  event: CoordinatorShardEvent,
): CoordinatorShardStep {
  const [next, actions] = transition(coordinatorShardMachine, snapshot, event);
  return {
    snapshot: next,
    effects: actions.map((a) => ({ type: a.type, params: a.params }) as CoordinatorShardEffect),
    changed: next !== snapshot || actions.length > 0,
  };
}

/** The shard's state (the machine is flat, so `value` is the state name). */
export function shardStateOf(snapshot: CoordinatorShardSnapshot): CoordinatorShardState {
  return snapshot.value as CoordinatorShardState;
}
