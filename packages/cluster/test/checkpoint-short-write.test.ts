import type * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { FileDataDir } from "../src/data-dir";

/**
 * write(2) may write fewer bytes than asked and return how many it wrote; fs.writeSync passes that count on
 * and does not loop. Here the first write to each checkpoint's temp file is short (half of it).
 */
const short = vi.hoisted(() => ({ on: false, fds: new Set<number>() }));

vi.mock("node:fs", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:fs")>();
  const openSync = (file: fs.PathLike, flags?: fs.OpenMode, mode?: fs.Mode) => {
    const fd = real.openSync(file, flags ?? "r", mode);
    if (short.on && String(file).endsWith(".tmp")) short.fds.add(fd);
    return fd;
  };
  // biome-ignore lint/suspicious/noExplicitAny: fs.writeSync's overloads
  const writeSync = (fd: number, data: any, ...rest: any[]) => {
    if (short.fds.delete(fd)) {
      const bytes = Buffer.from(data);
      return real.writeSync(fd, bytes, 0, Math.ceil(bytes.length / 2));
    }
    return (real.writeSync as (...a: unknown[]) => number)(fd, data, ...rest);
  };
  const mocked = { ...real, openSync, writeSync };
  return { ...mocked, default: mocked };
});

afterEach(() => {
  short.on = false;
  short.fds.clear();
});

describe("a broker checkpoint and a short write", () => {
  it("a checkpoint stored without an error is stored whole", async () => {
    const real = await vi.importActual<typeof import("node:fs")>("node:fs");
    const dir = real.mkdtempSync(path.join(os.tmpdir(), "cm-checkpoint-short-"));
    try {
      const dataDir = new FileDataDir(path.join(dir, "broker-0"), { fsync: false });
      const text = `0\n2\n${"a".repeat(40)}:0 17\n${"b".repeat(40)}:3 42\n`;
      short.on = true;
      dataDir.writeCheckpoint("replica-truncation-checkpoint", text);
      short.on = false;
      expect(short.fds.size).toBe(0);
      expect(dataDir.readCheckpoint("replica-truncation-checkpoint")).toBe(text);
    } finally {
      real.rmSync(dir, { recursive: true, force: true });
    }
  });
});
