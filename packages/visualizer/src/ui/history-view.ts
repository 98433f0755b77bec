/// <reference lib="dom" />
import { escapeXml } from "../chart/render-svg";
import type { FleetCell } from "../fleet/fleet-model";
import {
  type FoldedPartition,
  foldHistory,
  type HistoryFold,
  historyKeyId,
  partitionTimeline,
  type ValidFrom,
} from "../history/fold";
import type { StateHistoryPage, StateHistoryRecord } from "../history/history-types";
import { loadHistory } from "../history/load-history";
import { PartitionGrid } from "./partition-grid";

const PAGE = 5000;
const URGENCY = [
  "FAILED",
  "UNKNOWN",
  "STOPPING",
  "EPOCH_FENCING",
  "PREPARING",
  "PAUSING",
  "PAUSED",
  "STOPPED",
  "MIRRORING",
];

function toCell(p: FoldedPartition): FleetCell {
  return {
    id: p.id,
    state: p.value.state,
    context: {
      cluster: "",
      mirror: p.mirror,
      topic: p.topic,
      topicId: p.id.split("/")[1] ?? "",
      partition: p.partition,
      stateEpoch: p.value.stateEpoch,
      leaderEpoch: p.value.leaderEpoch,
      retryAttempt: p.value.retryAttempt,
      errorMessage: p.value.errorMessage,
      previousState: p.value.previousState,
      lag: null,
    },
  };
}

