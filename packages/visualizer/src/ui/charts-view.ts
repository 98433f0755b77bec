/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
import type { MachineGraph } from "@cluster-mirror/machines";
import type { ChartView } from "../chart/chart-model";
import type { ChartLayout } from "../chart/layout";
import type { PrecomputedCharts } from "../chart/node-layouts";
import { renderChartSvg, type StateCounts } from "../chart/render-svg";

type MachineName = keyof PrecomputedCharts["graphs"];

/** Lays out views in a Web Worker, one request at a time per id; results cached by view. */
class LayoutClient {
  private worker: Worker | null = null;
  private next = 0;
  private readonly waiting = new Map<
    number,
    { resolve: (l: ChartLayout) => void; reject: (e: Error) => void }
  >();
  private readonly cache = new Map<string, ChartLayout>();

  layout(graph: MachineGraph, view: ChartView): Promise<ChartLayout> {
    const key = `${graph.id}|${JSON.stringify(view)}`;
    const hit = this.cache.get(key);
    if (hit) return Promise.resolve(hit);
    if (this.worker === null) {
      this.worker = new Worker(new URL("./layout-worker.ts", import.meta.url), { type: "module" });
      this.worker.onmessage = (e: MessageEvent<{ id: number; layout?: ChartLayout; error?: string }>) => {
        const w = this.waiting.get(e.data.id);
        this.waiting.delete(e.data.id);
        if (e.data.layout) w?.resolve(e.data.layout);
        else w?.reject(new Error(e.data.error ?? "layout failed"));
      };
    }
    const id = this.next++;
    return new Promise<ChartLayout>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.worker?.postMessage({ id, graph, view });
    }).then((l) => {
      this.cache.set(key, l);
      return l;
    });
  }
}

/**
 * The charts tab: one machine at a time, starting from its precomputed layout; clicking (or Enter on) a
 * compound state collapses or expands it, `f` (or the Focus button) draws only the selected state's
 * subtree, Escape leaves the focus. New views are laid out by elkjs in a Web Worker.
 */
export class ChartsView {
  private machine: MachineName = "mirrorPartition";
  private view: ChartView;
  private selected: string | null = null;
  private readonly layouts = new LayoutClient();
  private readonly svgHost: HTMLDivElement;
  private readonly status: HTMLParagraphElement;
  private counts: StateCounts | undefined;
  private renderToken = 0;

  constructor(
    private readonly host: HTMLElement,
    private readonly charts: PrecomputedCharts,
  ) {
    this.view = charts.views[this.machine];
    host.innerHTML = `
      <div class="toolbar" role="toolbar" aria-label="chart controls">
        ${(Object.keys(charts.graphs) as MachineName[])
          .map(
            (m) =>
              `<button type="button" data-machine="${m}" aria-pressed="${m === this.machine}">${m}</button>`,
          )
          .join("")}
        <span class="sep"></span>
        <button type="button" data-action="collapse-all">Collapse all</button>
        <button type="button" data-action="expand-all">Expand all</button>
        <button type="button" data-action="focus">Focus selected (f)</button>
        <button type="button" data-action="unfocus">Whole machine (Esc)</button>
      </div>
      <p class="chart-status" role="status" aria-live="polite"></p>
      <div class="chart-host" tabindex="-1"></div>
      <p class="legend">Dashed ⊞: collapsed (click or Enter to expand). ⚠: the state can fail; every edge into
      FAILED is folded into the one from “any ⚠ state”. Commit edges are labelled by the event that started the
      change, then ✓ (committed to <code>__mirror_state</code>).</p>`;
    this.svgHost = host.querySelector(".chart-host") as HTMLDivElement;
    this.status = host.querySelector(".chart-status") as HTMLParagraphElement;
    host.querySelector(".toolbar")?.addEventListener("click", (e) => {
      const b = (e.target as HTMLElement).closest("button");
      if (!b) return;
      if (b.dataset.machine) this.selectMachine(b.dataset.machine as MachineName);
      else this.action(b.dataset.action ?? "");
    });
    this.svgHost.addEventListener("click", (e) => {
      const g = (e.target as Element).closest<SVGGElement>("g.node");
      if (g?.dataset.id) this.activate(g.dataset.id, e.shiftKey);
    });
    this.svgHost.addEventListener("keydown", (e) => {
      const g = (e.target as Element).closest<SVGGElement>("g.node");
      if (e.key === "Escape") {
        this.action("unfocus");
        return;
      }
      if (!g?.dataset.id) return;
      if (e.key === "Enter" || e.key === " ") {
        e.preventDefault();
        this.activate(g.dataset.id, false);
      } else if (e.key === "f") {
        this.selected = g.dataset.id;
        this.action("focus");
      }
    });
    this.svgHost.addEventListener("focusin", (e) => {
      const g = (e.target as Element).closest<SVGGElement>("g.node");
      if (g?.dataset.id) this.selected = g.dataset.id;
    });
    void this.render();
  }

