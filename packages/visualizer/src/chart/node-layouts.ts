import { type MachineGraph, type MachineName, machineGraphs } from "@cluster-mirror/machines";
import ELK from "elkjs/lib/elk.bundled.js";
import { buildChart, type ChartView, defaultView } from "./chart-model";
import { type ChartLayout, type ElkLike, layoutChart } from "./layout";

/** The precomputed layouts: each machine's default view, laid out in Node (the golden file). */
export interface PrecomputedCharts {
  readonly graphs: { readonly [N in MachineName]: MachineGraph };
  readonly views: { readonly [N in MachineName]: ChartView };
  readonly layouts: { readonly [N in MachineName]: ChartLayout };
}

/** Lays out the default view of every machine with elkjs in this process. */
export async function precomputeCharts(): Promise<PrecomputedCharts> {
  const elk = new ELK() as unknown as ElkLike;
  const graphs = machineGraphs();
  const names = Object.keys(graphs) as MachineName[];
  const views = {} as Record<MachineName, ChartView>;
  const layouts = {} as Record<MachineName, ChartLayout>;
  for (const name of names) {
    views[name] = defaultView(graphs[name]);
    layouts[name] = await layoutChart(buildChart(graphs[name], views[name]), elk);
  }
  return { graphs, views, layouts };
}
