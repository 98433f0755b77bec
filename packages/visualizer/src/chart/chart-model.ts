import type { MachineGraph, MachineGraphNode, MachineGraphTransition } from "@cluster-mirror/machines";

/** What the user chose to see of a machine: which compound states are collapsed, which one is in focus. */
export interface ChartView {
  /** Ids of compound states drawn as one box (their children hidden, their edges rerouted to the box). */
  readonly collapsed: readonly string[];
  /** Id of the state whose subtree alone is drawn; null draws the whole machine. */
  readonly focus?: string | null;
}

/** One visible state of a chart. */
export interface ChartNode {
  readonly id: string;
  readonly label: string;
  readonly type: MachineGraphNode["type"] | "marker";
  /** True for a compound/parallel state drawn collapsed. */
  readonly collapsed: boolean;
  /** Whether the state has children (so it can be collapsed or expanded). */
  readonly expandable: boolean;
  /** Whether some transition from this state (or a hidden descendant) leads into FAILED (folded away). */
  readonly canFail: boolean;
  readonly children: readonly ChartNode[];
}

/** One visible edge: every transition between the same two visible states with the same label, merged. */
export interface ChartEdge {
  readonly id: string;
  readonly source: string;
  readonly target: string;
  readonly label: string;
  /** Number of machine transitions merged into this edge. */
  readonly count: number;
  /** Id of the edge's lowest common parent (where ELK places it); the synthetic root is `ROOT_ID`. */
  readonly container: string;
}

/** A chart ready to lay out. */
export interface Chart {
  readonly machine: string;
  readonly root: ChartNode;
  readonly edges: readonly ChartEdge[];
}

/** Id of the synthetic node around the machine, so edges declared on the machine itself have a parent. */
export const ROOT_ID = "__chart_root";
/** Id of the one marker that stands for "any state marked ⚠ can fail". */
export const FAILURE_MARKER_ID = "__any_failure";
/** The lifecycle state (spec §4) whose incoming edges fold into one marker. */
export const FAILED_STATE = "FAILED";

/** Events that commit a pending change: edges taken on them are labelled by what started the change. */
const COMMIT_EVENTS = new Set(["COMMITTED"]);
/** The partition chart's shared commit step (every lifecycle change waits there for its append). */
const COMMIT_STEP = "committing";

/**
 * The default view of a machine: every compound state below the top level collapsed when the machine is
 * large (the lifecycle view of the partition machine), nothing collapsed when it is small.
 */
export function defaultView(graph: MachineGraph, maxVisible = 30): ChartView {
  const all: MachineGraphNode[] = [];
  const walk = (n: MachineGraphNode) => {
    all.push(n);
    for (const c of n.children) walk(c);
  };
  walk(graph.root);
  if (all.length <= maxVisible) return { collapsed: [], focus: null };
  return {
    collapsed: all.filter((n) => n !== graph.root && n.children.length > 0).map((n) => n.id),
    focus: null,
  };
}

