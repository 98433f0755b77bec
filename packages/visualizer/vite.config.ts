import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

/**
 * The page builds to static files in `dist` (served by `cluster-mirror node` at /ui, relative URLs so any
 * mount path works). `pnpm viz` runs the dev server on the scenario runner.
 */
export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  base: "./",
  logLevel: "warn",
  build: {
    outDir: "dist",
    emptyOutDir: true,
    chunkSizeWarningLimit: 4000,
    rollupOptions: {
      input: {
        index: fileURLToPath(new URL("index.html", import.meta.url)),
      },
    },
  },
  worker: { format: "es" },
});
