/**
 * Regenerates the golden chart layouts (`goldens/charts.json`) from the machines: run
 * `pnpm --filter @cluster-mirror/visualizer run goldens` after a machine changes, then review the diff.
 */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { GOLDEN_CHARTS_PATH } from "../src/chart/golden-path";
import { precomputeCharts } from "../src/chart/node-layouts";

const charts = await precomputeCharts();
writeFileSync(GOLDEN_CHARTS_PATH, `${JSON.stringify(charts, null, 1)}\n`);
// Formatted as the repository's linter wants it, so a regenerated file passes `pnpm lint` as it is.
execFileSync("npx", ["biome", "format", "--write", GOLDEN_CHARTS_PATH], { stdio: "inherit" });
console.log(`wrote ${GOLDEN_CHARTS_PATH}`);
