import { FAILURE_MARKER_ID } from "./chart-model";
import type { ChartLayout, LaidOutNode } from "./layout";

/** Escapes text for SVG/HTML content and attribute values. */
export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Live counts drawn on the chart's lifecycle states ("48 MIRRORING"), keyed by state key. */
export type StateCounts = Readonly<Record<string, number>>;

function nodeSvg(n: LaidOutNode, counts: StateCounts | undefined, active: string | null): string {
  const compound = !n.collapsed && n.expandable;
  const classes = [
    "node",
    `node-${n.type}`,
    compound ? "compound" : "leaf",
    n.collapsed ? "collapsed" : "",
    n.id === FAILURE_MARKER_ID ? "failure-marker" : "",
    n.label === "FAILED" ? "state-failed" : "",
    n.id === active ? "active" : "",
  ]
    .filter(Boolean)
    .join(" ");
  const count = counts?.[n.label];
  const hint = n.expandable
    ? n.collapsed
      ? " (collapsed: press Enter to expand)"
      : " (press Enter to collapse)"
    : "";
  const label = `${n.label}${n.canFail ? " ⚠" : ""}${n.collapsed ? " ⊞" : ""}`;
  const text = compound
    ? `<text x="${n.x + 8}" y="${n.y + 18}" class="title">${escapeXml(label)}</text>`
    : `<text x="${n.x + n.width / 2}" y="${n.y + n.height / 2 + 5}" text-anchor="middle">${escapeXml(label)}</text>`;
  const badge =
    count !== undefined && count > 0
      ? `<g class="count"><rect x="${n.x + n.width - 30}" y="${n.y - 10}" width="34" height="18" rx="9"/><text x="${n.x + n.width - 13}" y="${n.y + 3}" text-anchor="middle">${count}</text></g>`
      : "";
  return `<g class="${classes}" data-id="${escapeXml(n.id)}" tabindex="0" role="button" aria-label="${escapeXml(
    `${n.label}${n.canFail ? ", can fail" : ""}${count ? `, ${count} partitions` : ""}${hint}`,
  )}"${n.expandable ? ` aria-expanded="${!n.collapsed}"` : ""}><rect x="${n.x}" y="${n.y}" width="${n.width}" height="${n.height}" rx="${n.type === "marker" ? 16 : 6}"/>${text}${badge}</g>`;
}

/**
 * Draws a laid-out chart as SVG text: states as rounded boxes (compound ones with their title at the top,
 * collapsed ones dashed with ⊞), edges as arrows with their label, live counts as badges.
 */
export function renderChartSvg(
  layout: ChartLayout,
  options: { counts?: StateCounts; active?: string | null } = {},
): string {
  const pad = 8;
  const nodes = [...layout.nodes].sort((a, b) => a.depth - b.depth);
  const edges = layout.edges
    .map((e) => {
      const d = e.points.map(([x, y], i) => `${i === 0 ? "M" : "L"}${x} ${y}`).join(" ");
      const l = e.labelBox;
      return `<g class="edge${e.target.endsWith(".FAILED") ? " edge-failed" : ""}" data-source="${escapeXml(e.source)}" data-target="${escapeXml(e.target)}"><path d="${d}" marker-end="url(#arrow)"/><text x="${l.x + 3}" y="${l.y + 11}">${escapeXml(e.label)}</text></g>`;
    })
    .join("");
  return `<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" aria-label="${escapeXml(
    `state chart of ${layout.machine}`,
  )}" viewBox="${-pad} ${-pad} ${layout.width + 2 * pad} ${layout.height + 2 * pad}" width="${layout.width + 2 * pad}" height="${layout.height + 2 * pad}"><defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0 0 L10 5 L0 10 z"/></marker></defs>${nodes
    .map((n) => nodeSvg(n, options.counts, options.active ?? null))
    .join("")}${edges}</svg>`;
}
