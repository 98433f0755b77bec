import type * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { startPersistentCluster } from "../src/persistence/persistent-cluster";
import { readTransactionState, TRANSACTION_STATE_FILE } from "../src/persistence/transaction-state-file";
import { tempDir } from "./cli-harness";
import { persistentOptions } from "./persistent-options";

/**
 * write(2) may write fewer bytes than asked (a disk filling up, RLIMIT_FSIZE, an interrupted write) and
 * return how many it wrote; fs.writeSync passes that count on and does not loop. Here the first write of
 * each temp file of transactions.json is short (half of it); the rest of node:fs is real.
 */
const short = vi.hoisted(() => ({ on: false, fds: new Set<number>() }));

vi.mock("node:fs", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:fs")>();
  const openSync = (file: fs.PathLike, flags?: fs.OpenMode, mode?: fs.Mode) => {
    const fd = real.openSync(file, flags ?? "r", mode);
    if (short.on && String(file).endsWith(".json.tmp")) short.fds.add(fd);
    return fd;
  };
  // biome-ignore lint/suspicious/noExplicitAny: fs.writeSync's overloads
  const writeSync = (fd: number, data: any, ...rest: any[]) => {
    if (short.fds.delete(fd)) {
      const bytes = typeof data === "string" ? Buffer.from(data) : Buffer.from(data);
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

describe("transactions.json and a short write", () => {
  it("a store that returned normally left a whole file: the node starts again with the state it acknowledged", () => {
    const dir = tempDir("cm-txn-short-write");
    const node = startPersistentCluster(persistentOptions(dir));
    let pid: { producerId: bigint; producerEpoch: number };
    try {
      short.on = true;
      // Either refused (nothing stored, retriable) or answered: then it must be on disk, whole.
      pid = node.cluster.transactions.initProducerId({ transactionalId: "tx" });
    } catch (error) {
      expect(error).toMatchObject({ errorName: "COORDINATOR_NOT_AVAILABLE" });
      return;
    } finally {
      short.on = false;
      node.close();
    }
    const file = path.join(dir, TRANSACTION_STATE_FILE);
    expect(readTransactionState(file).transactions).toEqual([
      expect.objectContaining({ transactionalId: "tx", producerId: pid.producerId }),
    ]);
  });
});