function duration(ms: number | null): string {
  if (ms === null) return "until now";
  if (ms < 1000) return `${ms} ms`;
  if (ms < 120_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${(ms / 60_000).toFixed(1)} min`;
}

/**
 * The time-travel tab over `__mirror_state`: loads the decoded history from the node, a slider picks a
 * position N and the grid shows every partition as of N (the records before N folded, as a coordinator
 * replays them); observed transitions that spec §4 forbids are flagged, state epoch gaps (what compaction
 * erased) are listed, and a picked partition's records are drawn as a grouped timeline.
 */
export class HistoryView {
  private records: StateHistoryRecord[] = [];
  private partitions: StateHistoryPage["partitions"] = [];
  private position = 0;
  private selected: string | null = null;
  private readonly slider: HTMLInputElement;
  private readonly label: HTMLOutputElement;
  private readonly grid: PartitionGrid;
  private readonly checks: HTMLDivElement;
  private readonly timeline: HTMLDivElement;
  private readonly status: HTMLParagraphElement;
  private frame: number | null = null;

  constructor(
    host: HTMLElement,
    private readonly apiBase: string,
    private readonly validFrom: () => Promise<ValidFrom>,
  ) {
    host.innerHTML = `<p class="history-status" role="status" aria-live="polite"></p>
      <div class="slider-row">
        <button type="button" data-step="-1" aria-label="one record back">◀</button>
        <input type="range" id="history-slider" min="0" max="0" value="0" step="1"
          aria-label="position in __mirror_state: records folded" />
        <button type="button" data-step="1" aria-label="one record forward">▶</button>
        <output for="history-slider" class="history-label"></output>
        <button type="button" data-action="reload">Reload</button>
      </div>
      <div class="checks"></div>
      <div class="grid-host"></div>
      <div class="timeline" aria-live="polite"></div>`;
    this.status = host.querySelector(".history-status") as HTMLParagraphElement;
    this.slider = host.querySelector("#history-slider") as HTMLInputElement;
    this.label = host.querySelector(".history-label") as HTMLOutputElement;
    this.checks = host.querySelector(".checks") as HTMLDivElement;
    this.timeline = host.querySelector(".timeline") as HTMLDivElement;
    this.grid = new PartitionGrid(host.querySelector(".grid-host") as HTMLElement, {
      label: "mirror partitions as of the slider's position",
      onSelect: (cell) => this.showTimeline(cell.id),
    });
    this.slider.addEventListener("input", () => this.seek(Number(this.slider.value)));
    host.querySelector(".slider-row")?.addEventListener("click", (e) => {
      const b = (e.target as HTMLElement).closest("button");
      if (b?.dataset.step) this.seek(this.position + Number(b.dataset.step));
      else if (b?.dataset.action === "reload") void this.load();
    });
  }

  /** Loads the whole history from the node (page by page) and shows the present. */
  async load(): Promise<void> {
    this.status.textContent = "Loading __mirror_state…";
    try {
      const { records, partitions } = await loadHistory(async (query) => {
        const res = await fetch(`${this.apiBase}/mirror-state?${query}`);
        if (!res.ok) throw new Error(`${res.status} ${await res.text()}`);
        return (await res.json()) as StateHistoryPage;
      }, PAGE);
      this.records = records;
      this.partitions = partitions;
      this.slider.max = String(records.length);
      const compacted = partitions.filter((p) => p.logStartOffset > 0);
      this.status.textContent = `${records.length} records in ${partitions.length} __mirror_state partitions${
        compacted.length > 0
          ? `; ${compacted.length} partitions start above offset 0 (older records deleted or compacted away)`
          : ""
      }.`;
      this.seek(records.length);
      if (this.selected) await this.showTimeline(this.selected);
    } catch (error) {
      this.status.textContent = `Time travel needs a running node: ${error instanceof Error ? error.message : String(error)}`;
    }
  }

  /** Shows the state as of `position` (records before it folded). */
  seek(position: number): void {
    this.position = Math.max(0, Math.min(this.records.length, position));
    this.slider.value = String(this.position);
    const r = this.records[this.position - 1];
    const text =
      this.position === 0
        ? "before the first record"
        : `${this.position} of ${this.records.length} records, up to __mirror_state-${r?.partition}@${r?.offset} (${
            r ? new Date(r.timestamp).toISOString() : ""
          })`;
    this.label.textContent = text;
    this.slider.setAttribute("aria-valuetext", text);
    if (this.frame !== null) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = null;
      void this.draw();
    });
  }

  private async draw(): Promise<void> {
    const fold: HistoryFold = foldHistory(this.records, this.position, await this.validFrom());
    const cells = [...fold.partitions.values()]
      .map(toCell)
      .sort((a, b) => URGENCY.indexOf(a.state) - URGENCY.indexOf(b.state) || (a.id < b.id ? -1 : 1));
    this.grid.setCells(cells);
    const violations = fold.violations
      .slice(-10)
      .map(
        (t) =>
          `<li class="violation">@${t.position} ${escapeXml(t.id)}: ${escapeXml(t.from ?? "(none)")} → ${escapeXml(t.to)} is not allowed by spec §4</li>`,
      )
      .join("");
    const gaps = fold.gaps
      .slice(-10)
      .map(
        (t) =>
          `<li class="gap">@${t.position} ${escapeXml(t.id)}: ${t.erased} change(s) erased before ${escapeXml(t.to)} (state epoch ${
            t.fromStateEpoch ?? 0
          } → ${t.toStateEpoch})</li>`,
      )
      .join("");
    this.checks.innerHTML = `<p><span class="check-count" data-violations="${fold.violations.length}">${fold.violations.length} invalid transitions</span>, <span data-gaps="${fold.gaps.length}">${fold.gaps.length} compaction gaps</span> among ${fold.transitions.length} observed records.</p>${
      violations ? `<ul>${violations}</ul>` : ""
    }${gaps ? `<ul>${gaps}</ul>` : ""}`;
  }

  /** Draws one partition's timeline (`id`: mirror/topicId/partition) from the whole history. */
  async showTimeline(id: string): Promise<void> {
    this.selected = id;
    const segments = partitionTimeline(this.records, id, await this.validFrom());
    const total = segments.reduce((n, s) => n + (s.durationMs ?? 0), 0) || 1;
    const key = this.records.find((r) => r.key !== null && historyKeyId(r.key) === id)?.key;
    const name = key ? `${key.mirror} ${key.topic ?? key.topicId}-${key.partition}` : id;
    const rows = segments
      .map((s) => {
        const width = s.durationMs === null ? 8 : Math.max(2, Math.round((s.durationMs / total) * 100));
        const retries =
          s.retryAttempt > 0 ? `, retry ${s.retryAttempt}` : s.retryAttempt < 0 ? ", not retryable" : "";
        return `<li class="segment state-${escapeXml(s.state)}${s.violation ? " violation" : ""}">${
          s.erasedBefore > 0 ? `<span class="gap">⋯ ${s.erasedBefore} erased ⋯</span>` : ""
        }<span class="bar" style="width:${width}%"></span><span class="seg-text">${escapeXml(s.state)} ×${s.records}${retries} · ${duration(
          s.durationMs,
        )} · @${s.firstPosition}${s.violation ? " · ⚠ not allowed by spec §4" : ""}${
          s.errorMessage ? ` · ${escapeXml(s.errorMessage)}` : ""
        }</span></li>`;
      })
      .join("");
    this.timeline.innerHTML = `<h3>Timeline of ${escapeXml(name)}</h3><ol class="segments" aria-label="timeline of ${escapeXml(
      name,
    )}">${rows}</ol>`;
  }

  /** The partitions of `__mirror_state` and their offsets, as last loaded. */
  get statePartitions(): StateHistoryPage["partitions"] {
    return this.partitions;
  }
}
