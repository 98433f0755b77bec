import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type ClusterLogger, KafkaCluster, ManualClock, ManualScheduler, SeededRandom } from "../src/index";
import { batch, batchesOf } from "./helpers";

const dirs: string[] = [];
const open: KafkaCluster[] = [];
afterEach(() => {
  for (const c of open.splice(0)) {
    for (const id of c.runningBrokers()) c.crashBroker(id);
    c.close();
  }
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

describe("a replica whose log cannot be opened on a real disk (full or failing)", () => {
  it("is opened once it can be: a leader that could not open its log leads after, with no metadata record", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "open-log-failures-"));
    dirs.push(dataDir);
    const warnings: { fields: Record<string, unknown>; message: string }[] = [];
    const logger: ClusterLogger = { warn: (fields, message) => warnings.push({ fields, message }) };
    const clock = new ManualClock(1_700_000_000_000);
    const scheduler = new ManualScheduler(clock);
    const cluster = KafkaCluster.start({
      brokers: 2,
      dataDir,
      fsync: false,
      clock,
      scheduler,
      random: new SeededRandom(7),
      logger,
    });
    open.push(cluster);
    // Where broker 1 would create the partition's directory: a file, so the directory cannot be made
    // (as mkdir or the partition.metadata write fails with ENOSPC on a full disk).
    const blocked = path.join(dataDir, "broker-1", "t-0");
    fs.writeFileSync(blocked, "");
    cluster.controller.createTopic({ name: "t", replicaAssignment: [[1, 0]] });
    scheduler.run(60_000);
    expect(cluster.controller.image.partition("t", 0)!.leader).toBe(1);
    expect(cluster.broker(1)!.replica("t", 0)).toBeUndefined();
    expect(warnings.filter((w) => w.fields.event === "metadata.apply_failed")).toEqual([]);
    expect(warnings.filter((w) => w.fields.event === "storage.write_failed")).toHaveLength(1);
    // The disk has room again: the broker opens the log and leads, without a new metadata record.
    fs.rmSync(blocked);
    scheduler.run(1000);
    expect(cluster.broker(1)!.replica("t", 0)?.isLeader).toBe(true);
    await cluster.broker(1)!.produce({ topic: "t", partition: 0, batch: batch(["x"]), acks: 1 });
    scheduler.run(1000);
    expect(batchesOf(cluster, 0, "t")).toHaveLength(1);
  });
});
