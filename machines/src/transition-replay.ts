import {
  type AnyStateMachine,
  createActor,
  type EventFromLogic,
  type ExecutableActionObject,
  type InputFrom,
  type SnapshotFrom,
} from "xstate";
import { inertTransition } from "./inert-scope";

// ---------------------------------------------------------------------------------------------------------
// Replayed transitions
//
// xstate's `transition()` recomputes the whole SCXML microstep (exit set, entry set, state value, tags, a
// new snapshot) on every event, although for a given configuration and selected transition all of that is
// the same every time: only the guards (which select the transition) and the actions (which read the
// context and the event) depend on the data. A replay keeps, per (configuration, transition), the ordered
// action definitions xstate resolves and the resulting configuration, and on later events selects the
// transition with xstate itself (`getTransitionData`), then resolves the same actions in the same order
// with the same arguments. Every replay is checked against xstate's own result the first times it is
// used (with different contexts); one that differs, or a step outside what a replay supports (several
// transitions, final or history states, eventless transitions, invocations, builtin actions other than
// `assign`), always goes through xstate.

type AnyNode = {
  readonly id: string;
  readonly type: string;
  readonly parent?: AnyNode;
  readonly order: number;
  readonly entry: readonly unknown[];
  readonly exit: readonly unknown[];
  readonly invoke: readonly unknown[];
  readonly always?: readonly unknown[];
  readonly initial?: { readonly actions: readonly unknown[] };
  readonly transitions: ReadonlyMap<string, readonly AnyTransitionDef[]>;
};
type AnyTransitionDef = {
  readonly guard?: unknown;
  readonly source: AnyNode;
  readonly target?: readonly AnyNode[];
  readonly reenter?: boolean;
  readonly actions: readonly unknown[];
};
type ActionDef = string | { readonly type: string; readonly params?: unknown };
type AnySnapshot = {
  readonly status: string;
  readonly output: unknown;
  readonly error: unknown;
  readonly machine: unknown;
  readonly context: Record<string, unknown>;
  readonly _nodes: readonly AnyNode[];
  readonly value: unknown;
  readonly tags: Set<string>;
  readonly children: unknown;
  readonly historyValue: unknown;
  readonly matches: unknown;
  readonly hasTag: unknown;
  readonly can: unknown;
  readonly getMeta: unknown;
  readonly toJSON: unknown;
};

/** One action definition, resolved once against the machine's implementations. */
interface ReplayStep {
  readonly type: string;
  /** The definition's `params` (a value, or a function of `{ context, event }`); undefined: none. */
  readonly params: unknown;
  /** The implementation (a named effect: xstate hands it to the executor). */
  readonly impl: unknown;
  /** The assignment of an `assign` action; undefined for any other action. */
  readonly assignment: unknown;
}

interface Replay {
  /** Action definitions in xstate's order: exits, the transition's, entries. */
  readonly steps: readonly ReplayStep[];
  /** A snapshot xstate produced for this step (its configuration, value and tags are reused). */
  readonly template: AnySnapshot;
  /** False when the step leaves the configuration as it is. */
  readonly nodesChanged: boolean;
  /** Replays checked against xstate so far; trusted from `VERIFY_TIMES` on. */
  verified: number;
  /** False: this step always goes through xstate. */
  ok: boolean;
}

const VERIFY_TIMES = 3;
const NO_TRANSITION = {};

function isDescendant(node: AnyNode, ancestor: AnyNode): boolean {
  let p = node.parent;
  while (p !== undefined) {
    if (p === ancestor) return true;
    p = p.parent;
  }
  return false;
}

/** xstate's transition domain for a transition without history targets (undefined: not supported). */
function domainOf(t: AnyTransitionDef): AnyNode | undefined {
  const targets = t.target ?? [];
  if (!t.reenter && targets.every((x) => x === t.source || isDescendant(x, t.source))) return t.source;
  const all = [...targets, t.source];
  const [head, ...tail] = all;
  let a = head?.parent;
  while (a !== undefined) {
    const anc = a;
    if (tail.every((n) => isDescendant(n, anc))) return anc;
    a = a.parent;
  }
  return undefined;
}

