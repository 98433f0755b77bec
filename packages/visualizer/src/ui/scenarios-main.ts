/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/// <reference types="vite/client" />
// Node's Buffer and setImmediate first: the simulator's modules use them as they load.
import "../scenario/shims/install";
import { escapeXml } from "../chart/render-svg";
import type { FleetCell } from "../fleet/fleet-model";
import {
  parseScenario,
  runScenario,
  type ScenarioProgress,
  type ScenarioResult,
  type ScenarioSpec,
  scenarioFromHash,
  scenarioHash,
  TOPOLOGIES,
} from "../scenario/scenario";
import { PartitionGrid } from "./partition-grid";
import "./style.css";

const presets = import.meta.glob<{ spec: ScenarioSpec }>("../../scenarios/*.json", {
  eager: true,
  import: "default",
});

const host = document.getElementById("scenarios") as HTMLElement;
host.innerHTML = `
  <h2>Scenarios on virtual time</h2>
  <p>The deterministic simulator (<code>packages/sim</code>) runs here in the page: the topology is built from the
  seed, the operations run in order on virtual time. The URL holds the whole scenario: open it again (or replay
  its JSON with <code>pnpm test</code>) and the run is the same.</p>
  <p class="presets">Recorded scenarios: ${Object.entries(presets)
    .map(
      ([path, p]) =>
        `<a href="${scenarioHash(p.spec)}">${escapeXml(path.replace(/^.*\//, "").replace(/\.json$/, ""))}</a>`,
    )
    .join(" · ")}</p>
  <form class="scenario-form" aria-label="scenario">
    <label>Topology <select name="topology">${Object.keys(TOPOLOGIES)
      .map((t) => `<option>${t}</option>`)
      .join("")}</select></label>
    <label>Seed <input name="seed" type="number" value="1" step="1" /></label>
    <label>Brokers per cluster <input name="brokers" type="number" value="3" min="1" max="5" /></label>
    <label class="ops">Operations (JSON)
      <textarea name="ops" rows="6" cols="80" spellcheck="false">[{"op":"produce","target":0,"partition":0,"count":10},{"op":"failover","choice":0,"mode":"planned"},{"op":"settle"}]</textarea></label>
    <button type="submit">Run</button>
  </form>
  <p class="scenario-status" role="status" aria-live="polite"></p>
  <div class="grid-host"></div>
  <h3>Result</h3>
  <div class="scenario-violations"></div>
  <pre id="scenario-result" aria-label="result as JSON"></pre>
  <details><summary>Steps</summary><ol class="scenario-steps"></ol></details>`;

const form = host.querySelector("form") as HTMLFormElement;
const status = host.querySelector(".scenario-status") as HTMLParagraphElement;
const resultEl = host.querySelector("#scenario-result") as HTMLPreElement;
const violationsEl = host.querySelector(".scenario-violations") as HTMLDivElement;
const stepsEl = host.querySelector(".scenario-steps") as HTMLOListElement;
const grid = new PartitionGrid(host.querySelector(".grid-host") as HTMLElement, {
  label: "mirror partitions of the simulated clusters",
});

function fill(spec: ScenarioSpec): void {
  (form.elements.namedItem("topology") as HTMLSelectElement).value = spec.topology;
  (form.elements.namedItem("seed") as HTMLInputElement).value = String(spec.seed);
  (form.elements.namedItem("brokers") as HTMLInputElement).value = String(spec.brokers ?? 3);
  (form.elements.namedItem("ops") as HTMLTextAreaElement).value = JSON.stringify(spec.ops);
}

function read(): ScenarioSpec {
  const brokers = Number((form.elements.namedItem("brokers") as HTMLInputElement).value);
  return parseScenario({
    topology: (form.elements.namedItem("topology") as HTMLSelectElement).value,
    seed: Number((form.elements.namedItem("seed") as HTMLInputElement).value),
    ...(brokers !== 3 ? { brokers } : {}),
    ops: JSON.parse((form.elements.namedItem("ops") as HTMLTextAreaElement).value),
  });
}

function cellsOf(p: ScenarioProgress): FleetCell[] {
  const cells: FleetCell[] = [];
  for (const name of p.sim.world.spec.clusters) {
    for (const v of p.sim.node(name).mirroring.coordinators.describe()) {
      const context = {
        cluster: name,
        mirror: v.key.mirror,
        topic: v.key.topic,
        topicId: v.key.topicId,
        partition: v.key.partition,
        stateEpoch: v.stateEpoch,
        leaderEpoch: v.leaderEpoch,
        retryAttempt: v.retryAttempt,
        errorMessage: v.errorMessage,
        previousState: v.previousState,
        lag: null,
      };
      cells.push({
        id: `${name}/${v.key.mirror}/${v.key.topic}-${v.key.partition}`,
        state: v.state,
        context,
      });
    }
  }
  return cells.sort((a, b) => (a.id < b.id ? -1 : 1));
}

let running = false;
async function run(spec: ScenarioSpec): Promise<void> {
  if (running) return;
  running = true;
  resultEl.textContent = "";
  delete resultEl.dataset.done;
  violationsEl.innerHTML = "";
  stepsEl.innerHTML = "";
  const started = performance.now();
  status.textContent = `Building ${spec.topology} from seed ${spec.seed}…`;
  try {
    const result: ScenarioResult = await runScenario(spec, async (p) => {
      grid.setCells(cellsOf(p));
      status.textContent =
        p.index < 0
          ? "Setup done: every mirror partition MIRRORING."
          : `Operation ${p.index + 1} of ${spec.ops.length} done.`;
      // Let the page draw between operations (virtual time does not move meanwhile).
      await new Promise((r) => requestAnimationFrame(() => r(undefined)));
    });
    status.textContent = `Done in ${result.virtualMs} virtual ms (${Math.round(performance.now() - started)} ms here), ${
      result.violations.length
    } violations.`;
    violationsEl.innerHTML =
      result.violations.length === 0
        ? `<p>Every check passed.</p>`
        : `<ul>${result.violations.map((v) => `<li class="violation">${escapeXml(v.invariant)}: ${escapeXml(v.message)}</li>`).join("")}</ul>`;
    stepsEl.innerHTML = result.steps.map((s) => `<li>${escapeXml(s)}</li>`).join("");
    resultEl.textContent = JSON.stringify(result, null, 2);
    resultEl.dataset.done = "true";
  } catch (error) {
    status.textContent = `Run failed: ${error instanceof Error ? error.message : String(error)}`;
    resultEl.dataset.done = "error";
  } finally {
    running = false;
  }
}

form.addEventListener("submit", (e) => {
  e.preventDefault();
  try {
    const spec = read();
    location.hash = scenarioHash(spec); // the hashchange handler runs it
  } catch (error) {
    status.textContent = error instanceof Error ? error.message : String(error);
  }
});

function fromHash(): void {
  if (location.hash.length <= 1) return;
  try {
    const spec = scenarioFromHash(location.hash);
    fill(spec);
    void run(spec);
  } catch (error) {
    status.textContent = `The URL holds no valid scenario: ${error instanceof Error ? error.message : String(error)}`;
  }
}
window.addEventListener("hashchange", fromHash);
fromHash();
