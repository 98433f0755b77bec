/**
 * `pnpm viz`: the scenario runner without a node. Starts Vite's dev server on 127.0.0.1 (port 5173, or
 * the next free one; `--port N` to choose) and prints the runner's URL. Ctrl-C stops it.
 */
import { createServer } from "vite";
import { VISUALIZER_ROOT } from "../src/paths";
import { parseVizArgs, VIZ_USAGE, VizUsageError } from "./viz-args";

let command: ReturnType<typeof parseVizArgs>;
try {
  command = parseVizArgs(process.argv.slice(2));
} catch (err) {
  if (!(err instanceof VizUsageError)) throw err;
  console.error(`Error: ${err.message}`);
  process.exit(2);
}
if (command.kind === "help") {
  console.log(VIZ_USAGE);
  process.exit(0);
}
const { port } = command;
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
