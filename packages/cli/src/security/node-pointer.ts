import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

/** Environment variable that moves the directory of running nodes' pointer files (tests use a temp dir). */
export const RUNTIME_DIR_ENV = "CLUSTER_MIRROR_RUNTIME_DIR";

/** What a running node leaves for the CLIs of the same user: its port, pid and admin token. */
export interface NodePointer {
  port: number;
  pid: number;
  token: string;
  /** The token's file in the data dir, to print; absent for an in-memory node. */
  tokenFile?: string;
}

/**
 * Where running nodes leave their pointer files: `$CLUSTER_MIRROR_RUNTIME_DIR`, or `~/.cluster-mirror/run`.
 * The directory is the user's own (mode 0700), like Jupyter's runtime dir, so only that user's CLIs find a
 * token there.
 */
export function runtimeDir(): string {
  return process.env[RUNTIME_DIR_ENV] || path.join(os.homedir(), ".cluster-mirror", "run");
}

function pointerFile(port: number): string {
  return path.join(runtimeDir(), `node-${port}.json`);
}

/**
 * Writes the pointer of a node listening on `port` (mode 0600 in a 0700 dir) so that `kafka-mirrors
 * --bootstrap-server :PORT` finds the token without flags. Returns the file, or undefined with the reason
 * when it could not be written (the CLIs then need --token or --data-dir; the node still runs).
 */
export function writeNodePointer(pointer: NodePointer): { file?: string; error?: string } {
  const file = pointerFile(pointer.port);
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    const tmp = `${file}.${pointer.pid}.tmp`;
    fs.writeFileSync(tmp, `${JSON.stringify(pointer)}\n`, { mode: 0o600 });
    fs.renameSync(tmp, file);
    return { file };
  } catch (error) {
    return { error: (error as NodeJS.ErrnoException).code ?? String(error) };
  }
}

/** Removes the pointer of `port` if it is still this process's (a newer node may have taken the port). */
export function removeNodePointer(port: number, pid: number): void {
  const found = readPointer(port);
  if (found?.pid === pid) fs.rmSync(pointerFile(port), { force: true });
}

/**
 * The token of the node on `port`, from its pointer file, when that node's process is still alive (a stale
 * pointer of a crashed node is never sent to whatever listens on the port now). Undefined otherwise.
 */
export function discoverToken(port: number): string | undefined {
  const pointer = readPointer(port);
  if (!pointer || !alive(pointer.pid)) return undefined;
  return pointer.token;
}

function readPointer(port: number): NodePointer | undefined {
  try {
    const parsed = JSON.parse(fs.readFileSync(pointerFile(port), "utf8")) as Partial<NodePointer>;
    if (typeof parsed.token !== "string" || typeof parsed.pid !== "number") return undefined;
    return parsed as NodePointer;
  } catch {
    return undefined;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    // ESRCH: gone. EPERM: the pid now belongs to another user's process, not to our node.
    return false;
  }
}