/**
 * The action definitions of one microstep taking `t` from the configuration `from` to `to`, in xstate's
 * order (exits, the transition's actions, entries), or undefined when a replay cannot take it. A final
 * state may be entered only when its done event changes nothing: a region of a parallel state finishing
 * while another still runs, the region having no onDone of its own.
 */
function microstepActions(
  from: readonly AnyNode[],
  t: AnyTransitionDef,
  to: readonly AnyNode[],
): ActionDef[] | undefined {
  let exited: AnyNode[] = [];
  let entered: AnyNode[] = [];
  if (t.target !== undefined && t.target.length > 0) {
    const domain = domainOf(t);
    if (domain === undefined) return undefined;
    const reenterSelf = t.reenter === true && t.source === domain;
    exited = from.filter((n) => isDescendant(n, domain));
    entered = to.filter((n) => isDescendant(n, domain));
    if (reenterSelf) {
      exited.push(domain);
      entered.push(domain);
    }
    exited.sort((a, b) => b.order - a.order);
    entered.sort((a, b) => a.order - b.order);
  }
  const defs: ActionDef[] = [];
  for (const n of exited) {
    if (n.invoke.length > 0) return undefined;
    defs.push(...(n.exit as ActionDef[]));
  }
  defs.push(...(t.actions as ActionDef[]));
  for (const n of entered) {
    if (n.invoke.length > 0 || n.type === "history") return undefined;
    if (n.type === "final" && (n.parent?.parent?.type !== "parallel" || hasDone(n.parent))) return undefined;
    if ((n.initial?.actions.length ?? 0) > 0) return undefined;
    defs.push(...(n.entry as ActionDef[]));
  }
  return defs;
}

/**
 * The join of a parallel state: `t` enters the final state of the last region still running, the
 * regions' done events change nothing, and the parallel state's done event takes its one unguarded
 * onDone transition. Two microsteps, as xstate runs them in one macrostep; undefined for anything else.
 */
function joinStep(snapshot: AnySnapshot, t: AnyTransitionDef, result: AnySnapshot): ActionDef[] | undefined {
  const final = t.target?.length === 1 ? t.target[0] : undefined;
  const region = final?.parent;
  const parallel = region?.parent;
  if (final?.type !== "final" || region?.type !== "compound" || parallel?.type !== "parallel")
    return undefined;
  // Every other region is already in a final state, and no region reacts to its own completion.
  for (const n of snapshot._nodes) {
    if (n.parent?.parent === parallel && n.parent !== region && n.type !== "final") return undefined;
    if (n.parent === parallel && hasDone(n)) return undefined;
  }
  const onDone = parallel.transitions.get(`xstate.done.state.${parallel.id}`);
  const join = onDone?.length === 1 ? onDone[0] : undefined;
  if (join === undefined || join.guard !== undefined || (join.target?.length ?? 0) === 0) return undefined;
  const domain = domainOf(t);
  if (domain === undefined || !isDescendant(final, domain)) return undefined;
  // The configuration between the two microsteps: `t`'s exits replaced by the final state and the nodes
  // between it and the domain.
  const between = snapshot._nodes.filter((n) => !isDescendant(n, domain));
  for (let n: AnyNode | undefined = final; n !== undefined && n !== domain; n = n.parent) between.push(n);
  const first = microstepActions(snapshot._nodes, t, between);
  const second = microstepActions(between, join, result._nodes);
  if (first === undefined || second === undefined) return undefined;
  return [...first, ...second];
}

/** True when `node` has an onDone transition (a done event would move on from it). */
function hasDone(node: AnyNode | undefined): boolean {
  if (node === undefined) return false;
  for (const descriptor of node.transitions.keys())
    if (descriptor.startsWith("xstate.done.state.")) return true;
  return false;
}

