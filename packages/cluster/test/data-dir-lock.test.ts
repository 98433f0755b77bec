import { spawnSync } from "node:child_process";
import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DataDirLock, DataDirLockedError, type KafkaCluster } from "../src/index";
import { batch, testCluster } from "./helpers";

/** Kafka's lock file name in a data dir. */
const LOCK_FILE = ".lock";
const dirs: string[] = [];
const clusters: KafkaCluster[] = [];
afterEach(() => {
  for (const c of clusters.splice(0)) c.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "cluster-mirror-lock-"));
  dirs.push(d);
  return d;
}

function start(dataDir: string): KafkaCluster {
  const { cluster } = testCluster({ dataDir, fsync: false });
  clusters.push(cluster);
  return cluster;
}

/** Every file under `dir` with its size, mode and content hash: what "changes nothing" compares. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) {
        out[`${path.relative(dir, p)}/`] = "dir";
        walk(p);
      } else {
        const bytes = fs.readFileSync(p);
        out[path.relative(dir, p)] =
          `${bytes.length}:${crypto.createHash("sha256").update(bytes).digest("hex")}`;
      }
    }
  };
  walk(dir);
  return out;
}

/** The pid of a process that has exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ["-e", ""]);
  expect(child.status).toBe(0);
  return child.pid!;
}

function catchError(work: () => unknown): unknown {
  try {
    work();
  } catch (error) {
    return error;
  }
  throw new Error("expected an error");
}

describe("data dir lock", () => {
  it("refuses a second cluster on the same data dir and leaves the dir unchanged", async () => {
    const dir = tempDir();
    const { cluster: first, settle } = testCluster({ dataDir: dir, fsync: false });
    clusters.push(first);
    first.controller.createTopic({ name: "t", replicaAssignment: [[0, 1, 2]] });
    settle();
    const acked = first
      .leaderFor("t", 0)
      .produce({ topic: "t", partition: 0, batch: batch(["a", "b"]), acks: -1 });
    settle();
    await acked;
    const before = snapshot(dir);

    const error = catchError(() => start(dir));
    expect(error).toBeInstanceOf(DataDirLockedError);
    expect(before[LOCK_FILE]).toBeDefined();
    expect(error).toMatchObject({ errorName: "DATA_DIR_LOCKED", retriable: false, dir });
    expect((error as Error).message).toContain(dir);
    expect((error as Error).message).toContain("close() that cluster first");
    expect(snapshot(dir)).toEqual(before);

    // The first cluster still owns its dir; once it is closed the dir can be used again.
    expect(first.runningBrokers()).toEqual([0, 1, 2]);
    first.close();
    expect(fs.existsSync(path.join(dir, LOCK_FILE))).toBe(false);
    const second = start(dir);
    second.controller.createTopic({ name: "t", replicaAssignment: [[0, 1, 2]] });
    expect(second.broker(0)!.replica("t", 0)!.log.logEndOffset).toBe(2n);
  });

  it("names the other process that holds the dir and what to do", () => {
    const dir = tempDir();
    // The parent of this test process is alive; its start time is read the same way the lock reads it.
    const lock = `pid=${process.ppid}\nhostname=${os.hostname()}\n`;
    fs.writeFileSync(path.join(dir, LOCK_FILE), lock);
    const before = snapshot(dir);
    const error = catchError(() => start(dir)) as DataDirLockedError;
    expect(error).toBeInstanceOf(DataDirLockedError);
    expect(error.message).toContain(`in use by process ${process.ppid} on host ${os.hostname()}`);
    expect(error.message).toContain(`delete ${path.join(dir, LOCK_FILE)}`);
    expect(snapshot(dir)).toEqual(before);
  });

  it("counts a lock held on another host, or one it cannot read, as held", () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, LOCK_FILE), `pid=${deadPid()}\nhostname=not-${os.hostname()}\n`);
    expect(catchError(() => DataDirLock.acquire(dir))).toBeInstanceOf(DataDirLockedError);
    fs.writeFileSync(path.join(dir, LOCK_FILE), "");
    expect((catchError(() => DataDirLock.acquire(dir)) as Error).message).toContain("cannot be read");
  });

  it("takes over the lock of a process that died without releasing it (kill -9)", () => {
    const dir = tempDir();
    const pid = deadPid();
    fs.writeFileSync(path.join(dir, LOCK_FILE), `pid=${pid}\nhostname=${os.hostname()}\n`);
    const cluster = start(dir);
    expect(DataDirLock.owner(dir)?.pid).toBe(process.pid);
    expect(fs.existsSync(path.join(dir, ".lock.takeover"))).toBe(false);
    cluster.close();
    expect(DataDirLock.owner(dir)).toBeUndefined();
  });

  it.runIf(process.platform === "linux")(
    "takes over a lock whose pid now runs another process (a reused pid, as a restarted container's)",
    () => {
      const dir = tempDir();
      // Our own pid with another start time: an earlier process that had this pid.
      fs.writeFileSync(
        path.join(dir, LOCK_FILE),
        `pid=${process.pid}\nhostname=${os.hostname()}\nprocess.start=1\n`,
      );
      const lock = DataDirLock.acquire(dir);
      const owner = DataDirLock.owner(dir)!;
      expect(owner.pid).toBe(process.pid);
      expect(owner.processStart).not.toBe("1");
      lock.release();
    },
  );

  it("releases the lock when the cluster fails to start, so the dir can be retried", () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, "broker-0"), "not a directory");
    expect(() => start(dir)).toThrow();
    expect(fs.existsSync(path.join(dir, LOCK_FILE))).toBe(false);
    DataDirLock.acquire(dir).release();
  });

  it("refuses a dataDir that is a file, or under one, with a typed error naming it, before any broker starts", () => {
    const file = path.join(tempDir(), "a-file");
    fs.writeFileSync(file, "not a directory");
    for (const [dataDir, reason] of [
      [file, "ENOTDIR: a file, not a directory"],
      [path.join(file, "data"), "ENOTDIR"],
    ]) {
      const error = catchError(() => start(dataDir!));
      // Kafka's LogManager refuses it at start: "Failed to create or validate data directory".
      expect(error).toMatchObject({
        errorName: "KAFKA_STORAGE_ERROR",
        code: 56,
        retriable: false,
        message: `cannot create or use dataDir ${dataDir} (${reason}): nothing was started. Pass a directory this process can create and write`,
      });
    }
    expect(fs.readFileSync(file, "utf8")).toBe("not a directory");
  });

  it("refuses a lock handed to a cluster for another dir", () => {
    const other = DataDirLock.acquire(tempDir());
    expect(
      catchError(() => testCluster({ dataDir: tempDir(), dataDirLock: other, fsync: false })),
    ).toMatchObject({ errorName: "INVALID_REQUEST" });
    other.release();
  });
});
