import { initialTransition } from "xstate";
import { type MirrorPartitionEffect, type MirrorPartitionSnapshot, pendingEffectsOf } from "./commands";
import type { RecoveredPartition } from "./lifecycle";
import { mirrorPartitionMachine } from "./mirror-partition.machine";
import type { MirrorPartitionContext, MirrorPartitionInput } from "./mirror-partition.types";
import { DEFAULT_RETRY_BACKOFF } from "./retry-backoff";

type StateValue = MirrorPartitionSnapshot["value"];

// The state `recovering` picks depends only on the record's state and whether it is non-retryable; the
// snapshot for that state is resolved once from the chart (a real pass through `recovering`) and each
// partition gets a copy of it with its own context. Resolving the state nodes per partition is what made
// bulk loads slow; the resolved nodes and value are immutable and safe to share.
const templates = new Map<string, MirrorPartitionSnapshot>();

function template(record: RecoveredPartition, context: MirrorPartitionContext): MirrorPartitionSnapshot {
  const key = `${record.state}|${record.retryAttempt < 0}`;
  let snapshot = templates.get(key);
  if (snapshot === undefined) {
    const value: StateValue = initialTransition(mirrorPartitionMachine, { record })[0].value;
    snapshot = mirrorPartitionMachine.resolveState({ value, context });
    templates.set(key, snapshot);
  }
  return snapshot;
}

/**
 * The fast path of `recoverPartition` for bulk loads: the same snapshot and effects (a property test checks
 * this) without building a throw-away actor per partition. It resolves the state `recovering` would enter
 * and returns the effects that state owns (`pendingEffectsOf`), which the runtime runs as it would after a
 * pass through `recovering`.
 */
export function rehydratePartition(input: MirrorPartitionInput & { readonly record: RecoveredPartition }): {
  readonly snapshot: MirrorPartitionSnapshot;
  readonly effects: readonly MirrorPartitionEffect[];
} {
  const context: MirrorPartitionContext = {
    record: input.record,
    lastMirrorEpoch: input.record.lastMirrorEpoch,
    retryJitter: input.retryJitter ?? 1,
    pending: null,
    retry: input.retry ?? DEFAULT_RETRY_BACKOFF,
  };
  const snapshot = { ...template(input.record, context), context } as MirrorPartitionSnapshot;
  return { snapshot, effects: pendingEffectsOf(snapshot) };
}