function hasAlways(nodes: readonly AnyNode[]): boolean {
  return nodes.some((n) => n.always !== undefined && n.always.length > 0);
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** A machine's pure transitions, replayed per (configuration, transition) once xstate's result is verified. */
export function replayTransition<TMachine extends AnyStateMachine>(
  machine: TMachine,
  scopeInput: InputFrom<TMachine>,
) {
  const slow = inertTransition(machine, scopeInput);
  const m = machine as unknown as {
    getTransitionData(s: unknown, e: unknown): AnyTransitionDef[];
    implementations: { actions: Record<string, unknown> };
  };
  let scope: { self: unknown; system: unknown } | undefined;
  const scopeOf = () => {
    if (scope === undefined) {
      const self = createActor(machine, { input: scopeInput });
      scope = { self, system: self.system };
    }
    return scope;
  };
  const spawn = () => {
    throw new Error("replayed transitions do not spawn");
  };
  /** Configuration key: the ids of the active nodes, cached per `_nodes` array (shared by replays). */
  const configKeys = new WeakMap<readonly AnyNode[], string>();
  const configKey = (nodes: readonly AnyNode[]): string => {
    let key = configKeys.get(nodes);
    if (key === undefined) {
      key = nodes
        .map((n) => n.id)
        .sort()
        .join("\u0000");
      configKeys.set(nodes, key);
    }
    return key;
  };
  const replays = new Map<string, Map<unknown, Replay>>();

  // Transition selection as xstate's `getTransitionData` does it for a configuration with one atomic
  // state: the first candidate (the atomic state's, then each ancestor's, in document order) whose guard
  // passes. Each (state, event type) is checked against xstate the first times; wildcard descriptors,
  // parallel configurations or a throwing guard go through xstate.
  interface Candidates {
    readonly list: readonly AnyTransitionDef[] | null;
    checked: number;
  }
  const candidatesByNode = new Map<AnyNode, Map<string, Candidates>>();
  const candidatesOf = (leaf: AnyNode, type: string): Candidates => {
    let byType = candidatesByNode.get(leaf);
    if (byType === undefined) {
      byType = new Map();
      candidatesByNode.set(leaf, byType);
    }
    let c = byType.get(type);
    if (c === undefined) {
      let list: AnyTransitionDef[] | null = [];
      for (let n: AnyNode | undefined = leaf; n !== undefined && list !== null; n = n.parent) {
        for (const descriptor of n.transitions.keys()) if (descriptor.includes("*")) list = null;
        if (list !== null) list.push(...(n.transitions.get(type) ?? []));
      }
      c = { list, checked: 0 };
      byType.set(type, c);
    }
    return c;
  };
  const leaves = new WeakMap<readonly AnyNode[], AnyNode | null>();
  const leafOf = (nodes: readonly AnyNode[]): AnyNode | null => {
    let leaf = leaves.get(nodes);
    if (leaf === undefined) {
      const atomic = nodes.filter((n) => n.type === "atomic" || n.type === "final");
      leaf = atomic.length === 1 ? (atomic[0] as AnyNode) : null;
      leaves.set(nodes, leaf);
    }
    return leaf;
  };
  const passes = (guard: unknown, snapshot: AnySnapshot, event: { type: string }): boolean => {
    const context = snapshot.context;
    const isInline = typeof guard === "function";
    const g = guard as string | { type: string; params?: unknown };
    const resolved = isInline
      ? guard
      : (machine.implementations.guards as Record<string, unknown>)[typeof g === "string" ? g : g.type];
    if (typeof resolved !== "function") throw new Error("not a plain guard");
    const params =
      isInline || typeof g === "string"
        ? undefined
        : "params" in g
          ? typeof g.params === "function"
            ? (g.params as (a: unknown) => unknown)({ context, event })
            : g.params
          : undefined;
    const args = { context, event };
    if (!("check" in resolved))
      return Boolean((resolved as (a: unknown, p: unknown) => unknown)(args, params));
    return Boolean(
      (resolved as unknown as { check: (s: unknown, a: unknown, r: unknown) => unknown }).check(
        snapshot,
        args,
        resolved,
      ),
    );
  };
  /** The transitions xstate would select, or undefined when only xstate can tell. */
  const select = (snapshot: AnySnapshot, event: { type: string }): AnyTransitionDef[] | undefined => {
    const leaf = leafOf(snapshot._nodes);
    if (leaf === null) return undefined;
    const c = candidatesOf(leaf, event.type);
    if (c.list === null) return undefined;
    let selected: AnyTransitionDef[] | undefined;
    try {
      selected = [];
      for (const t of c.list) {
        if (t.guard === undefined || passes(t.guard, snapshot, event)) {
          selected = [t];
          break;
        }
      }
    } catch {
      return undefined;
    }
    if (c.checked < VERIFY_TIMES * 4) {
      const xs = m.getTransitionData(snapshot, event);
      if (xs.length !== selected.length || xs.some((t, i) => selected?.[i] !== t)) {
        c.checked = 0;
        (c as { list: unknown }).list = null;
        return undefined;
      }
      c.checked++;
    }
    return selected;
  };

  const build = (snapshot: AnySnapshot, t: AnyTransitionDef | undefined, result: AnySnapshot): Replay => {
    const fail = { steps: [], template: result, nodesChanged: true, verified: 0, ok: false };
    if (result.status !== "active" || hasAlways(snapshot._nodes) || hasAlways(result._nodes)) return fail;
    if (t === undefined) return { steps: [], template: result, nodesChanged: false, verified: 0, ok: true };
    const defs: ActionDef[] = [];
    const targets = t.target ?? [];
    if (targets.length > 0 && !targets.every((x) => result._nodes.includes(x))) {
      // xstate went on past the targets within its macrostep: supported only when the target is the
      // last final state of a parallel state, whose onDone transition then runs (the join of regions).
      const join = joinStep(snapshot, t, result);
      if (join === undefined) return fail;
      defs.push(...join);
    } else {
      const step = microstepActions(snapshot._nodes, t, result._nodes);
      if (step === undefined) return fail;
      defs.push(...step);
    }
    const steps: ReplayStep[] = [];
    for (const d of defs) {
      if (typeof d === "function") return fail;
      const type = typeof d === "string" ? d : d.type;
      const impl = m.implementations.actions[type] as
        | { type?: string; resolve?: unknown; assignment?: unknown }
        | undefined;
      if (impl === undefined) return fail;
      const isAssign = "resolve" in impl;
      if (isAssign && impl.type !== "xstate.assign") return fail;
      const params = typeof d === "string" || !("params" in d) ? undefined : d.params;
      if (isAssign && impl.assignment === undefined) return fail;
      steps.push({ type, params, impl, assignment: isAssign ? impl.assignment : undefined });
    }
    const nodesChanged =
      result._nodes.length !== snapshot._nodes.length ||
      result._nodes.some((n) => !snapshot._nodes.includes(n));
    return { steps, template: result, nodesChanged, verified: 0, ok: true };
  };

  const replay = (
    snapshot: AnySnapshot,
    event: unknown,
    r: Replay,
  ): [AnySnapshot, ExecutableActionObject[]] => {
    const { self, system } = scopeOf();
    let context = snapshot.context;
    let assigned = false;
    const actions: ExecutableActionObject[] = [];
    const steps = r.steps;
    for (let i = 0; i < steps.length; i++) {
      const step = steps[i] as ReplayStep;
      const params =
        step.params === undefined
          ? undefined
          : typeof step.params === "function"
            ? (step.params as (a: unknown) => unknown)({ context, event })
            : step.params;
      if (step.assignment === undefined) {
        actions.push({
          type: step.type,
          info: { context, event, self, system },
          params,
          exec: step.impl,
        } as unknown as ExecutableActionObject);
        continue;
      }
      const assignment = step.assignment;
      const args = { context, event, spawn, self, system };
      let partial: Record<string, unknown>;
      if (typeof assignment === "function") partial = assignment(args, params);
      else {
        partial = {};
        for (const key of Object.keys(assignment as object)) {
          const prop = (assignment as Record<string, unknown>)[key];
          partial[key] = typeof prop === "function" ? prop(args, params) : prop;
        }
      }
      // xstate: Object.assign({}, context, partialUpdate); a spread makes the same plain object, faster.
      context = { ...context, ...partial };
      assigned = true;
    }
    if (!assigned && !r.nodesChanged) return [snapshot, actions];
    const t = r.nodesChanged ? r.template : snapshot;
    const next: AnySnapshot = {
      status: snapshot.status,
      output: snapshot.output,
      error: snapshot.error,
      machine: snapshot.machine,
      context,
      _nodes: t._nodes,
      value: t.value,
      tags: t.tags,
      children: snapshot.children,
      historyValue: snapshot.historyValue,
      matches: t.matches,
      hasTag: t.hasTag,
      can: t.can,
      getMeta: t.getMeta,
      toJSON: t.toJSON,
    };
    return [next, actions];
  };

  const same = (
    snapshot: AnySnapshot,
    a: [AnySnapshot, ExecutableActionObject[]],
    b: [AnySnapshot, ExecutableActionObject[]],
  ): boolean => {
    const [sa, aa] = a;
    const [sb, ab] = b;
    if ((sa === snapshot) !== (sb === snapshot)) return false;
    if (sa.status !== sb.status || sa.children !== sb.children || sa.historyValue !== sb.historyValue)
      return false;
    if (sa._nodes.length !== sb._nodes.length || sa._nodes.some((n) => !sb._nodes.includes(n))) return false;
    if (!sameJson(sa.value, sb.value) || !sameJson([...sa.tags], [...sb.tags])) return false;
    if (!sameJson(sa.context, sb.context)) return false;
    if (Object.keys(sa.context).join() !== Object.keys(sb.context).join()) return false;
    if (aa.length !== ab.length) return false;
    for (let i = 0; i < aa.length; i++) {
      const x = aa[i] as { type: string; params: unknown };
      const y = ab[i] as { type: string; params: unknown };
      if (x.type !== y.type || !sameJson(x.params, y.params)) return false;
    }
    return true;
  };

  let replayed = 0;
  let throughXstate = 0;
  return {
    /** How many transitions were replayed, and how many went through xstate (unsupported or unverified). */
    stats(): { replayed: number; throughXstate: number } {
      return { replayed, throughXstate };
    },
    transition(
      snapshot: SnapshotFrom<TMachine>,
      event: EventFromLogic<TMachine>,
    ): [SnapshotFrom<TMachine>, ExecutableActionObject[]] {
      throughXstate++;
      const s = snapshot as unknown as AnySnapshot;
      if (s.status !== "active" || s.machine !== machine) return slow.transition(snapshot, event);
      let transitions = select(s, event as { type: string });
      if (transitions === undefined) {
        try {
          transitions = m.getTransitionData(s, event);
        } catch {
          return slow.transition(snapshot, event);
        }
      }
      if (transitions.length > 1) return slow.transition(snapshot, event);
      const t = transitions[0];
      const key = configKey(s._nodes);
      let byTransition = replays.get(key);
      if (byTransition === undefined) {
        byTransition = new Map();
        replays.set(key, byTransition);
      }
      const r = byTransition.get(t ?? NO_TRANSITION);
      if (r?.ok && r.verified >= VERIFY_TIMES) {
        throughXstate--;
        replayed++;
        return replay(s, event, r) as unknown as [SnapshotFrom<TMachine>, ExecutableActionObject[]];
      }
      if (r !== undefined && !r.ok) return slow.transition(snapshot, event);
      // Not trusted yet: xstate decides, and the replay is checked against it.
      const result = slow.transition(snapshot, event);
      const resultAny = result as unknown as [AnySnapshot, ExecutableActionObject[]];
      const candidate = r ?? build(s, t, resultAny[0]);
      if (r === undefined) byTransition.set(t ?? NO_TRANSITION, candidate);
      if (candidate.ok) {
        let replayed: [AnySnapshot, ExecutableActionObject[]] | undefined;
        try {
          replayed = replay(s, event, candidate);
        } catch {
          replayed = undefined;
        }
        if (replayed !== undefined && same(s, replayed, resultAny)) candidate.verified++;
        else candidate.ok = false;
      }
      return result;
    },
  };
}
