import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it, vi } from "vitest";
import { startPersistentCluster } from "../src/persistence/persistent-cluster";
import { tempDir } from "./cli-harness";
import { persistentOptions } from "./persistent-options";

/** Every directory fsynced (opened read-only, then fsynced), by path; the rest of node:fs is real. */
const synced = vi.hoisted(() => ({ dirs: [] as string[], open: new Map<number, string>() }));

vi.mock("node:fs", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:fs")>();
  const openSync = (file: fs.PathLike, flags?: fs.OpenMode, mode?: fs.Mode) => {
    const fd = real.openSync(file, flags ?? "r", mode);
    if (flags === "r" && real.statSync(file).isDirectory()) synced.open.set(fd, String(file));
    return fd;
  };
  const fsyncSync = (fd: number) => {
    const dir = synced.open.get(fd);
    if (dir !== undefined) synced.dirs.push(dir);
    return real.fsyncSync(fd);
  };
  const closeSync = (fd: number) => {
    synced.open.delete(fd);
    return real.closeSync(fd);
  };
  const mocked = { ...real, openSync, fsyncSync, closeSync };
  return { ...mocked, default: mocked };
});

describe("a node on a data dir with fsync on: new and renamed files survive a power loss", () => {
  it("fsyncs the directory of every file or directory it creates or renames before relying on it", () => {
    const dir = fs.realpathSync(tempDir("cm-dir-fsync"));
    const node = startPersistentCluster(persistentOptions(dir, true));
    try {
      // metadata.log is created in the data dir, broker-0/ in it too.
      expect(synced.dirs).toContain(dir);
      synced.dirs.length = 0;
      node.cluster.controller.createTopic({ name: "t", numPartitions: 1 });
      // The partition's new directory is made durable in broker-0/.
      expect(synced.dirs).toContain(path.join(dir, "broker-0"));
      synced.dirs.length = 0;
      node.cluster.broker(0)!.checkpointHighWatermarks();
      // The checkpoint's rename.
      expect(synced.dirs).toContain(path.join(dir, "broker-0"));
      synced.dirs.length = 0;
      node.cluster.groups.commitOffsets({
        groupId: "g",
        offsets: [{ topic: "t", partition: 0, offset: 0n }],
      });
      // group-offsets.json's rename.
      expect(synced.dirs).toContain(dir);
      synced.dirs.length = 0;
      node.cluster.transactions.initProducerId({ transactionalId: "tx" });
      // transactions.json's rename.
      expect(synced.dirs).toContain(dir);
    } finally {
      node.close();
    }
  });
});
