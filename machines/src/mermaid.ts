import type { AnyStateMachine } from "xstate";
import {
  type MachineGraph,
  type MachineGraphNode,
  type MachineGraphTransition,
  toMachineGraph,
} from "./graph";

/** A Mermaid-safe identifier for a state id. */
function mid(id: string): string {
  return id.replace(/[^A-Za-z0-9_]/g, "_");
}

function label(t: MachineGraphTransition): string {
  const text = t.guard ? `${t.event} [${t.guard}]` : t.event;
  // Mermaid ends a label at ';' and treats ':' specially.
  return text.replace(/[;:]/g, " ");
}

const parentOf = (id: string): string => id.split(".").slice(0, -1).join(".");

/** Lowest node whose id is a prefix of both ids (their common ancestor). */
function commonAncestor(a: string, b: string): string {
  const pa = a.split(".");
  const pb = b.split(".");
  const out: string[] = [];
  for (let i = 0; i < Math.min(pa.length, pb.length); i++) {
    if (pa[i] !== pb[i]) break;
    out.push(pa[i] as string);
  }
  return out.join(".");
}

/** The child of `scope` that is `id` or contains it. */
function childOfScope(scope: string, id: string): string {
  const depth = scope.split(".").length;
  return id
    .split(".")
    .slice(0, depth + 1)
    .join(".");
}

/** The id of a machine's commit step: the top-level state lifecycle changes go through (`committing`). */
const COMMIT_STEP_KEY = "committing";

/**
 * Mermaid `stateDiagram-v2` text for a machine. Mermaid cannot draw an edge between states inside different
 * composite states, so each transition is drawn between the children of the lowest composite containing
 * both ends (`PREPARING.awaitingIsrTruncation --> MIRRORING` is drawn as `PREPARING --> MIRRORING`); the
 * exact ends are in the JSON graph. A lifecycle change (a transition into the commit step, `committing`,
 * that prepares a commit) is drawn to the state it asks for, so the diagram reads as spec §4's lifecycle;
 * the commit step's own COMMITTED edges (to whichever state the change names) are summarised in a note on
 * it. A transition a composite state handles whatever its current child (its own edge into one of its
 * children) is listed in a note on that composite. Parallel regions are separated by `--`.
 */
export function toMermaid(machineOrGraph: AnyStateMachine | MachineGraph): string {
  const graph =
    "root" in machineOrGraph && "transitions" in machineOrGraph && !("config" in machineOrGraph)
      ? (machineOrGraph as MachineGraph)
      : toMachineGraph(machineOrGraph as AnyStateMachine);
  const edgesByScope = new Map<string, Set<string>>();
  const notes = new Map<string, Set<string>>();
  const add = (map: Map<string, Set<string>>, key: string, line: string): void => {
    const set = map.get(key) ?? new Set<string>();
    set.add(line);
    map.set(key, set);
  };
  const commitStep = `${graph.root.id}.${COMMIT_STEP_KEY}`;
  const inCommitStep = (id: string) => id === commitStep || id.startsWith(`${commitStep}.`);
  for (const t of graph.transitions) {
    for (const requested of t.targets) {
      let target = requested;
      if (target === commitStep && t.commitTo !== null && !inCommitStep(t.source)) {
        target = `${graph.root.id}.${t.commitTo}`;
      } else if (inCommitStep(t.source) && !inCommitStep(target)) {
        add(notes, commitStep, `${t.event} → enters the state the change names`);
        continue;
      }
      if (target.startsWith(`${t.source}.`)) {
        const rel = target.slice(t.source.length + 1);
        if (t.source === graph.root.id) add(notes, target, `from any state, ${label(t)}`);
        else add(notes, t.source, `${label(t)} → ${rel}`);
        continue;
      }
      let scope = commonAncestor(t.source, target);
      // A self-transition (or one to an ancestor) is drawn in the parent of the state it re-enters.
      if (scope === t.source || scope === target) scope = parentOf(scope);
      const from = childOfScope(scope, t.source);
      const to = childOfScope(scope, target);
      add(edgesByScope, scope, `${mid(from)} --> ${mid(to)} : ${label(t)}`);
    }
  }
  const lines: string[] = ["stateDiagram-v2"];
  const emitChildren = (node: MachineGraphNode, indent: string): void => {
    const children = node.children;
    children.forEach((child, i) => {
      if (node.type === "parallel" && i > 0) lines.push(`${indent}--`);
      emitNode(child, indent);
    });
    if (node.initial) lines.push(`${indent}[*] --> ${mid(node.initial)}`);
    for (const child of children) if (child.type === "final") lines.push(`${indent}${mid(child.id)} --> [*]`);
    for (const edge of edgesByScope.get(node.id) ?? []) lines.push(`${indent}${edge}`);
    for (const child of children) {
      const text = notes.get(child.id);
      if (!text) continue;
      lines.push(`${indent}note right of ${mid(child.id)}`);
      for (const line of text) lines.push(`${indent}  ${line}`);
      lines.push(`${indent}end note`);
    }
  };
  const emitNode = (node: MachineGraphNode, indent: string): void => {
    if (node.children.length === 0) {
      lines.push(`${indent}state "${node.key}" as ${mid(node.id)}`);
      return;
    }
    lines.push(`${indent}state "${node.key}" as ${mid(node.id)} {`);
    emitChildren(node, `${indent}  `);
    lines.push(`${indent}}`);
  };
  emitChildren(graph.root, "  ");
  return `${lines.join("\n")}\n`;
}
