/** What `pnpm viz [args]` asks for: its usage, or the scenario runner on a port. */
export type VizCommand = { kind: "help" } | { kind: "serve"; port: number };

/** The port `pnpm viz` tries first without `--port` (Vite's default; the next free one if it is taken). */
export const DEFAULT_VIZ_PORT = 5173;

/** A command line `pnpm viz` cannot run: says what was wrong and what to pass instead. Nothing started. */
export class VizUsageError extends Error {
  readonly code = "INVALID_ARGUMENT";
  override readonly name = "VizUsageError";
}

export const VIZ_USAGE = [
  "Usage: pnpm viz [--port N]",
  "",
  "Serves the scenario runner (and the charts) on 127.0.0.1 without a node; Ctrl-C stops it.",
  "",
  "Options:",
  `  --port N    the port to try first, 1 to 65535 (default ${DEFAULT_VIZ_PORT}; the next free one if it is taken)`,
  "  -h, --help  print this text and start nothing",
].join("\n");

/** Reads `pnpm viz`'s arguments: `--port N` (or `--port=N`) once, or `--help`; anything else is a VizUsageError. */
export function parseVizArgs(args: readonly string[]): VizCommand {
  let port: number | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? "";
    if (arg === "--") continue;
    if (arg === "-h" || arg === "--help") return { kind: "help" };
    let value: string | undefined;
    if (arg === "--port") {
      value = args[i + 1];
      i++;
    } else if (arg.startsWith("--port=")) {
      value = arg.slice("--port=".length);
    } else {
      throw new VizUsageError(`unknown argument '${arg}': pnpm viz takes only --port N (pnpm viz --help)`);
    }
    if (port !== undefined) throw new VizUsageError("--port is given twice: give it once");
    if (value === undefined || !/^\d{1,5}$/.test(value) || Number(value) < 1 || Number(value) > 65535) {
      throw new VizUsageError(
        `--port must be an integer from 1 to 65535, got ${value === undefined ? "nothing" : `'${value}'`} (e.g. --port ${DEFAULT_VIZ_PORT})`,
      );
    }
    port = Number(value);
  }
  return { kind: "serve", port: port ?? DEFAULT_VIZ_PORT };
}
