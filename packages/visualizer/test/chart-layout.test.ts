import { readFileSync } from "node:fs";
import { LIFECYCLE_STATES, machineGraphs } from "@cluster-mirror/machines";
import { describe, expect, it } from "vitest";
import { buildChart, defaultView, FAILURE_MARKER_ID } from "../src/chart/chart-model";
import { GOLDEN_CHARTS_PATH } from "../src/chart/golden-path";
import { precomputeCharts } from "../src/chart/node-layouts";

describe("chart layouts", () => {
  it("match the committed goldens (regenerate with `pnpm --filter @cluster-mirror/visualizer run goldens`)", async () => {
    const golden = JSON.parse(readFileSync(GOLDEN_CHARTS_PATH, "utf8"));
    const fresh = JSON.parse(JSON.stringify(await precomputeCharts()));
    expect(fresh).toEqual(golden);
  });

  it("show the partition machine's lifecycle states collapsed, with every edge into FAILED folded into one", () => {
    const graph = machineGraphs().mirrorPartition;
    const chart = buildChart(graph, defaultView(graph));
    const top = chart.root.children.map((c) => c.label);
    for (const s of LIFECYCLE_STATES) expect(top).toContain(s);
    expect(chart.root.children.every((c) => c.children.length === 0)).toBe(true);
    const failed = chart.root.children.find((c) => c.label === "FAILED")!;
    const intoFailed = chart.edges.filter((e) => e.target === failed.id);
    expect(intoFailed.map((e) => e.source)).toEqual([FAILURE_MARKER_ID]);
    expect(chart.root.children.find((c) => c.label === "MIRRORING")?.canFail).toBe(true);
  });

  it("labels commit edges by the event that started the change, not COMMITTED", () => {
    const graph = machineGraphs().mirrorPartition;
    const chart = buildChart(graph, defaultView(graph));
    const byId = new Map(chart.root.children.map((c) => [c.id, c.label]));
    const edge = (from: string, to: string) =>
      chart.edges.filter((e) => byId.get(e.source) === from && byId.get(e.target) === to).map((e) => e.label);
    expect(edge("MIRRORING", "STOPPING").join(" ")).toMatch(/STOP/);
    expect(edge("PAUSED", "MIRRORING").join(" ")).toMatch(/RESUME/);
    expect(chart.edges.some((e) => e.label === "COMMITTED")).toBe(false);
  });

  it("expands a collapsed state: its children appear and edges attach to them in their lowest common parent", () => {
    const graph = machineGraphs().mirrorPartition;
    const view = defaultView(graph);
    const stopping = "mirrorPartition.STOPPING";
    const chart = buildChart(graph, { collapsed: view.collapsed.filter((id) => id !== stopping) });
    const node = chart.root.children.find((c) => c.id === stopping)!;
    expect(node.collapsed).toBe(false);
    expect(node.children.length).toBeGreaterThan(0);
    const inner = chart.edges.filter(
      (e) => e.source.startsWith(`${stopping}.`) && e.target.startsWith(`${stopping}.`),
    );
    expect(inner.length).toBeGreaterThan(0);
    for (const e of inner) expect(e.container).toBe(stopping);
  });

  it("focuses one state: only its subtree is drawn", () => {
    const graph = machineGraphs().mirrorPartition;
    const chart = buildChart(graph, { collapsed: [], focus: "mirrorPartition.PAUSING" });
    expect(chart.root.id).toBe("mirrorPartition.PAUSING");
    for (const e of chart.edges) {
      expect(e.source.startsWith("mirrorPartition.PAUSING") || e.source === FAILURE_MARKER_ID).toBe(true);
    }
  });
});
