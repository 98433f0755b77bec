import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

const shim = (name: string) => fileURLToPath(new URL(`src/scenario/shims/${name}.ts`, import.meta.url));

/**
 * The page builds to static files in `dist` (served by `cluster-mirror node` at /ui, relative URLs so any
 * mount path works). `pnpm viz` runs the dev server on the scenario runner.
 */
export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  base: "./",
  // The simulator's packages import these Node modules; in memory (all a scenario uses) they are never
  // called, so the browser build gets small stand-ins. What else Node provides (Buffer, setImmediate) is
  // installed by src/scenario/shims/install.ts.
  resolve: {
    alias: {
      "node:fs": shim("node-fs"),
      "node:os": shim("node-os"),
      "node:path": shim("node-path"),
      "node:module": shim("node-module"),
      "node:zlib": shim("node-zlib"),
    },
  },
  logLevel: "warn",
  build: {
    outDir: "dist",
    emptyOutDir: true,
    chunkSizeWarningLimit: 4000,
    rollupOptions: {
      input: {
        index: fileURLToPath(new URL("index.html", import.meta.url)),
        scenarios: fileURLToPath(new URL("scenarios.html", import.meta.url)),
      },
    },
  },
  worker: { format: "es" },
});
