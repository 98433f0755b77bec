/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
import chartsJson from "../../goldens/charts.json";
import type { PrecomputedCharts } from "../chart/node-layouts";
import type { ValidFrom } from "../history/fold";
import { ChartsView } from "./charts-view";
import { FleetView } from "./fleet-view";
import { HistoryView } from "./history-view";
import "./style.css";

const charts = chartsJson as unknown as PrecomputedCharts;
/** The node serves the page at /ui/ and its API at /ui/api. */
const API = new URL("api", document.baseURI).pathname.replace(/\/$/, "");

const panels = {
  charts: document.getElementById("panel-charts") as HTMLElement,
  fleet: document.getElementById("panel-fleet") as HTMLElement,
  history: document.getElementById("panel-history") as HTMLElement,
};
type Tab = keyof typeof panels;

let validFromTable: Promise<ValidFrom> | null = null;
const validFrom = () => {
  validFromTable ??= fetch(`${API}/graphs`)
    .then((r) => r.json())
    .then((g: { validFrom: ValidFrom }) => g.validFrom);
  return validFromTable;
};

const chartsView = new ChartsView(panels.charts, charts);
const historyView = new HistoryView(panels.history, API, validFrom);
let historyLoaded = false;
const fleetView = new FleetView(
  panels.fleet,
  `${API}/stream`,
  charts.layouts.mirrorPartition,
  (counts) => chartsView.setCounts(counts),
  (cell) => {
    location.hash = "#history";
    void historyView
      .load()
      .then(() =>
        historyView.showTimeline(`${cell.context.mirror}/${cell.context.topicId}/${cell.context.partition}`),
      );
    historyLoaded = true;
  },
);

function show(tab: Tab): void {
  for (const [name, panel] of Object.entries(panels)) panel.hidden = name !== tab;
  for (const a of document.querySelectorAll<HTMLAnchorElement>("nav a")) {
    if (a.hash === `#${tab}`) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  if (tab === "fleet") fleetView.connect();
  if (tab === "history" && !historyLoaded) {
    historyLoaded = true;
    void historyView.load();
  }
}

function route(): void {
  const tab = location.hash.replace("#", "") as Tab;
  show(tab in panels ? tab : "charts");
}
window.addEventListener("hashchange", route);
route();
// The counts on the chart come from the stream: connect whenever a node serves the page.
fleetView.connect();
// For recorded sessions and tests: `clusterMirrorFleet.ingest(events)` feeds inspection events directly.
(window as unknown as { clusterMirrorFleet: FleetView }).clusterMirrorFleet = fleetView;
