import type { CoordinatorShardEvent } from "@cluster-mirror/machines";

/**
 * The coordinator shard lifecycle of `coordinatorShardMachine` (machines), state for state and guard for
 * guard, as a pure function: the mirror package does not depend on xstate, and a shard takes a handful of
 * these events in its life. Kafka's `CoordinatorState`: INITIAL, LOADING, ACTIVE, FAILED, CLOSED.
 */
export type ShardState = "INITIAL" | "LOADING" | "ACTIVE" | "FAILED" | "CLOSED";

/** The shard's lifecycle snapshot. */
export interface ShardLifecycle {
  readonly state: ShardState;
  readonly leaderEpoch: number;
  readonly errorMessage: string | null;
}

/** An effect of a shard transition, with the epoch it was issued for. */
export interface ShardEffect {
  readonly type: "loadPartition" | "abortLoad" | "activateShard" | "updateShardEpoch" | "unloadShard";
  readonly leaderEpoch: number;
}

/** The lifecycle before the first election. */
export const INITIAL_SHARD: ShardLifecycle = { state: "INITIAL", leaderEpoch: -1, errorMessage: null };

function epochOf(event: CoordinatorShardEvent): number | undefined {
  return "leaderEpoch" in event ? event.leaderEpoch : undefined;
}

/** Feeds one event; returns the next lifecycle and the effects in xstate's order (exit, edge, entry). */
export function transitionShard(
  s: ShardLifecycle,
  event: CoordinatorShardEvent,
): { lifecycle: ShardLifecycle; effects: ShardEffect[] } {
  const epoch = epochOf(event);
  const newer = epoch !== undefined && epoch > s.leaderEpoch;
  const current = epoch !== undefined && epoch === s.leaderEpoch;
  const resignationApplies =
    event.type === "RESIGNED" && (event.leaderEpoch === undefined || event.leaderEpoch > s.leaderEpoch);
  const adopt = (state: ShardState): ShardLifecycle => ({
    state,
    leaderEpoch: epoch ?? s.leaderEpoch,
    errorMessage: null,
  });
  const fx = (type: ShardEffect["type"], leaderEpoch = s.leaderEpoch): ShardEffect => ({ type, leaderEpoch });
  const same = { lifecycle: s, effects: [] as ShardEffect[] };
  const load = (l: ShardLifecycle, before: ShardEffect[] = []) => ({
    lifecycle: l,
    effects: [...before, fx("loadPartition", l.leaderEpoch)],
  });
  switch (s.state) {
    case "INITIAL":
    case "CLOSED":
      if (event.type === "ELECTED" && newer) return load(adopt("LOADING"));
      if (event.type === "SHUTDOWN" && s.state === "INITIAL")
        return { lifecycle: { ...s, state: "CLOSED" }, effects: [] };
      return same;
    case "LOADING":
      if (event.type === "ELECTED" && newer) return load(adopt("LOADING"), [fx("abortLoad")]);
      if (event.type === "LOAD_COMPLETED" && current) {
        const l = { ...s, state: "ACTIVE" as const };
        return { lifecycle: l, effects: [fx("activateShard")] };
      }
      if (event.type === "LOAD_FAILED" && current)
        return {
          lifecycle: { ...s, state: "FAILED", errorMessage: event.message },
          effects: [fx("abortLoad")],
        };
      if (event.type === "RESIGNED" && resignationApplies)
        return { lifecycle: adopt("CLOSED"), effects: [fx("abortLoad")] };
      if (event.type === "SHUTDOWN")
        return { lifecycle: { ...s, state: "CLOSED" }, effects: [fx("abortLoad")] };
      return same;
    case "ACTIVE":
      if (event.type === "ELECTED" && newer && event.reload === true)
        return load(adopt("LOADING"), [fx("unloadShard")]);
      if (event.type === "ELECTED" && newer) {
        const l = adopt("ACTIVE");
        return { lifecycle: l, effects: [fx("updateShardEpoch", l.leaderEpoch)] };
      }
      if (event.type === "STATE_DIVERGED" && current)
        return {
          lifecycle: { ...s, state: "FAILED", errorMessage: event.message },
          effects: [fx("unloadShard")],
        };
      if (event.type === "RESIGNED" && resignationApplies)
        return { lifecycle: adopt("CLOSED"), effects: [fx("unloadShard")] };
      if (event.type === "SHUTDOWN")
        return { lifecycle: { ...s, state: "CLOSED" }, effects: [fx("unloadShard")] };
      return same;
    case "FAILED":
      if (event.type === "RETRY_LOAD" && current) return load({ ...s, state: "LOADING" });
      if (event.type === "ELECTED" && newer) return load(adopt("LOADING"));
      if (event.type === "RESIGNED" && resignationApplies) return { lifecycle: adopt("CLOSED"), effects: [] };
      if (event.type === "SHUTDOWN") return { lifecycle: { ...s, state: "CLOSED" }, effects: [] };
      return same;
  }
}
