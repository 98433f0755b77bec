/// <reference lib="webworker" />
/** Lays out what the user expanded, off the main thread (elkjs's bundled build runs in this worker). */

import type { MachineGraph } from "@cluster-mirror/machines";
import ELK from "elkjs/lib/elk.bundled.js";
import { buildChart, type ChartView } from "../chart/chart-model";
import { type ElkLike, layoutChart } from "../chart/layout";

const elk = new ELK() as unknown as ElkLike;

self.onmessage = async (e: MessageEvent<{ id: number; graph: MachineGraph; view: ChartView }>) => {
  const { id, graph, view } = e.data;
  try {
    const layout = await layoutChart(buildChart(graph, view), elk);
    self.postMessage({ id, layout });
  } catch (error) {
    self.postMessage({ id, error: error instanceof Error ? error.message : String(error) });
  }
};