/** Builds the visible chart of `graph` under `view`: collapsed states, folded FAILED edges, merged edges. */
export function buildChart(graph: MachineGraph, view: ChartView): Chart {
  const collapsed = new Set(view.collapsed);
  const parentOf = new Map<string, string>();
  const byId = new Map<string, MachineGraphNode>();
  const index = (n: MachineGraphNode, parent: string) => {
    byId.set(n.id, n);
    parentOf.set(n.id, parent);
    for (const c of n.children) index(c, n.id);
  };
  index(graph.root, ROOT_ID);
  const focusId = view.focus && byId.has(view.focus) ? view.focus : graph.root.id;

  const ancestors = (id: string): string[] => {
    const out = [id];
    for (let p = parentOf.get(id); p !== undefined; p = parentOf.get(p)) out.push(p);
    return out;
  };
  const inFocus = (id: string) => ancestors(id).includes(focusId);
  /** The visible node that stands for `id`: its outermost collapsed ancestor, or itself. */
  const visibleOf = (id: string): string => {
    let rep = id;
    for (const a of ancestors(id)) {
      if (a === focusId) break;
      if (collapsed.has(a)) rep = a;
    }
    return rep;
  };
  const failed = graph.root.children.find((c) => c.key === FAILED_STATE)?.id ?? null;
  const isInFailed = (id: string) => failed !== null && ancestors(id).includes(failed);

  // What started each commit step: events of transitions entering a node from outside it.
  const entering = new Map<string, Set<string>>();
  for (const t of graph.transitions) {
    for (const target of t.targets) {
      for (const a of ancestors(target)) {
        if (a === ROOT_ID || ancestors(t.source).includes(a)) break;
        const set = entering.get(a) ?? new Set<string>();
        set.add(t.event);
        entering.set(a, set);
      }
    }
  }
  const labelOf = (t: MachineGraphTransition, visibleSource: string): string => {
    if (!COMMIT_EVENTS.has(t.event)) return t.event;
    // The commit step is the source's ancestor right below the visible source (or the source itself).
    const chain = ancestors(t.source);
    const at = chain.indexOf(visibleSource);
    const step = at > 0 ? (chain[at - 1] as string) : t.source;
    const causes = [...(entering.get(step) ?? [])].filter((e) => !COMMIT_EVENTS.has(e)).sort();
    return causes.length > 0 ? `${causes.join(" | ")} ✓` : t.event;
  };

  const canFail = new Set<string>();
  let failures = 0;
  const merged = new Map<string, { source: string; target: string; label: string; count: number }>();
  // The shared commit step: a change is drawn from the state that asks for it to the state it commits
  // (`commitTo`), labelled by its cause; the step's own COMMITTED edges are those same changes.
  const commitStep = graph.root.children.find((c) => c.key === COMMIT_STEP)?.id;
  const lifecycleId = new Map(graph.root.children.map((c) => [c.key, c.id]));
  const inCommitStep = (id: string) => commitStep !== undefined && ancestors(id).includes(commitStep);
  for (const t of graph.transitions) {
    if (!inFocus(t.source)) continue;
    if (inCommitStep(t.source) && focusId !== commitStep) continue;
    const source = visibleOf(t.source);
    const committed = t.commitTo === null ? undefined : lifecycleId.get(t.commitTo);
    const targets =
      committed !== undefined && t.targets.some(inCommitStep) && focusId !== commitStep
        ? [committed]
        : t.targets;
    for (const rawTarget of targets) {
      if (!inFocus(rawTarget)) continue;
      const target = visibleOf(rawTarget);
      if (failed !== null && isInFailed(rawTarget) && !isInFailed(t.source) && focusId !== failed) {
        canFail.add(source);
        failures++;
        continue;
      }
      if (source === target) continue; // internal to a collapsed state (or a self-loop): not drawn
      const label = labelOf(t, source);
      const key = `${source}\u0000${target}\u0000${label}`;
      const m = merged.get(key);
      if (m) m.count++;
      else merged.set(key, { source, target, label, count: 1 });
    }
  }

  const toChartNode = (n: MachineGraphNode): ChartNode => {
    const isCollapsed = collapsed.has(n.id) && n.id !== focusId && n.children.length > 0;
    return {
      id: n.id,
      label: n.key,
      type: n.type,
      collapsed: isCollapsed,
      expandable: n.children.length > 0,
      canFail: canFail.has(n.id),
      children: isCollapsed ? [] : n.children.map(toChartNode),
    };
  };
  const focusNode = byId.get(focusId) as MachineGraphNode;
  let root = toChartNode(focusNode);
  const edges: ChartEdge[] = [];
  const visibleParent = new Map<string, string>();
  const indexVisible = (n: ChartNode, parent: string) => {
    visibleParent.set(n.id, parent);
    for (const c of n.children) indexVisible(c, n.id);
  };
  indexVisible(root, ROOT_ID);
  const visibleAncestors = (id: string): string[] => {
    const out = [id];
    for (let p = visibleParent.get(id); p !== undefined; p = visibleParent.get(p)) out.push(p);
    return out;
  };
  /** Lowest common parent: the deepest common ancestor that is neither endpoint. */
  const containerOf = (a: string, b: string): string => {
    const bs = new Set(visibleAncestors(b));
    for (const x of visibleAncestors(a)) {
      if (x !== a && x !== b && bs.has(x)) return x;
    }
    return ROOT_ID;
  };
  if (failures > 0 && failed !== null) {
    const failedVisible = visibleOf(failed);
    root = {
      ...root,
      children: [
        ...root.children,
        {
          id: FAILURE_MARKER_ID,
          label: `any ⚠ state`,
          type: "marker",
          collapsed: false,
          expandable: false,
          canFail: false,
          children: [],
        },
      ],
    };
    visibleParent.set(FAILURE_MARKER_ID, root.id);
    edges.push({
      id: `e${edges.length}`,
      source: FAILURE_MARKER_ID,
      target: failedVisible,
      label: `failure (${failures})`,
      count: failures,
      container: containerOf(FAILURE_MARKER_ID, failedVisible),
    });
  }
  for (const m of merged.values()) {
    edges.push({
      id: `e${edges.length}`,
      source: m.source,
      target: m.target,
      label: m.count > 1 ? `${m.label} ×${m.count}` : m.label,
      count: m.count,
      container: containerOf(m.source, m.target),
    });
  }
  return { machine: graph.id, root, edges };
}
