import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  encodeMetadataEntry,
  METADATA_LOG_FILE,
  readMetadataLog,
} from "../src/persistence/metadata-log-file";
import { startPersistentCluster } from "../src/persistence/persistent-cluster";
import { tempDir } from "./cli-harness";
import { persistentOptions } from "./persistent-options";

/** Faults injected into node:fs calls on `metadata.log` (the rest of the fs is real). */
const faults = vi.hoisted(() => ({
  /** A kill -9 inside a whole-file rewrite of metadata.log: the file is opened (truncated), then nothing. */
  killInRewrite: false,
  /** The next write to metadata.log fails with ENOSPC before writing anything. */
  enospcOnWrite: 0,
  metadataFds: new Set<number>(),
}));

vi.mock("node:fs", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:fs")>();
  const isMetadataLog = (file: unknown) => typeof file === "string" && file.endsWith("metadata.log");
  const mocked = {
    ...real,
    openSync: (file: fs.PathLike, ...rest: unknown[]) => {
      const fd = (real.openSync as (...a: unknown[]) => number)(file, ...rest);
      if (isMetadataLog(file)) faults.metadataFds.add(fd);
      return fd;
    },
    closeSync: (fd: number) => {
      faults.metadataFds.delete(fd);
      real.closeSync(fd);
    },
    writeSync: (fd: number, ...rest: unknown[]) => {
      if (faults.metadataFds.has(fd) && faults.enospcOnWrite > 0) {
        faults.enospcOnWrite--;
        throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
      }
      return (real.writeSync as (...a: unknown[]) => number)(fd, ...rest);
    },
    writeFileSync: (file: fs.PathOrFileDescriptor, ...rest: unknown[]) => {
      if (faults.killInRewrite && isMetadataLog(file)) {
        real.closeSync(real.openSync(file as string, "w")); // O_TRUNC done, the data never written
        throw new Error("killed (-9) while rewriting metadata.log");
      }
      return (real.writeFileSync as (...a: unknown[]) => void)(file, ...rest);
    },
  };
  return { ...mocked, default: mocked };
});

afterEach(() => {
  faults.killInRewrite = false;
  faults.enospcOnWrite = 0;
});

const options = (dir: string) => persistentOptions(dir, true);

describe("metadata.log crash consistency", () => {
  it("a kill -9 while recovery cuts a torn tail loses none of the complete records", () => {
    const file = path.join(tempDir("cm-meta-crash"), METADATA_LOG_FILE);
    const entries = [0, 1, 2].map((offset) => ({
      offset,
      record: { type: "ProducerIds" as const, nextProducerId: BigInt(1000 * (offset + 1)) },
    }));
    const lines = entries.map((e) => `${encodeMetadataEntry(e)}\n`).join("");
    fs.writeFileSync(file, `${lines}{"offset":3,"rec`);
    faults.killInRewrite = true;
    try {
      readMetadataLog(file);
    } catch {
      // the process died here
    }
    faults.killInRewrite = false;
    // The restarted node reads what the killed one left: every complete record is still there.
    expect(readMetadataLog(file)).toEqual(entries.map((e) => e.record));
  });

  it("a metadata record that could not be written is not acknowledged, and the node restarts", () => {
    const dir = tempDir("cm-meta-enospc");
    const first = startPersistentCluster(options(dir));
    first.cluster.controller.createTopic({ name: "a", numPartitions: 1 });
    faults.enospcOnWrite = 1;
    let acknowledged = true;
    try {
      first.cluster.controller.createTopic({ name: "b", numPartitions: 1 });
    } catch {
      acknowledged = false;
    }
    first.cluster.controller.createTopic({ name: "c", numPartitions: 1 });
    first.close();

    const second = startPersistentCluster(options(dir));
    try {
      const names = [...second.cluster.controller.image.topicsById.values()].map((t) => t.name).sort();
      expect(names).toEqual(acknowledged ? ["a", "b", "c"] : ["a", "c"]);
    } finally {
      second.close();
    }
  });

  it("a kill -9 between the records of one controller batch leaves none of it (KRaft's atomic batches)", () => {
    const dir = tempDir("cm-meta-batch");
    const first = startPersistentCluster(options(dir));
    first.cluster.controller.createTopic({ name: "t", numPartitions: 3 });
    first.close();
    const file = path.join(dir, METADATA_LOG_FILE);
    const text = fs.readFileSync(file, "utf8");
    // Every prefix of whole lines is a state a kill -9 can leave (each line is written and fsynced
    // before the next), and so is any prefix of bytes of one write.
    const lines = text.split("\n").slice(0, -1);
    const topicLine = lines.findIndex((l) => l.includes('"type":"Topic"'));
    expect(topicLine).toBeGreaterThanOrEqual(0);
    for (let kept = topicLine + 1; kept < lines.length; kept++) {
      const crashed = tempDir("cm-meta-batch-crash");
      for (const name of fs.readdirSync(dir)) {
        if (name === "lock" || name.endsWith(".lock")) continue;
        fs.cpSync(path.join(dir, name), path.join(crashed, name), { recursive: true });
      }
      fs.writeFileSync(
        path.join(crashed, METADATA_LOG_FILE),
        lines
          .slice(0, kept)
          .map((l) => `${l}\n`)
          .join(""),
      );
      const again = startPersistentCluster(options(crashed));
      try {
        const t = again.cluster.controller.image.topic("t");
        // createTopic never returned: the topic is either not there or whole, never 3 partitions short.
        expect(t === undefined || t.partitions.length === 3, `crash after line ${kept}`).toBe(true);
      } finally {
        again.close();
      }
    }
  });
});
