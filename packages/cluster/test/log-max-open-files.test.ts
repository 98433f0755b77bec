import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { decodeRecords } from "@cluster-mirror/protocol";
import { afterEach, describe, expect, it } from "vitest";
import { batch, batchesOf, testCluster } from "./helpers";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "cluster-mirror-fds-"));
  dirs.push(d);
  return d;
}

/** Descriptors this process has open (Linux). */
function openFds(): number {
  return fs.readdirSync("/proc/self/fd").length;
}

describe("logMaxOpenFiles (log.max.open.files)", () => {
  it("hosts more partitions than the cap, with at most the cap of segment files open", async () => {
    const dataDir = tempDir();
    const before = openFds();
    const { cluster, settle } = testCluster({ dataDir, fsync: false, brokers: 1, logMaxOpenFiles: 4 });
    cluster.controller.createTopic({ name: "t", numPartitions: 40, replicationFactor: 1 });
    settle();
    const broker = cluster.broker(0)!;
    for (let p = 0; p < 40; p++) {
      await broker.produce({ topic: "t", partition: p, batch: batch([`v${p}`]), acks: 1 });
      expect(openFds() - before).toBeLessThanOrEqual(4);
    }
    cluster.stopBroker(0);
    expect(openFds()).toBe(before);
    cluster.startBroker(0);
    settle(1000);
    const values = Array.from({ length: 40 }, (_, p) =>
      batchesOf(cluster, 0, "t", p).flatMap((b) => decodeRecords(b).map((r) => r.value?.toString())),
    );
    expect(values).toEqual(Array.from({ length: 40 }, (_, p) => [`v${p}`]));
    expect(openFds() - before).toBeLessThanOrEqual(4);
    cluster.close();
  });

  it("refuses a cap below 1 with INVALID_CONFIG before taking the data dir", () => {
    const dataDir = tempDir();
    expect(() => testCluster({ dataDir, logMaxOpenFiles: 0 })).toThrow(
      expect.objectContaining({ errorName: "INVALID_CONFIG" }),
    );
    // Nothing was locked: a cluster with a valid cap starts on the same dir.
    const { cluster } = testCluster({ dataDir, fsync: false, brokers: 1 });
    cluster.close();
  });
});
