import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

/** The repository root. */
export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** The packages built for users, as `scripts/build-packages.mjs` builds them. */
export const USER_PACKAGES = [
  "@cluster-mirror/protocol",
  "@cluster-mirror/log",
  "@cluster-mirror/machines",
  "@cluster-mirror/cluster",
  "@cluster-mirror/mirror",
  "@cluster-mirror/sim",
  "@cluster-mirror/kafkajs",
  "@cluster-mirror/cli",
] as const;

/** The README's embedded-library example, exactly as shown (TypeScript that is also plain JavaScript). */
export function readmeExample(): string {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const m = /<!-- embedded-example:start -->\n```ts\n([\s\S]*?)```\n<!-- embedded-example:end -->/.exec(
    readme,
  );
  if (!m?.[1]) throw new Error("README.md has no embedded-example block between its markers");
  return m[1];
}

/** What a command printed, and how it ended. */
export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs a command to its end and returns what it printed, whatever its exit code. The environment drops
 * what the test runner inherits from `pnpm test` and vitest: the `npm_*` and `PNPM_*` settings, and
 * NODE_PATH and NODE_OPTIONS (pnpm points NODE_PATH at this workspace's store, where `require` would
 * otherwise find packages the project under test does not have). npm and the installed bins see what a
 * user's shell gives them.
 */
export async function run(
  command: string,
  args: readonly string[],
  options: { cwd: string; env?: Record<string, string> },
): Promise<RunResult> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !/^(npm_|pnpm_|NODE_PATH$|NODE_OPTIONS$)/i.test(k)) env[k] = v;
  }
  try {
    const { stdout, stderr } = await promisify(execFile)(command, [...args], {
      cwd: options.cwd,
      env: { ...env, ...options.env },
      maxBuffer: 64 * 1024 * 1024,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: unknown; stdout?: string; stderr?: string; message: string };
    if (typeof e.code !== "number") throw err;
    return { code: e.code, stdout: e.stdout ?? "", stderr: e.stderr ?? e.message };
  }
}

/** Fails with everything the command printed, so a broken build or install explains itself. */
export function expectSuccess(what: string, r: RunResult): RunResult {
  if (r.code !== 0) {
    throw new Error(`${what} exited with ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
  }
  return r;
}

/**
 * How to run this workspace's pnpm: the one running `pnpm test` (npm_execpath), else the version the
 * root package.json pins, through npx.
 */
export function pnpmCommand(): { command: string; args: string[] } {
  const execPath = process.env.npm_execpath;
  if (execPath && /pnpm/.test(execPath)) return { command: process.execPath, args: [execPath] };
  const pinned = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { packageManager: string })
    .packageManager;
  return { command: "npx", args: ["--yes", pinned] };
}

/** The version of a package this workspace has installed, so the consumer gets the same from npm. */
export function workspaceVersion(name: string): string {
  return (
    JSON.parse(readFileSync(join(ROOT, "node_modules", name, "package.json"), "utf8")) as { version: string }
  ).version;
}