  /** Live partition counts per lifecycle state, drawn as badges on the partition chart. */
  setCounts(counts: StateCounts | undefined): void {
    this.counts = counts;
    if (this.machine === "mirrorPartition") void this.render();
  }

  private selectMachine(m: MachineName): void {
    this.machine = m;
    this.view = this.charts.views[m];
    this.selected = null;
    for (const b of this.host.querySelectorAll<HTMLButtonElement>("[data-machine]"))
      b.setAttribute("aria-pressed", String(b.dataset.machine === m));
    void this.render();
  }

  private allCompound(): string[] {
    const out: string[] = [];
    const walk = (n: MachineGraph["root"], root: boolean) => {
      if (!root && n.children.length > 0) out.push(n.id);
      for (const c of n.children) walk(c, false);
    };
    walk(this.charts.graphs[this.machine].root, true);
    return out;
  }

  private action(name: string): void {
    if (name === "collapse-all")
      this.view = { collapsed: this.allCompound(), focus: this.view.focus ?? null };
    else if (name === "expand-all") this.view = { collapsed: [], focus: this.view.focus ?? null };
    else if (name === "focus" && this.selected) this.view = { ...this.view, focus: this.selected };
    else if (name === "unfocus") this.view = { ...this.view, focus: null };
    else return;
    void this.render();
  }

  private activate(id: string, focus: boolean): void {
    this.selected = id;
    if (focus) {
      this.action("focus");
      return;
    }
    const node = this.find(id);
    if (!node || node.children.length === 0) return;
    const collapsed = new Set(this.view.collapsed);
    if (collapsed.has(id)) collapsed.delete(id);
    else collapsed.add(id);
    this.view = { ...this.view, collapsed: [...collapsed] };
    void this.render(id);
  }

  private find(id: string): MachineGraph["root"] | undefined {
    const walk = (n: MachineGraph["root"]): MachineGraph["root"] | undefined =>
      n.id === id ? n : n.children.map(walk).find((x) => x !== undefined);
    return walk(this.charts.graphs[this.machine].root);
  }

  private async render(keepFocusOn?: string): Promise<void> {
    const token = ++this.renderToken;
    const machine = this.machine;
    const precomputed = this.charts.layouts[machine];
    const isDefault = JSON.stringify(this.view) === JSON.stringify(this.charts.views[machine]);
    let layout: ChartLayout;
    if (isDefault) layout = precomputed;
    else {
      this.status.textContent = "Laying out…";
      try {
        layout = await this.layouts.layout(this.charts.graphs[machine], this.view);
      } catch (error) {
        this.status.textContent = `Layout failed: ${error instanceof Error ? error.message : String(error)}`;
        return;
      }
    }
    if (token !== this.renderToken) return;
    // The state that has the keyboard focus keeps it: live counts redraw the chart every few seconds, and
    // a redraw took the focus away from a keyboard user in the middle of their Enter or `f`.
    const focusedNow = document.activeElement;
    const focusId =
      keepFocusOn ??
      (focusedNow && this.svgHost.contains(focusedNow)
        ? focusedNow.closest<SVGGElement>("g.node")?.dataset.id
        : undefined);
    this.svgHost.innerHTML = renderChartSvg(layout, {
      counts: machine === "mirrorPartition" ? this.counts : undefined,
      active: this.selected,
    });
    this.svgHost.dataset.machine = machine;
    this.status.textContent = `${machine}: ${layout.nodes.length} states shown, ${layout.edges.length} edges${
      this.view.focus ? `, focused on ${this.view.focus}` : ""
    }`;
    if (focusId) {
      this.svgHost.querySelector<SVGGElement>(`g.node[data-id="${CSS.escape(focusId)}"]`)?.focus();
    }
  }
}
