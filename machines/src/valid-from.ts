import { type AnyStateMachine, type AnyStateNode, initialTransition } from "xstate";
import { isLifecycleState, LIFECYCLE_STATES, type LifecycleState } from "./lifecycle";
import { mirrorPartitionMachine } from "./mirror-partition.machine";

/** One lifecycle-level edge found in the machine definition. */
export interface LifecycleTransition {
  /** Lifecycle state the transition leaves. */
  readonly from: LifecycleState;
  /** Lifecycle state the transition enters. */
  readonly to: LifecycleState;
  /** The event that takes it (for a committed change, always `COMMITTED`). */
  readonly event: string;
  /** Id of the state node that declares the transition. */
  readonly source: string;
  /** Id of the target state node. */
  readonly target: string;
}

/** The lifecycle state (top-level node) that contains `node`, or null for `recovering` and the root. */
function lifecycleOfNode(node: AnyStateNode): LifecycleState | null {
  let n: AnyStateNode | undefined = node;
  while (n?.parent?.parent) n = n.parent;
  return n?.parent && isLifecycleState(n.key) ? n.key : null;
}

function* descendants(node: AnyStateNode): Generator<AnyStateNode> {
  yield node;
  for (const child of Object.values(node.states) as AnyStateNode[]) yield* descendants(child);
}

/**
 * Every transition in the machine that crosses lifecycle states or commits one (a `COMMITTED` transition
 * out of a `committing_X` step, which is how FAILED -> FAILED appears). Read from `machine.root`, so the
 * chart is the single source of truth.
 */
export function lifecycleTransitions(
  machine: AnyStateMachine = mirrorPartitionMachine,
): LifecycleTransition[] {
  const out: LifecycleTransition[] = [];
  for (const node of descendants(machine.root)) {
    const from = lifecycleOfNode(node);
    if (from === null) continue;
    const defs = [...[...node.transitions.values()].flat(), ...(node.always ?? [])];
    for (const t of defs) {
      for (const target of t.target ?? []) {
        const to = lifecycleOfNode(target);
        if (to === null) continue;
        if (to !== from || t.eventType === "COMMITTED") {
          out.push({ from, to, event: t.eventType, source: node.id, target: target.id });
        }
      }
    }
  }
  return out;
}

/** For each lifecycle state, the states it may be entered from; `null` means "no record yet" (spec §4). */
export type ValidFromTable = { readonly [S in LifecycleState]: readonly (LifecycleState | null)[] };

/**
 * Derives spec §4's valid-from table from the machine definition: `from` is valid for `to` when some
 * transition commits a change `from -> to`. `null` (no record) is valid wherever the lifecycle state of a
 * fresh actor (no record) is.
 */
export function deriveValidFrom(machine: AnyStateMachine = mirrorPartitionMachine): ValidFromTable {
  const sets = new Map<LifecycleState, Set<LifecycleState | null>>(
    LIFECYCLE_STATES.map((s) => [s, new Set()]),
  );
  for (const t of lifecycleTransitions(machine)) sets.get(t.to)?.add(t.from);
  const fresh = freshLifecycleState(machine);
  for (const set of sets.values()) if (fresh !== null && set.has(fresh)) set.add(null);
  const order = (s: LifecycleState | null) => (s === null ? -1 : LIFECYCLE_STATES.indexOf(s));
  const table = {} as Record<LifecycleState, readonly (LifecycleState | null)[]>;
  for (const [to, set] of sets) table[to] = Object.freeze([...set].sort((a, b) => order(a) - order(b)));
  return Object.freeze(table);
}

function freshLifecycleState(machine: AnyStateMachine): LifecycleState | null {
  const [snapshot] = initialTransition(machine, undefined);
  const value: unknown = snapshot.value;
  const key = typeof value === "string" ? value : Object.keys(value as object)[0];
  return key !== undefined && isLifecycleState(key) ? key : null;
}

/** Spec §4's valid-from table, derived from `mirrorPartitionMachine`. */
export const validFrom: ValidFromTable = deriveValidFrom();

/** Whether the lifecycle change `from -> to` is in spec §4's table (`from` null: no record yet). */
export function canTransition(from: LifecycleState | null, to: LifecycleState): boolean {
  return validFrom[to].includes(from);
}
