/**
 * @cluster-mirror/visualizer: the state-chart visualizer's Node side (precomputed chart layouts, where the
 * built page lives) and the types the node's `/ui/api` endpoints share with the page.
 */
export {
  buildChart,
  type Chart,
  type ChartEdge,
  type ChartNode,
  type ChartView,
  defaultView,
} from "./chart/chart-model";
export { type GraphsPayload, graphsPayload } from "./chart/graphs-payload";
export type { ChartLayout, LaidOutEdge, LaidOutNode } from "./chart/layout";
export { renderChartSvg } from "./chart/render-svg";
export { type FleetCell, FleetModel, type MirrorSummary } from "./fleet/fleet-model";
export type { StateHistoryPage, StateHistoryRecord, StateValue } from "./history/history-types";
export {
  actorEvent,
  eventEvent,
  type InspectionEvent,
  mirrorActorId,
  type PartitionContext,
  partitionActorId,
  snapshotEvent,
  stoppedEvent,
} from "./inspection";
export { GOLDEN_CHARTS_PATH, VISUALIZER_DIST_DIR, VISUALIZER_ROOT } from "./paths";
