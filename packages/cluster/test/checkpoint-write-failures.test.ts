import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type ClusterLogger, KafkaCluster, ManualClock, ManualScheduler, SeededRandom } from "../src/index";

const dirs: string[] = [];
const open: KafkaCluster[] = [];
afterEach(() => {
  for (const c of open.splice(0)) {
    for (const id of c.runningBrokers()) c.crashBroker(id);
    c.close();
  }
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function cluster(options: { dataDir?: string }) {
  const warnings: { fields: Record<string, unknown>; message: string }[] = [];
  const logger: ClusterLogger = { warn: (fields, message) => warnings.push({ fields, message }) };
  const clock = new ManualClock(1_700_000_000_000);
  const scheduler = new ManualScheduler(clock);
  const c = new KafkaCluster({
    brokers: 1,
    fsync: false,
    clock,
    scheduler,
    random: new SeededRandom(7),
    logger,
    ...options,
  });
  open.push(c);
  c.startBroker(0);
  return { cluster: c, warnings, run: (ms: number) => scheduler.run(ms) };
}

describe("a broker whose checkpoint writes fail (a full or failing disk)", () => {
  it("on a real disk: keeps running its scheduled tasks, warns once, and writes the checkpoint once it can", () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "checkpoint-failures-"));
    dirs.push(dataDir);
    const { cluster: c, warnings, run } = cluster({ dataDir });
    const checkpoint = path.join(dataDir, "broker-0", "replication-offset-checkpoint");
    // A directory where the checkpoint's temp file goes: every write of it fails, as on a broken disk.
    fs.rmSync(checkpoint, { force: true });
    fs.mkdirSync(`${checkpoint}.tmp`);
    expect(() => run(20_000)).not.toThrow();
    expect(fs.existsSync(checkpoint)).toBe(false);
    const failed = warnings.filter((w) => w.fields.event === "storage.write_failed");
    expect(failed).toHaveLength(1);
    expect(failed[0]!.message).toMatch(
      /^broker 0: the high watermark checkpoint failed: replication-offset-checkpoint write failed in .*broker-0: Error: EISDIR/,
    );
    fs.rmdirSync(`${checkpoint}.tmp`);
    run(5_000);
    expect(fs.existsSync(checkpoint)).toBe(true);
    // A clean shutdown checkpoints too, and stops even when that write fails.
    fs.rmSync(checkpoint);
    fs.mkdirSync(`${checkpoint}.tmp`);
    c.stopBroker(0);
    expect(c.runningBrokers()).toEqual([]);
  });

  it("in memory (setDiskFull): the same, and setDiskFull refuses a broker that does not exist or a real disk", () => {
    const { cluster: c, warnings, run } = cluster({});
    c.setDiskFull(0, true);
    expect(() => run(20_000)).not.toThrow();
    expect(warnings.filter((w) => w.fields.event === "storage.write_failed")).toHaveLength(1);
    c.setDiskFull(0, false);
    run(5_000);
    c.setDiskFull(0, true);
    run(5_000);
    // Reported again: the write succeeded in between.
    expect(warnings.filter((w) => w.fields.event === "storage.write_failed")).toHaveLength(2);
    expect(() => c.setDiskFull(3, true)).toThrow(/no broker 3 in this cluster \(brokers: 0\)/);
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "checkpoint-failures-"));
    dirs.push(dataDir);
    expect(() => cluster({ dataDir }).cluster.setDiskFull(0, true)).toThrow(
      /setDiskFull models a full disk only for logs kept in memory/,
    );
  });
});
