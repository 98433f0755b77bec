import { existsSync } from "node:fs";
import { build } from "vite";
import type { TestProject } from "vitest/node";
import { VISUALIZER_DIST_DIR, VISUALIZER_ROOT } from "../../src/paths";
import { CHROMIUM_CANDIDATES } from "./chromium";

declare module "vitest" {
  export interface ProvidedContext {
    /** The Chromium binary the browser tests drive (Debian's `chromium-headless-shell`). */
    chromiumPath: string;
  }
}

/**
 * Builds the page into the visualizer's `dist` once per run (a fresh clone has none; the node serves it at
 * /ui) and finds the system Chromium. Without one it throws saying what to install: browsers are never
 * downloaded (their CDN is unreachable here).
 */
export default async function setup(project: TestProject): Promise<void> {
  const chromium = CHROMIUM_CANDIDATES.find((p) => existsSync(p));
  if (chromium === undefined) {
    throw new Error(
      `no Chromium found (looked for ${CHROMIUM_CANDIDATES.join(", ")}); install Debian's with \`apt-get install -y --no-install-recommends chromium-headless-shell fonts-dejavu-core\` (what .ci/run does), or set CHROMIUM_PATH`,
    );
  }
  project.provide("chromiumPath", chromium);
  await build({ root: VISUALIZER_ROOT, configFile: `${VISUALIZER_ROOT}/vite.config.ts`, logLevel: "warn" });
  if (!existsSync(`${VISUALIZER_DIST_DIR}/index.html`))
    throw new Error(`vite build wrote no ${VISUALIZER_DIST_DIR}/index.html`);
}
