import { KafkaError } from "@cluster-mirror/protocol";
import * as fs from "#platform/fs";
import * as os from "#platform/os";
import * as path from "#platform/path";

/** The lock file's name in a data dir, as Kafka's `.lock` in every log dir. */
export const LOCK_FILE = ".lock";
/** Held only for the instant a stale lock is replaced, so two processes cannot both replace it. */
const TAKEOVER_DIR = ".lock.takeover";

/** Who holds a data dir: what the lock file says. */
export interface DataDirLockOwner {
  pid: number;
  hostname: string;
  /** The holder's start time on Linux (`/proc/<pid>/stat`), to tell a reused pid from the holder. */
  processStart: string | undefined;
}

/**
 * Another process (or another cluster in this process) holds the data dir. Nothing in the dir was changed.
 * Kafka has no error code for this (a broker fails at start with "Failed to acquire lock on file .lock"),
 * so it carries -1; it is not retriable while the holder runs.
 */
export class DataDirLockedError extends KafkaError {
  constructor(
    readonly dir: string,
    message: string,
  ) {
    super("DATA_DIR_LOCKED", -1, false, message);
  }
}

/** Locks this process holds, by real path; on globalThis so two copies of this module still share it. */
const held: Set<string> = sharedHeldSet();

function sharedHeldSet(): Set<string> {
  const registry = globalThis as Record<symbol, unknown>;
  const key = Symbol.for("cluster-mirror.dataDirLocks");
  if (!(registry[key] instanceof Set)) registry[key] = new Set<string>();
  return registry[key] as Set<string>;
}

/**
 * The exclusive lock of one data dir for the lifetime of its user, as Kafka's `.lock` file per log dir:
 * two nodes on one dir would both acknowledge writes at the same offsets and leave a dir that cannot start.
 *
 * Node has no flock, so the lock is a `.lock` file created exclusively (`wx`), holding the holder's pid,
 * host and (on Linux) process start time. A lock left by a process that died (kill -9) is stale and taken
 * over at once: the pid is not running, or runs a process that started at another time (a reused pid, as
 * a restarted container's pid 1; Linux only, elsewhere a reused pid counts as a holder). The
 * replacement happens inside a `.lock.takeover` directory made with `mkdir`, so of two processes that find
 * the same stale lock only one replaces it. A holder on another host, or a lock file that cannot be read,
 * counts as held: the error says which file to remove if no node runs. No timer refreshes the lock, so a
 * stalled event loop never loses it.
 */
export class DataDirLock {
  private released = false;

  private constructor(
    /** The locked directory. */
    readonly dir: string,
    private readonly key: string,
    private readonly content: string,
  ) {}

  /**
   * Creates `dir` if needed and locks it; throws DataDirLockedError, changing nothing in the dir, when
   * another process or another cluster of this process holds it.
   */
  static acquire(dir: string): DataDirLock {
    fs.mkdirSync(dir, { recursive: true });
    const key = fs.realpathSync(dir);
    const file = path.join(dir, LOCK_FILE);
    if (held.has(key)) {
      throw new DataDirLockedError(
        dir,
        `data dir ${dir} is already in use by another cluster in this process (pid ${process.pid}); close() that cluster first, or give this one its own data dir`,
      );
    }
    const self = ownerOfThisProcess();
    const content = formatOwner(self);
    if (createExclusive(file, content)) return DataDirLock.hold(dir, key, content);
    // The file exists: held, or stale (its holder died without releasing it).
    const owner = readOwner(file);
    if (owner === undefined || isRunning(owner, self)) throw lockedError(dir, file, owner);
    if (!takeOver(dir, file, content, owner)) throw lockedError(dir, file, readOwner(file));
    return DataDirLock.hold(dir, key, content);
  }

  /** The current holder of `dir`'s lock, if its lock file exists and can be read. */
  static owner(dir: string): DataDirLockOwner | undefined {
    return readOwner(path.join(dir, LOCK_FILE));
  }

