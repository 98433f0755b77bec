/**
 * `pnpm viz`: the scenario runner without a node. Starts Vite's dev server on 127.0.0.1 (port 5173, or
 * the next free one; `--port N` to choose) and prints the runner's URL. Ctrl-C stops it.
 */
import { createServer } from "vite";
import { VISUALIZER_ROOT } from "../src/paths";

const at = process.argv.indexOf("--port");
const port = at >= 0 ? Number(process.argv[at + 1]) : 5173;
const server = await createServer({
  root: VISUALIZER_ROOT,
  configFile: `${VISUALIZER_ROOT}/vite.config.ts`,
  server: { host: "127.0.0.1", port },
});
await server.listen();
const base = server.resolvedUrls?.local[0] ?? `http://127.0.0.1:${port}/`;
console.log(`Scenario runner: ${base}scenarios.html`);
console.log(
  `Charts:          ${base}index.html#charts (the live fleet and time travel need \`cluster-mirror node\`: open its /ui)`,
);
