import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const PACKAGE_NAME = "@cluster-mirror/cli";

/**
 * The version of the installed `@cluster-mirror/cli` package, for `--version`. Read from its package.json,
 * found by walking up from this module: the sources (src/commands/) and the built bundle (dist/, chunks at
 * another depth) sit at different depths below it, so no fixed relative path fits both.
 */
export function cliVersion(from: string = fileURLToPath(import.meta.url)): string {
  for (let dir = dirname(from); ; dir = dirname(dir)) {
    const file = join(dir, "package.json");
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, "utf8")) as { name?: string; version?: string };
      if (pkg.name === PACKAGE_NAME && pkg.version) return pkg.version;
    }
    if (dirname(dir) === dir) return "unknown";
  }
}
