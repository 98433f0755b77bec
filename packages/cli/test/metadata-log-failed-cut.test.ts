import * as path from "node:path";
import { describe, expect, it, vi } from "vitest";

const faults = vi.hoisted(() => ({ tornWrite: false, failTruncate: false }));

vi.mock("node:fs", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:fs")>();
  const writeSync = (fd: number, buffer: never, ...rest: never[]) => {
    if (faults.tornWrite) {
      faults.tornWrite = false;
      // Half the batch reaches the file, then the disk fails (EIO).
      const bytes = buffer as unknown as Buffer;
      real.writeSync(fd, bytes, 0, Math.floor(bytes.length / 2));
      throw Object.assign(new Error("EIO: i/o error, write"), { code: "EIO" });
    }
    return (real.writeSync as (...a: unknown[]) => number)(fd, buffer, ...rest);
  };
  const ftruncateSync = (fd: number, len?: number) => {
    if (faults.failTruncate) {
      faults.failTruncate = false;
      throw Object.assign(new Error("EIO: i/o error, ftruncate"), { code: "EIO" });
    }
    return real.ftruncateSync(fd, len);
  };
  return { ...real, default: { ...real, writeSync, ftruncateSync }, writeSync, ftruncateSync };
});

const { MetadataLogWriter, readMetadataLog } = await import("../src/persistence/metadata-log-file");
const { tempDir } = await import("./cli-harness");

const entry = (offset: number) => ({
  offset,
  record: { type: "ProducerIds" as const, nextProducerId: BigInt(1000 * (offset + 1)) },
});

describe("metadata log writer: a failed batch whose cut fails too", () => {
  it("takes no later batch after the failed one's bytes: the log still reads back after a restart", () => {
    const file = path.join(tempDir("cm-meta-cut"), "metadata.log");
    const writer = new MetadataLogWriter(file, false);
    writer.appendBatch([entry(0)]);
    // The next batch (offsets 1 and 2) is torn by a failing disk, and cutting it back fails as well.
    faults.tornWrite = true;
    faults.failTruncate = true;
    expect(() => writer.appendBatch([entry(1), entry(2)])).toThrow(/EIO/);
    // The controller did not take the batch: its next one has the same offsets. It must not land after
    // the torn bytes (the file would then hold a corrupt line, or offsets 1 and 1, and never load again).
    try {
      writer.appendBatch([entry(1)]);
    } catch {
      // Refusing it is fine: nothing the controller decides after a failed cut is lost (it was not taken).
    }
    writer.close();

    const records = readMetadataLog(file);
    expect(records.length === 1 || records.length === 2).toBe(true);
    expect(records[0]).toEqual(entry(0).record);
  });
});
