/// <reference lib="dom" />
import type { ChartLayout } from "../chart/layout";
import { escapeXml, renderChartSvg } from "../chart/render-svg";
import { type FleetCell, FleetModel, type MirrorSummary } from "../fleet/fleet-model";
import type { InspectionEvent } from "../inspection";
import { PartitionGrid } from "./partition-grid";

/** The lifecycle states of spec §4 in the table's order, for the roll-ups. */
export const LIFECYCLE_ORDER = [
  "FAILED",
  "UNKNOWN",
  "PREPARING",
  "MIRRORING",
  "EPOCH_FENCING",
  "PAUSING",
  "PAUSED",
  "STOPPING",
  "STOPPED",
];

/** Per-mirror roll-ups as HTML: "48/48 MIRRORING" chips, FAILED first and in red, its errors listed. */
export function summariesHtml(summaries: readonly MirrorSummary[]): string {
  if (summaries.length === 0) return `<p class="empty">No mirror partitions yet.</p>`;
  return summaries
    .map((s) => {
      const chips = LIFECYCLE_ORDER.filter((st) => (s.counts[st] ?? 0) > 0)
        .map(
          (st) =>
            `<span class="chip state-${st}" data-state="${st}" data-count="${s.counts[st]}">${s.counts[st]}/${s.total} ${st}</span>`,
        )
        .join(" ");
      const errors = s.errors
        .slice(0, 5)
        .map((e) => `<li><strong>${e.count} FAILED:</strong> ${escapeXml(e.message)}</li>`)
        .join("");
      return `<section class="mirror-summary" data-mirror="${escapeXml(s.mirror)}" aria-label="mirror ${escapeXml(
        s.mirror,
      )} on ${escapeXml(s.cluster)}"><h3>${escapeXml(s.cluster)} / ${escapeXml(s.mirror)}</h3><p class="chips">${chips}</p>${
        errors ? `<ul class="errors">${errors}</ul>` : ""
      }</section>`;
    })
    .join("");
}

/**
 * The live fleet tab: connects to the node's `/ui/api/stream`, folds the inspection events into a
 * `FleetModel` and redraws at most once per animation frame: per-mirror roll-ups, the partition grid
 * (exceptions first), and the selected partition's details.
 */
export class FleetView {
  readonly model = new FleetModel();
  private readonly grid: PartitionGrid;
  private readonly summaries: HTMLDivElement;
  private readonly status: HTMLParagraphElement;
  private readonly details: HTMLDivElement;
  private source: EventSource | null = null;
  private frame: number | null = null;
  private drawn = -1;
  private selected: string | null = null;
  private readonly chart: HTMLDivElement;

  constructor(
    host: HTMLElement,
    private readonly streamUrl: string,
    private readonly lifecycleLayout: ChartLayout,
    private readonly onCounts: (counts: Record<string, number>) => void,
    private readonly onTimeline: (cell: FleetCell) => void,
  ) {
    host.innerHTML = `<p class="fleet-status" role="status" aria-live="polite">Connecting…</p>
      <div class="summaries"></div>
      <div class="fleet-chart" aria-label="partitions per lifecycle state, on the partition chart"></div>
      <h3 id="fleet-grid-title">Partitions <small>(exceptions first; arrows to move, Enter for details)</small></h3>
      <div class="grid-host"></div>
      <div class="details" aria-live="polite"></div>`;
    this.status = host.querySelector(".fleet-status") as HTMLParagraphElement;
    this.summaries = host.querySelector(".summaries") as HTMLDivElement;
    this.details = host.querySelector(".details") as HTMLDivElement;
    this.chart = host.querySelector(".fleet-chart") as HTMLDivElement;
    this.grid = new PartitionGrid(host.querySelector(".grid-host") as HTMLElement, {
      label: "mirror partitions by state",
      onSelect: (cell) => {
        this.selected = cell.id;
        this.drawDetails();
      },
    });
    this.details.addEventListener("click", (e) => {
      if ((e.target as HTMLElement).closest("[data-action=timeline]") && this.selected) {
        const cell = this.model.get(this.selected);
        if (cell) this.onTimeline(cell);
      }
    });
  }

