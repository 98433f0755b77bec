import type { AnyStateMachine, AnyStateNode } from "xstate";
import { coordinatorShardMachine } from "./coordinator-shard.machine";
import { fetcherMachine } from "./fetcher.machine";
import { mirrorPartitionMachine } from "./mirror-partition.machine";

/** Kind of a state node, as XState defines it. */
export type MachineGraphNodeType = "atomic" | "compound" | "parallel" | "final" | "history";

/** One state node of a machine graph; parallel regions are the children of a `parallel` node. */
export interface MachineGraphNode {
  /** Full id, e.g. `mirrorPartition.STOPPING.removingFetcher`. */
  readonly id: string;
  /** Key within the parent, e.g. `removingFetcher`. */
  readonly key: string;
  readonly type: MachineGraphNodeType;
  /** Id of the initial child of a compound node; null otherwise. */
  readonly initial: string | null;
  /** Names of the entry actions (the effects the state owns). */
  readonly entry: readonly string[];
  /** Names of the exit actions. */
  readonly exit: readonly string[];
  /** The state's description from the machine definition, if any. */
  readonly description: string | null;
  readonly children: readonly MachineGraphNode[];
}

/** One transition of a machine graph. */
export interface MachineGraphTransition {
  /** Id of the state node that declares the transition. */
  readonly source: string;
  /** Ids of the target state nodes (empty for a targetless transition that only runs actions). */
  readonly targets: readonly string[];
  /** Event name; `always` for eventless transitions, `done` when a compound/parallel state completes. */
  readonly event: string;
  /** Guard name (with parameters, e.g. `recordStateIs(MIRRORING)`), or null. */
  readonly guard: string | null;
  /** Names of the actions run on the transition. */
  readonly actions: readonly string[];
  /**
   * The state a lifecycle change asks for, when the transition prepares one (the mirror partition's
   * `prepareCommit` action, or `prepareDeferredFailure`: FAILED); null otherwise. The transition itself
   * targets the commit step, which enters that state on COMMITTED.
   */
  readonly commitTo: string | null;
}

/** A JSON-serializable description of a machine for the visualizer. */
export interface MachineGraph {
  /** The machine id. */
  readonly id: string;
  readonly root: MachineGraphNode;
  /** Every transition, in document order. */
  readonly transitions: readonly MachineGraphTransition[];
}

type ActionLike = string | { type?: string } | ((...args: never[]) => unknown);

function actionName(a: unknown): string {
  const action = a as ActionLike;
  if (typeof action === "string") return action;
  if (typeof action === "function") return action.name || "inline";
  return action.type ?? "inline";
}

/** A readable guard name: `name`, `name(param values)`, or `and(a, b)` / `or(...)` / `not(...)`. */
export function guardName(g: unknown): string | null {
  if (g === undefined || g === null) return null;
  if (typeof g === "string") return g;
  if (typeof g === "function") {
    const nested = (g as { guards?: unknown[] }).guards;
    const name = g.name || "inline";
    return nested ? `${name}(${nested.map((n) => guardName(n)).join(", ")})` : name;
  }
  const { type, params } = g as { type?: string; params?: unknown };
  if (params === undefined || typeof params === "function") return type ?? "inline";
  const values = typeof params === "object" && params !== null ? Object.values(params) : [params];
  return `${type ?? "inline"}(${values.map(String).join(", ")})`;
}

/** Normalizes XState's internal event types for display (`always`, `done`). */
export function eventName(eventType: string): string {
  if (eventType === "") return "always";
  if (eventType.startsWith("xstate.done.state.")) return "done";
  return eventType;
}

function toNode(node: AnyStateNode): MachineGraphNode {
  return {
    id: node.id,
    key: node.key,
    type: node.type,
    initial: node.type === "compound" ? (node.initial?.target[0]?.id ?? null) : null,
    entry: (node.entry as unknown[]).map(actionName),
    exit: (node.exit as unknown[]).map(actionName),
    description: node.description ?? null,
    children: (Object.values(node.states) as AnyStateNode[]).map(toNode),
  };
}

/** The state a transition's actions prepare a commit to (see `MachineGraphTransition.commitTo`). */
function commitToOf(actions: readonly unknown[]): string | null {
  for (const a of actions) {
    if (a === "prepareDeferredFailure") return "FAILED";
    const { type, params } = (typeof a === "object" && a !== null ? a : {}) as {
      type?: string;
      params?: unknown;
    };
    const to = type === "prepareCommit" ? (params as { to?: unknown } | undefined)?.to : undefined;
    if (typeof to === "string") return to;
  }
  return null;
}

function collectTransitions(node: AnyStateNode, out: MachineGraphTransition[]): void {
  const defs = [...[...node.transitions.values()].flat(), ...(node.always ?? [])];
  for (const t of defs) {
    out.push({
      source: node.id,
      targets: (t.target ?? []).map((n: AnyStateNode) => n.id),
      event: eventName(t.eventType),
      guard: guardName(t.guard),
      actions: (t.actions as unknown[]).map(actionName),
      commitTo: commitToOf(t.actions as unknown[]),
    });
  }
  for (const child of Object.values(node.states) as AnyStateNode[]) collectTransitions(child, out);
}

/** Builds the JSON graph of a machine: nested states (parallel regions included) and every transition. */
export function toMachineGraph(machine: AnyStateMachine): MachineGraph {
  const transitions: MachineGraphTransition[] = [];
  collectTransitions(machine.root, transitions);
  return { id: machine.id, root: toNode(machine.root), transitions };
}

/** The project's machines by name, in the order the README and the visualizer show them. */
export const MACHINES = {
  mirrorPartition: mirrorPartitionMachine,
  coordinatorShard: coordinatorShardMachine,
  fetcher: fetcherMachine,
} as const;

/** Name of one of the project's machines. */
export type MachineName = keyof typeof MACHINES;

/** The JSON graph of each of the project's machines. */
export function machineGraphs(): { readonly [N in MachineName]: MachineGraph } {
  return {
    mirrorPartition: toMachineGraph(MACHINES.mirrorPartition),
    coordinatorShard: toMachineGraph(MACHINES.coordinatorShard),
    fetcher: toMachineGraph(MACHINES.fetcher),
  };
}
