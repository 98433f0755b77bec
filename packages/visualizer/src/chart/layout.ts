import type { Chart, ChartNode } from "./chart-model";
import { ROOT_ID } from "./chart-model";

/** A positioned state, in absolute coordinates (the chart's top-left is 0,0). */
export interface LaidOutNode {
  readonly id: string;
  readonly label: string;
  readonly type: ChartNode["type"];
  readonly collapsed: boolean;
  readonly expandable: boolean;
  readonly canFail: boolean;
  /** Nesting depth: 0 for the machine (or focused state) itself. */
  readonly depth: number;
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
}

/** A routed edge: its polyline and its label box, in absolute coordinates. */
export interface LaidOutEdge {
  readonly id: string;
  readonly source: string;
  readonly target: string;
  readonly label: string;
  readonly points: readonly (readonly [number, number])[];
  readonly labelBox: {
    readonly x: number;
    readonly y: number;
    readonly width: number;
    readonly height: number;
  };
}

/** A laid-out chart: what the SVG renderer draws and what the golden files hold. */
export interface ChartLayout {
  readonly machine: string;
  readonly width: number;
  readonly height: number;
  readonly nodes: readonly LaidOutNode[];
  readonly edges: readonly LaidOutEdge[];
}

/** The part of elkjs's API this module uses (the Node bundle and the Web Worker both provide it). */
export interface ElkLike {
  layout(graph: ElkNode): Promise<ElkNode>;
}

/** ELK's JSON graph, the fields used here. */
export interface ElkNode {
  id: string;
  x?: number;
  y?: number;
  width?: number;
  height?: number;
  labels?: { text: string; width?: number; height?: number; x?: number; y?: number }[];
  layoutOptions?: Record<string, string>;
  children?: ElkNode[];
  edges?: ElkEdge[];
}

interface ElkEdge {
  id: string;
  sources: string[];
  targets: string[];
  labels?: { text: string; width: number; height: number; x?: number; y?: number }[];
  sections?: {
    startPoint: { x: number; y: number };
    endPoint: { x: number; y: number };
    bendPoints?: { x: number; y: number }[];
  }[];
}

/** Text metrics without a browser: a fixed advance per character, so Node and browser lay out alike. */
const CHAR_WIDTH = 7;
const LINE_HEIGHT = 16;
const EDGE_CHAR_WIDTH = 6;

const LAYOUT_OPTIONS: Record<string, string> = {
  "elk.algorithm": "layered",
  "elk.direction": "RIGHT",
  "elk.hierarchyHandling": "INCLUDE_CHILDREN",
  "elk.layered.considerModelOrder.strategy": "NODES_AND_EDGES",
  "elk.edgeRouting": "ORTHOGONAL",
  "elk.edgeLabels.inline": "false",
  "elk.spacing.nodeNode": "24",
  "elk.layered.spacing.nodeNodeBetweenLayers": "40",
  "elk.spacing.edgeLabel": "4",
  "org.eclipse.elk.json.edgeCoords": "ROOT",
  "elk.padding": "[top=28,left=12,bottom=12,right=12]",
};

/** The ELK input graph of a chart: compound states as nested nodes, each edge in its lowest common parent. */
export function toElkGraph(chart: Chart): ElkNode {
  const byContainer = new Map<string, ElkEdge[]>();
  for (const e of chart.edges) {
    const list = byContainer.get(e.container) ?? [];
    list.push({
      id: e.id,
      sources: [e.source],
      targets: [e.target],
      labels: [{ text: e.label, width: e.label.length * EDGE_CHAR_WIDTH + 6, height: 14 }],
    });
    byContainer.set(e.container, list);
  }
  const toElk = (n: ChartNode): ElkNode => {
    const labelWidth = n.label.length * CHAR_WIDTH + 24 + (n.canFail ? 14 : 0) + (n.collapsed ? 14 : 0);
    const out: ElkNode = {
      id: n.id,
      labels: [{ text: n.label, width: labelWidth, height: LINE_HEIGHT }],
    };
    if (n.children.length > 0) {
      out.children = n.children.map(toElk);
      out.layoutOptions = {
        "elk.nodeLabels.placement": "INSIDE V_TOP H_LEFT",
        "elk.nodeSize.minimum": `(${labelWidth}, 40)`,
        "elk.nodeSize.constraints": "MINIMUM_SIZE",
      };
    } else {
      out.width = labelWidth;
      out.height = n.collapsed ? 40 : 32;
    }
    const edges = byContainer.get(n.id);
    if (edges) out.edges = edges;
    return out;
  };
  return {
    id: ROOT_ID,
    layoutOptions: LAYOUT_OPTIONS,
    children: [toElk(chart.root)],
    edges: byContainer.get(ROOT_ID) ?? [],
  };
}

const round = (v: number | undefined) => Math.round((v ?? 0) * 10) / 10;

/** Lays out `chart` with `elk` and flattens the result to absolute coordinates (rounded to 0.1 px). */
export async function layoutChart(chart: Chart, elk: ElkLike): Promise<ChartLayout> {
  const laid = await elk.layout(toElkGraph(chart));
  const nodes: LaidOutNode[] = [];
  const meta = new Map<string, ChartNode>();
  const indexMeta = (n: ChartNode) => {
    meta.set(n.id, n);
    for (const c of n.children) indexMeta(c);
  };
  indexMeta(chart.root);
  const edges: LaidOutEdge[] = [];
  const chartEdges = new Map(chart.edges.map((e) => [e.id, e]));
  const collectEdges = (n: ElkNode) => {
    for (const e of n.edges ?? []) {
      const section = e.sections?.[0];
      const ce = chartEdges.get(e.id);
      if (!section || !ce) continue;
      const pts = [section.startPoint, ...(section.bendPoints ?? []), section.endPoint].map(
        (p) => [round(p.x), round(p.y)] as const,
      );
      const l = e.labels?.[0];
      edges.push({
        id: e.id,
        source: ce.source,
        target: ce.target,
        label: ce.label,
        points: pts,
        labelBox: { x: round(l?.x), y: round(l?.y), width: round(l?.width), height: round(l?.height) },
      });
    }
  };
  const walk = (n: ElkNode, ox: number, oy: number, depth: number) => {
    const x = ox + (n.x ?? 0);
    const y = oy + (n.y ?? 0);
    const m = meta.get(n.id);
    if (m) {
      nodes.push({
        id: m.id,
        label: m.label,
        type: m.type,
        collapsed: m.collapsed,
        expandable: m.expandable,
        canFail: m.canFail,
        depth,
        x: round(x),
        y: round(y),
        width: round(n.width),
        height: round(n.height),
      });
    }
    collectEdges(n);
    for (const c of n.children ?? []) walk(c, x, y, m ? depth + 1 : depth);
  };
  walk(laid, 0, 0, 0);
  return { machine: chart.machine, width: round(laid.width), height: round(laid.height), nodes, edges };
}
