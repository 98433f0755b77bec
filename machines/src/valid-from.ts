import { type AnyStateMachine, type AnyStateNode, initialTransition } from "xstate";
import { isLifecycleState, LIFECYCLE_STATES, type LifecycleState } from "./lifecycle";
import { mirrorPartitionMachine } from "./mirror-partition.machine";

/** One lifecycle change the machine definition can request: a transition that prepares a commit. */
export interface LifecycleTransition {
  /** Lifecycle state the change leaves (the committed state when it is requested). */
  readonly from: LifecycleState;
  /** Lifecycle state the change goes to once COMMITTED. */
  readonly to: LifecycleState;
  /** The event that requests it. */
  readonly event: string;
  /** Id of the state node that declares the transition. */
  readonly source: string;
  /** Id of the target state node (the commit step). */
  readonly target: string;
}

/** Id of the commit step every lifecycle change goes through. */
const COMMITTING = "committing";

/** The lifecycle state (top-level node) that contains `node`, or null for `recovering`, `committing`, the root. */
function lifecycleOfNode(node: AnyStateNode): LifecycleState | null {
  let n: AnyStateNode | undefined = node;
  while (n?.parent?.parent) n = n.parent;
  return n?.parent && isLifecycleState(n.key) ? n.key : null;
}

function isInCommitStep(node: AnyStateNode): boolean {
  return node.path[0] === COMMITTING;
}

function* descendants(node: AnyStateNode): Generator<AnyStateNode> {
  yield node;
  for (const child of Object.values(node.states) as AnyStateNode[]) yield* descendants(child);
}

type ActionDef = string | { readonly type?: string; readonly params?: unknown };

/** The state a transition's actions prepare a commit to, if any (`prepareDeferredFailure` commits FAILED). */
function preparedChange(t: { actions: readonly unknown[] }): LifecycleState | null {
  for (const a of t.actions as ActionDef[]) {
    if (a === "prepareDeferredFailure") return "FAILED";
    if (typeof a === "object" && a.type === "prepareCommit") {
      const to = (a.params as { to?: unknown } | undefined)?.to;
      if (typeof to === "string" && isLifecycleState(to)) return to;
    }
  }
  return null;
}

/** The states a guard's `commitsTo` conditions allow (null: the guard does not name the change). */
export function commitsToOf(guard: unknown): LifecycleState[] | null {
  if (guard === undefined || guard === null) return null;
  const nested = (guard as { guards?: unknown[] }).guards;
  if (typeof guard === "function" && nested) {
    for (const g of nested) {
      const states = commitsToOf(g);
      if (states !== null) return states;
    }
    return null;
  }
  const { type, params } = guard as { type?: string; params?: { states?: LifecycleState[] } };
  return type === "commitsTo" && params?.states ? [...params.states] : null;
}

type TransitionDef = {
  eventType: string;
  actions: readonly unknown[];
  guard?: unknown;
  target?: AnyStateNode[];
};

function transitionsOf(node: AnyStateNode): TransitionDef[] {
  return [...[...node.transitions.values()].flat(), ...(node.always ?? [])] as TransitionDef[];
}

/**
 * Every lifecycle change the machine can request, read from `machine.root` (the chart is the single source
 * of truth): a transition inside lifecycle state S that prepares a commit to T is a change S -> T. Inside the
 * commit step the state left is the committed one: a COMMITTED edge that starts another commit (a deferred
 * failure, a pause asked for while PREPARING) leaves the state it just committed (its `commitsTo` guard);
 * any other transition there (a failure while the append is retried) leaves whichever state asked for the
 * change being committed.
 */
export function lifecycleTransitions(
  machine: AnyStateMachine = mirrorPartitionMachine,
): LifecycleTransition[] {
  const out: LifecycleTransition[] = [];
  const inCommitStep: { node: AnyStateNode; t: TransitionDef; to: LifecycleState }[] = [];
  for (const node of descendants(machine.root)) {
    const from = lifecycleOfNode(node);
    for (const t of transitionsOf(node)) {
      const to = preparedChange(t);
      if (to === null) continue;
      if (from !== null) {
        for (const target of t.target ?? []) {
          out.push({ from, to, event: t.eventType, source: node.id, target: target.id });
        }
      } else if (isInCommitStep(node)) inCommitStep.push({ node, t, to });
    }
  }
  const requesting = new Set(out.map((e) => e.from));
  for (const { node, t, to } of inCommitStep) {
    const froms = t.eventType === "COMMITTED" ? (commitsToOf(t.guard) ?? []) : [...requesting];
    for (const from of froms) {
      for (const target of t.target ?? []) {
        out.push({ from, to, event: t.eventType, source: node.id, target: target.id });
      }
    }
  }
  return out;
}

/** For each lifecycle state, the states it may be entered from; `null` means "no record yet" (spec §4). */
export type ValidFromTable = { readonly [S in LifecycleState]: readonly (LifecycleState | null)[] };

/**
 * Derives spec §4's valid-from table from the machine definition: `from` is valid for `to` when some
 * transition requests a change `from -> to` (see `lifecycleTransitions`). `null` (no record) is valid wherever the lifecycle state of a
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
