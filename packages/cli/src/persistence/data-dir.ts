import * as fs from "node:fs";
import * as path from "node:path";
import { OperationError } from "../commands/cli-errors";

/**
 * Makes sure `dir` is a directory this process can write, creating missing levels one at a time (`dir`
 * itself with mode 0700), before any cluster starts on it. Throws OperationError naming the directory and the reason otherwise.
 *
 * Why not `mkdirSync(dir, { recursive: true })`: under a pseudo file system such as `/proc`, Node's
 * recursive mkdir retries ENOENT forever (the process spins at full CPU and never reports anything), so
 * each level is created by a plain mkdir, which fails at once.
 */
export function prepareDataDir(flag: string, dir: string): void {
  const resolved = path.resolve(dir);
  const missing: string[] = [];
  for (let d = resolved; !fs.existsSync(d); d = path.dirname(d)) {
    missing.unshift(d);
    if (path.dirname(d) === d) break;
  }
  try {
    // The data dir holds the metadata log, with the sources' credentials: a new one is the user's alone.
    for (const d of missing) fs.mkdirSync(d, d === resolved ? 0o700 : undefined);
    if (!fs.statSync(resolved).isDirectory()) {
      throw Object.assign(new Error("not a directory"), { code: "ENOTDIR" });
    }
    fs.accessSync(resolved, fs.constants.W_OK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new OperationError(
      `cannot use ${flag} ${dir} (${code}): nothing was started. Pass a directory this user can create and write, e.g. ${flag} ./data`,
      { cause: error },
    );
  }
}

/**
 * Refuses a `dir` that exists and holds anything, before anything starts on it: for a run that builds its
 * clusters from nothing (`cluster-mirror demo --data-dir`), whose steps fail midway on clusters an earlier
 * run left there (its mirrors still copying, its topics read-only), or would scatter broker directories
 * among a directory's own files. An empty `dir` passes; call it after prepareDataDir, which creates a missing
 * one and reports one that cannot be used.
 */
export function requireEmptyDataDir(flag: string, dir: string, what: string): void {
  const entries = fs.readdirSync(dir);
  if (entries.length === 0) return;
  const shown = entries.sort().slice(0, 3).join(", ");
  throw new OperationError(
    `${flag} ${dir} is not empty (it holds ${shown}${entries.length > 3 ? ", ..." : ""}): ${what} starts its clusters from nothing, so nothing was started. Pass a new or empty directory, or delete this one (rm -r ${dir}) to run again.`,
  );
}
