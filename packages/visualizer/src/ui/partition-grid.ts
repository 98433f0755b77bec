/// <reference lib="dom" />
import { escapeXml } from "../chart/render-svg";
import { type FleetCell, STATE_ABBREVIATIONS } from "../fleet/fleet-model";

const CELL_WIDTH = 132;
const CELL_HEIGHT = 46;
const OVERSCAN_ROWS = 2;

/** Options of {@link PartitionGrid}. */
export interface PartitionGridOptions {
  /** The grid's accessible name. */
  readonly label: string;
  /** Called when the user picks a cell (click or Enter). */
  readonly onSelect?: (cell: FleetCell) => void;
}

/**
 * A virtualised grid of partitions: only the rows in view are in the DOM (a few hundred cells at most, for
 * 10 or 10,000 partitions), redrawn at most once per animation frame however many updates arrive. A cell
 * shows the partition, its state as text (colour and pattern are extra) and its lag. Keyboard: arrows,
 * Home/End, PageUp/PageDown move the active cell (`aria-activedescendant`), Enter selects it.
 */
export class PartitionGrid {
  readonly element: HTMLDivElement;
  private readonly spacer: HTMLDivElement;
  private cells: readonly FleetCell[] = [];
  private active = 0;
  private frame: number | null = null;
  private columns = 1;

  constructor(
    host: HTMLElement,
    private readonly options: PartitionGridOptions,
  ) {
    this.element = document.createElement("div");
    this.element.className = "grid-viewport";
    this.element.setAttribute("role", "grid");
    this.element.setAttribute("aria-label", options.label);
    this.element.tabIndex = 0;
    this.spacer = document.createElement("div");
    this.spacer.className = "grid-spacer";
    this.element.append(this.spacer);
    host.append(this.element);
    this.element.addEventListener("scroll", () => this.schedule());
    this.element.addEventListener("keydown", (e) => this.onKey(e));
    this.element.addEventListener("click", (e) => {
      const el = (e.target as HTMLElement).closest<HTMLElement>("[data-index]");
      if (!el) return;
      this.active = Number(el.dataset.index);
      this.schedule();
      const cell = this.cells[this.active];
      if (cell) this.options.onSelect?.(cell);
    });
    new ResizeObserver(() => this.schedule()).observe(this.element);
  }

  /** Replaces the cells (already in display order); drawn on the next frame. */
  setCells(cells: readonly FleetCell[]): void {
    this.cells = cells;
    if (this.active >= cells.length) this.active = Math.max(0, cells.length - 1);
    this.schedule();
  }

  private schedule(): void {
    if (this.frame !== null) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = null;
      this.render();
    });
  }

  private render(): void {
    const width = this.element.clientWidth || 800;
    this.columns = Math.max(1, Math.floor(width / CELL_WIDTH));
    const rows = Math.ceil(this.cells.length / this.columns);
    this.element.setAttribute("aria-rowcount", String(rows));
    this.element.setAttribute("aria-colcount", String(this.columns));
    this.spacer.style.height = `${rows * CELL_HEIGHT}px`;
    const first = Math.max(0, Math.floor(this.element.scrollTop / CELL_HEIGHT) - OVERSCAN_ROWS);
    const visible = Math.ceil((this.element.clientHeight || 400) / CELL_HEIGHT) + 2 * OVERSCAN_ROWS;
    const last = Math.min(rows, first + visible);
    let html = "";
    for (let r = first; r < last; r++) {
      html += `<div role="row" aria-rowindex="${r + 1}" class="grid-row" style="top:${r * CELL_HEIGHT}px">`;
      for (let c = 0; c < this.columns; c++) {
        const i = r * this.columns + c;
        const cell = this.cells[i];
        if (!cell) break;
        html += this.cellHtml(cell, i, c);
      }
      html += "</div>";
    }
    this.spacer.innerHTML = html;
    if (this.cells.length > 0) this.element.setAttribute("aria-activedescendant", `grid-cell-${this.active}`);
    else this.element.removeAttribute("aria-activedescendant");
  }

  private cellHtml(cell: FleetCell, index: number, column: number): string {
    const c = cell.context;
    // A STOPPED partition was failed over: it has no lag, where "lag ?" is one not known.
    const lag = cell.state === "STOPPED" ? "no lag" : c.lag === null ? "lag ?" : `lag ${c.lag}`;
    const name = `${c.topic}-${c.partition}`;
    const label = `${c.mirror} ${name}: ${cell.state}, ${lag}${c.errorMessage ? `, error: ${c.errorMessage}` : ""}`;
    return `<div role="gridcell" id="grid-cell-${index}" aria-colindex="${column + 1}" data-index="${index}" data-id="${escapeXml(
      cell.id,
    )}" data-state="${escapeXml(cell.state)}" class="cell state-${escapeXml(cell.state)}${
      index === this.active ? " active" : ""
    }" style="left:${column * CELL_WIDTH}px" aria-label="${escapeXml(label)}" title="${escapeXml(label)}"><span class="cell-name">${escapeXml(
      name,
    )}</span><span class="cell-state">${escapeXml(STATE_ABBREVIATIONS[cell.state] ?? cell.state)}</span><span class="cell-lag">${escapeXml(lag)}</span></div>`;
  }

  private onKey(e: KeyboardEvent): void {
    const n = this.cells.length;
    if (n === 0) return;
    const page = Math.max(1, Math.floor(this.element.clientHeight / CELL_HEIGHT)) * this.columns;
    const moves: Record<string, number> = {
      ArrowRight: 1,
      ArrowLeft: -1,
      ArrowDown: this.columns,
      ArrowUp: -this.columns,
      PageDown: page,
      PageUp: -page,
    };
    let next = this.active;
    if (e.key in moves) next = this.active + (moves[e.key] as number);
    else if (e.key === "Home") next = 0;
    else if (e.key === "End") next = n - 1;
    else if (e.key === "Enter" || e.key === " ") {
      const cell = this.cells[this.active];
      if (cell) this.options.onSelect?.(cell);
      e.preventDefault();
      return;
    } else return;
    e.preventDefault();
    this.active = Math.min(n - 1, Math.max(0, next));
    const row = Math.floor(this.active / this.columns);
    const top = row * CELL_HEIGHT;
    if (top < this.element.scrollTop) this.element.scrollTop = top;
    else if (top + CELL_HEIGHT > this.element.scrollTop + this.element.clientHeight)
      this.element.scrollTop = top + CELL_HEIGHT - this.element.clientHeight;
    this.schedule();
  }
}
