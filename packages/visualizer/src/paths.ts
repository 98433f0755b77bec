import { fileURLToPath } from "node:url";

/** Where `vite build` writes the page (`packages/visualizer/dist`); the node serves it at `/ui`. */
export const VISUALIZER_DIST_DIR = fileURLToPath(new URL("../dist", import.meta.url));
/** The visualizer package's root (its `vite.config.ts`). */
export const VISUALIZER_ROOT = fileURLToPath(new URL("..", import.meta.url));
export { GOLDEN_CHARTS_PATH } from "./chart/golden-path";