  /** Opens the stream (a reconnect gets the full state again). */
  connect(): void {
    if (this.source) return;
    const source = new EventSource(this.streamUrl);
    this.source = source;
    source.onopen = () => {
      this.model.clear();
      this.status.textContent = "Live: connected to the node's stream.";
      this.status.dataset.connected = "true";
    };
    source.onerror = () => {
      this.status.dataset.connected = "false";
      // EventSource retries a dropped connection by itself, but never a refusal (an answer that is not a
      // 200 event stream: no token, an unknown cluster): say why instead of promising a retry.
      if (source.readyState === EventSource.CLOSED) {
        this.source = null;
        void this.explainRefusal(source);
        return;
      }
      this.status.textContent =
        "Not connected: the live fleet needs a running `cluster-mirror node` (serving this page at /ui). Retrying…";
    };
    source.onmessage = (m) => {
      if (this.model.apply(JSON.parse(m.data) as InspectionEvent)) this.schedule();
    };
  }

  /** Shows why the node refused the stream (its error message), and that reloading tries again. */
  private async explainRefusal(refused: EventSource): Promise<void> {
    this.status.textContent =
      "Not connected: the node refused the live stream. Reload the page to try again.";
    const abort = new AbortController();
    try {
      const res = await fetch(this.streamUrl, { signal: abort.signal });
      if (res.ok || this.source !== null || refused.readyState !== EventSource.CLOSED) return;
      const body = await res.text();
      let message = body;
      try {
        message = (JSON.parse(body) as { error?: { message?: string } }).error?.message ?? body;
      } catch {
        // not JSON: the text itself
      }
      this.status.textContent = `Not connected: the node refused the live stream (HTTP ${res.status}): ${message} Reload the page to try again.`;
    } catch {
      // the node is gone as well: the message above stands
    } finally {
      abort.abort(); // never keep a stream this probe opened
    }
  }

  /** Applies events from another source than the node's stream (a recorded session, a test). */
  ingest(events: readonly InspectionEvent[]): void {
    let changed = false;
    for (const e of events) changed = this.model.apply(e) || changed;
    if (changed) this.schedule();
  }

  private schedule(): void {
    if (this.frame !== null) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = null;
      if (this.drawn === this.model.version) return;
      this.drawn = this.model.version;
      const summaries = this.model.mirrors();
      this.summaries.innerHTML = summariesHtml(summaries);
      this.grid.setCells(this.model.ordered());
      const counts: Record<string, number> = {};
      for (const s of summaries)
        for (const [st, n] of Object.entries(s.counts)) counts[st] = (counts[st] ?? 0) + n;
      this.onCounts(counts);
      this.chart.innerHTML = renderChartSvg(this.lifecycleLayout, { counts });
      this.drawDetails();
    });
  }

  private drawDetails(): void {
    const cell = this.selected ? this.model.get(this.selected) : undefined;
    if (!cell) {
      this.details.innerHTML = "";
      return;
    }
    const c = cell.context;
    this.details.innerHTML = `<h3>${escapeXml(cell.id)}</h3><dl>
      <dt>state</dt><dd class="state-text">${escapeXml(cell.state)}</dd>
      <dt>previous state</dt><dd>${escapeXml(c.previousState ?? "-")}</dd>
      <dt>state epoch</dt><dd>${c.stateEpoch}</dd><dt>leader epoch</dt><dd>${c.leaderEpoch}</dd>
      <dt>lag</dt><dd>${c.lag ?? "unknown"}</dd><dt>retry attempt</dt><dd>${c.retryAttempt}</dd>
      <dt>error</dt><dd>${escapeXml(c.errorMessage ?? "-")}</dd></dl>
      <button type="button" data-action="timeline">Timeline in __mirror_state</button>`;
  }
}