  /** Releases the lock (removes the file if it is still ours); idempotent. */
  release(): void {
    if (this.released) return;
    this.released = true;
    held.delete(this.key);
    const file = path.join(this.dir, LOCK_FILE);
    try {
      if (fs.readFileSync(file, "utf8") === this.content) fs.unlinkSync(file);
    } catch {
      // Already gone (the dir was deleted): nothing to release.
    }
  }

  private static hold(dir: string, key: string, content: string): DataDirLock {
    held.add(key);
    return new DataDirLock(dir, key, content);
  }
}

/** Creates the lock file only if it does not exist; false if it does. */
function createExclusive(file: string, content: string): boolean {
  let fd: number;
  try {
    fd = fs.openSync(file, "wx");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  }
  try {
    fs.writeSync(fd, content);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  return true;
}

/**
 * Replaces the stale lock of `owner` with ours. Only one process at a time may be inside the takeover
 * directory; inside it the lock is read again, so a lock another process took in the meantime is kept.
 */
function takeOver(dir: string, file: string, content: string, stale: DataDirLockOwner): boolean {
  const guard = path.join(dir, TAKEOVER_DIR);
  try {
    fs.mkdirSync(guard);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    throw new DataDirLockedError(
      dir,
      `data dir ${dir}: another process is replacing the stale lock ${file} left by process ${stale.pid} right now, so this one does not start. Retry; if no node runs on this dir, delete ${guard} and ${file}.`,
    );
  }
  try {
    const now = readOwner(file);
    if (now !== undefined && formatOwner(now) !== formatOwner(stale)) return false;
    fs.rmSync(file, { force: true });
    return createExclusive(file, content);
  } finally {
    fs.rmdirSync(guard);
  }
}

function isRunning(owner: DataDirLockOwner, self: DataDirLockOwner): boolean {
  if (owner.hostname !== self.hostname) return true; // cannot see another host's processes
  // Our own pid is alive (it may be another worker thread of this process, whose locks `held` does not
  // list); the start time tells it from an earlier process that had the same pid (a restarted container).
  if (owner.pid === self.pid)
    return owner.processStart === undefined || owner.processStart === self.processStart;
  try {
    process.kill(owner.pid, 0);
  } catch (error) {
    // EPERM: the process exists but belongs to another user.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
  const start = processStart(owner.pid);
  return owner.processStart === undefined || start === undefined || start === owner.processStart;
}

function lockedError(dir: string, file: string, owner: DataDirLockOwner | undefined): DataDirLockedError {
  const who =
    owner === undefined
      ? "another process (its lock file cannot be read)"
      : `process ${owner.pid} on host ${owner.hostname}`;
  return new DataDirLockedError(
    dir,
    `data dir ${dir} is in use by ${who}: it holds ${file}. Two nodes on one data dir would overwrite each other's data, so this one does not start. Stop the other node, or use another --data-dir; if no node runs on this dir, delete ${file}.`,
  );
}

function ownerOfThisProcess(): DataDirLockOwner {
  return { pid: process.pid, hostname: os.hostname(), processStart: processStart(process.pid) };
}

function formatOwner(o: DataDirLockOwner): string {
  return `pid=${o.pid}\nhostname=${o.hostname}\n${o.processStart === undefined ? "" : `process.start=${o.processStart}\n`}`;
}

function readOwner(file: string): DataDirLockOwner | undefined {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
  const props = new Map(
    text
      .split("\n")
      .filter((l) => l.includes("="))
      .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)] as const),
  );
  const pid = Number(props.get("pid"));
  const hostname = props.get("hostname");
  if (!Number.isInteger(pid) || pid <= 0 || hostname === undefined) return undefined;
  return { pid, hostname, processStart: props.get("process.start") };
}

/** Field 22 of `/proc/<pid>/stat` (start time in clock ticks since boot); undefined off Linux. */
function processStart(pid: number): string | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) is in parentheses and may contain spaces: count fields after it.
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  } catch {
    return undefined;
  }
}
