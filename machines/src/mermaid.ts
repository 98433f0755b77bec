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
  // Mermaid ends a label at ';' and treats ':' specially; the names here use neither, but be safe.
  return text.replace(/[;:]/g, " ");
}

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

/**
 * Mermaid `stateDiagram-v2` text for a machine: composite states for compound nodes, `--` between parallel
 * regions, `[*] -->` for initial states, `--> [*]` for final ones, and one labelled edge per transition
 * target (`EVENT [guard]`). Each edge is written inside the lowest composite state containing both ends;
 * a transition a composite state handles in any of its children is drawn from an "any step" pseudo-state.
 */
export function toMermaid(machineOrGraph: AnyStateMachine | MachineGraph): string {
  const graph =
    "root" in machineOrGraph && "transitions" in machineOrGraph && !("config" in machineOrGraph)
      ? (machineOrGraph as MachineGraph)
      : toMachineGraph(machineOrGraph as AnyStateMachine);
  const edgesByScope = new Map<string, string[]>();
  const anyStep = new Set<string>();
  const push = (scope: string, edge: string): void => {
    const list = edgesByScope.get(scope) ?? [];
    list.push(edge);
    edgesByScope.set(scope, list);
  };
  for (const t of graph.transitions) {
    for (const target of t.targets) {
      if (target.startsWith(`${t.source}.`)) {
        // Handled by a composite state whatever its current child: draw it from an "any" pseudo-state.
        anyStep.add(t.source);
        push(t.source, `${mid(t.source)}__any --> ${mid(target)} : ${label(t)}`);
        continue;
      }
      let scope = commonAncestor(t.source, target);
      // A self-transition belongs to the state's parent.
      if (scope === t.source || scope === target) scope = scope.split(".").slice(0, -1).join(".");
      push(scope, `${mid(t.source)} --> ${mid(target)} : ${label(t)}`);
    }
  }
  const lines: string[] = ["stateDiagram-v2"];
  const emitChildren = (node: MachineGraphNode, indent: string): void => {
    const children = node.children;
    if (anyStep.has(node.id)) {
      lines.push(
        `${indent}state "${node === graph.root ? "any state" : "any step"}" as ${mid(node.id)}__any`,
      );
    }
    children.forEach((child, i) => {
      if (node.type === "parallel" && i > 0) lines.push(`${indent}--`);
      emitNode(child, indent);
    });
    if (node.initial) lines.push(`${indent}[*] --> ${mid(node.initial)}`);
    for (const child of children) if (child.type === "final") lines.push(`${indent}${mid(child.id)} --> [*]`);
    for (const edge of edgesByScope.get(node.id) ?? []) lines.push(`${indent}${edge}`);
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
