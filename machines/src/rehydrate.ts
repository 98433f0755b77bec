import { type AnyStateNode, initialTransition } from "xstate";
import {
  type MirrorPartitionEffect,
  type MirrorPartitionSnapshot,
  pendingEffectsOf,
  recoverPartition,
  resolveEffects,
} from "./commands";
import { initialContext } from "./initial-context";
import type { RecoveredPartition } from "./lifecycle";
import { mirrorPartitionMachine, type RecoveryRoute, recoveryRoute } from "./mirror-partition.machine";
import type { MirrorPartitionContext, MirrorPartitionInput } from "./mirror-partition.types";

interface Template {
  readonly snapshot: MirrorPartitionSnapshot;
  /** The actions on `recovering`'s edge for the route (resolved per partition). */
  readonly edgeActions: readonly unknown[];
}

// The state `recovering` enters depends only on the route; the snapshot for it is resolved once from the
// chart (a real pass through `recovering`) and each partition gets a copy with its own context. Resolving
// the state nodes per partition is what made bulk loads slow; the resolved nodes and value are immutable.
const templates = new Map<RecoveryRoute, Template>();

function edgeActionsOf(route: RecoveryRoute): readonly unknown[] {
  const recovering = mirrorPartitionMachine.root.states.recovering as AnyStateNode;
  for (const t of recovering.always ?? []) {
    const params = (t.guard as { params?: { route?: string } } | undefined)?.params;
    if (params?.route === route) return t.actions as unknown[];
  }
  return [];
}

function template(
  route: RecoveryRoute,
  input: MirrorPartitionInput,
  context: MirrorPartitionContext,
): Template {
  let t = templates.get(route);
  if (t === undefined) {
    const value = initialTransition(mirrorPartitionMachine, input)[0].value;
    t = {
      snapshot: mirrorPartitionMachine.resolveState({ value, context }),
      edgeActions: edgeActionsOf(route),
    };
    templates.set(route, t);
  }
  return t;
}

/**
 * The fast path of `recoverPartition` for bulk loads: the same snapshot and effects (a property test checks
 * this) without building a throw-away actor per partition. The rare route that asks for a commit during
 * recovery (a paused partition recovered in MIRRORING) takes the slow path.
 */
export function rehydratePartition(input: MirrorPartitionInput & { readonly record: RecoveredPartition }): {
  readonly snapshot: MirrorPartitionSnapshot;
  readonly effects: readonly MirrorPartitionEffect[];
} {
  const context = initialContext(input);
  const route = recoveryRoute(context);
  if (route === "MIRRORING_PAUSE_REQUESTED") return recoverPartition(input);
  const t = template(route, input, context);
  const snapshot = { ...t.snapshot, context } as MirrorPartitionSnapshot;
  // xstate's order: the edge's actions, then the entry actions of the entered states, outermost first.
  return { snapshot, effects: [...resolveEffects(t.edgeActions, context), ...pendingEffectsOf(snapshot)] };
}
