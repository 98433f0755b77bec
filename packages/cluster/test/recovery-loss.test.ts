import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { decodeRecords, recordBatches } from "@cluster-mirror/protocol";
import { afterEach, describe, expect, it } from "vitest";
import {
  type ClusterLogger,
  KafkaCluster,
  ManualClock,
  ManualScheduler,
  type MetadataRecord,
  SeededRandom,
} from "../src/index";
import { batch, testCluster } from "./helpers";

const dirs: string[] = [];
const open: KafkaCluster[] = [];
afterEach(() => {
  for (const c of open.splice(0)) {
    for (const id of c.runningBrokers()) c.crashBroker(id);
    c.close();
  }
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** A logger that keeps what it was told. */
function capturingLogger() {
  const lines: { fields: Record<string, unknown>; message: string }[] = [];
  const logger: ClusterLogger = { warn: (fields, message) => lines.push({ fields, message }) };
  return { logger, lines };
}

/**
 * A cluster on a real temp dir, as a node runs it: `restart()` is a kill -9 of the whole process and a new
 * start on the same files, the controller replaying the metadata log it had (no fencing was recorded).
 */
function fileCluster(
  dataDir: string,
  logger: ClusterLogger,
  records: readonly MetadataRecord[] = [],
  startBrokers: readonly number[] = [0, 1, 2],
) {
  const clock = new ManualClock(1_700_000_000_000);
  const scheduler = new ManualScheduler(clock);
  const cluster = new KafkaCluster({
    brokers: 3,
    dataDir,
    fsync: false,
    clock,
    scheduler,
    random: new SeededRandom(42),
    logger,
  });
  open.push(cluster);
  if (records.length > 0) cluster.controller.replay(records);
  for (const id of startBrokers) cluster.startBroker(id);
  const settle = (ms = 0) => scheduler.run(ms);
  return { cluster, settle };
}

/** A fresh temp data dir (removed after the test) with a cluster started on it and topic `t` (RF 3) created. */
function firstStart(logger: ClusterLogger = capturingLogger().logger) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "cluster-mirror-loss-"));
  dirs.push(dataDir);
  const first = fileCluster(dataDir, logger);
  first.cluster.controller.createTopic({ name: "t", replicaAssignment: [[0, 1, 2]] });
  first.settle();
  return { dataDir, ...first };
}

/**
 * The process dies: the brokers still running crash (0, 1, 2 in that order), the data dir lock goes with
 * the process. Returns the metadata records its controller had, for the next start to replay.
 */
function processDies(cluster: KafkaCluster): MetadataRecord[] {
  const records = cluster.controller.metadataLog().map((e) => e.record);
  for (const id of [0, 1, 2]) if (cluster.runningBrokers().includes(id)) cluster.crashBroker(id);
  cluster.close();
  return records;
}

/** Every record value of a replica's log, in offset order, with its offset. */
function valuesOn(cluster: KafkaCluster, brokerId: number, topic = "t"): string[] {
  const log = cluster.broker(brokerId)!.replica(topic, 0)!.log;
  return [...log.batches()].flatMap((b) =>
    decodeRecords(b).map((r) => `${b.baseOffset + BigInt(r.offsetDelta)}:${r.value?.toString()}`),
  );
}

/** Flips one byte of the first batch's records in a replica's first segment (a CRC mismatch on recovery). */
function flipByte(dataDir: string, brokerId: number, at = 70): number {
  const file = path.join(dataDir, `broker-${brokerId}`, "t-0", "00000000000000000000.log");
  const bytes = fs.readFileSync(file);
  bytes[at] = bytes[at]! ^ 0xff;
  fs.writeFileSync(file, bytes);
  return bytes.length;
}

async function produceAll(cluster: KafkaCluster, settle: (ms?: number) => void, batches: number) {
  const acked: string[] = [];
  for (let i = 0; i < batches; i++) {
    const values = Array.from({ length: 10 }, (_, j) => `v${i * 10 + j}`);
    const p = cluster.leaderFor("t", 0).produce({ topic: "t", partition: 0, batch: batch(values), acks: -1 });
    settle();
    const r = await p;
    for (const [j, v] of values.entries()) acked.push(`${r.baseOffset + BigInt(j)}:${v}`);
  }
  return acked;
}

describe("one corrupt replica must not destroy the healthy copies (issue 11, item 6)", () => {
  it("a leader whose segment is corrupt comes back as an out-of-sync follower and fetches everything back", async () => {
    const { dataDir, ...first } = firstStart();
    const acked = await produceAll(first.cluster, first.settle, 20);
    expect(acked).toHaveLength(200);
    first.settle(6000); // high watermarks checkpointed
    expect(first.cluster.leaderFor("t", 0).brokerId).toBe(0);
    const records = processDies(first.cluster);
    const size = flipByte(dataDir, 0);

    const { logger, lines } = capturingLogger();
    const second = fileCluster(dataDir, logger, records);
    // Logged: which partition, from which offset, how many bytes.
    const recovery = lines.filter((l) => l.fields.event === "log.recovery_truncated");
    expect(recovery).toHaveLength(1);
    expect(recovery[0]!.fields).toMatchObject({
      brokerId: 0,
      partition: "t-0",
      offset: "0",
      bytesDropped: size,
    });
    expect(recovery[0]!.message).toContain("t-0");
    // It leads no more and is out of the ISR; a replica with the full log leads.
    const meta = second.cluster.controller.image.partition("t", 0)!;
    expect(meta.leader).not.toBe(0);
    expect(meta.isr).not.toContain(0);
    second.settle(1000);
    for (const id of [1, 2]) expect(valuesOn(second.cluster, id)).toEqual(acked);
    // It fetches everything back and rejoins the ISR.
    expect(valuesOn(second.cluster, 0)).toEqual(acked);
    expect(second.cluster.controller.image.partition("t", 0)!.isr).toContain(0);
    expect(second.cluster.broker(0)!.replica("t", 0)!.recoveryLoss).toBeUndefined();
    // And the records are readable from the leader.
    const fetched = second.cluster.leaderFor("t", 0).fetch({
      topic: "t",
      partition: 0,
      fetchOffset: 0n,
      maxBytes: 1 << 22,
      isolationLevel: "read_committed",
    });
    expect(fetched.highWatermark).toBe(200n);
    expect(lines.filter((l) => l.fields.event === "replica.truncation_refused")).toEqual([]);
  });

  it("a leader whose segment lost its last writes whole (no torn bytes) does not make the followers drop them", async () => {
    const { dataDir, ...first } = firstStart();
    const acked = await produceAll(first.cluster, first.settle, 20);
    first.settle(6000); // high watermarks checkpointed: 200 on every broker
    expect(first.cluster.leaderFor("t", 0).brokerId).toBe(0);
    const records = processDies(first.cluster);
    // A power loss without fsync: the leader's segment file ends where its last written-back append ended,
    // a batch boundary, so recovery finds nothing torn; the last 10 batches (100 records) are gone.
    const file = path.join(dataDir, "broker-0", "t-0", "00000000000000000000.log");
    const sizes = [...recordBatches(fs.readFileSync(file))].map((b) => b.sizeInBytes);
    fs.truncateSync(
      file,
      sizes.slice(0, 10).reduce((sum, size) => sum + size, 0),
    );

    const { logger, lines } = capturingLogger();
    const second = fileCluster(dataDir, logger, records);
    const recovery = lines.filter((l) => l.fields.event === "log.recovery_truncated");
    expect(recovery.map((l) => l.fields)).toEqual([
      expect.objectContaining({
        brokerId: 0,
        partition: "t-0",
        offset: "100",
        checkpointedHighWatermark: "200",
      }),
    ]);
    expect(recovery[0]!.message).toContain("ends at offset 100, below its checkpointed high watermark 200");
    expect(second.cluster.broker(0)!.replica("t", 0)!.recoveryLoss).toBeDefined();
    // It leads no more and is out of the ISR; a replica with the full log leads.
    const meta = second.cluster.controller.image.partition("t", 0)!;
    expect(meta.leader).not.toBe(0);
    expect(meta.isr).not.toContain(0);
    second.settle(1000);
    // Every acknowledged record is kept, and the replica that lost them fetches them back.
    for (const id of [1, 2, 0]) expect(valuesOn(second.cluster, id)).toEqual(acked);
  });

  it("a topic deleted and created again after a restart is no loss, though the checkpoint named the old one", async () => {
    const { dataDir, ...first } = firstStart();
    await produceAll(first.cluster, first.settle, 5);
    first.settle(6000); // high watermarks checkpointed: 50
    const records = processDies(first.cluster);

    const { logger, lines } = capturingLogger();
    const second = fileCluster(dataDir, logger, records);
    second.cluster.controller.deleteTopic("t");
    second.settle();
    // Before any new checkpoint: the brokers still hold the 50 read at start for `t-0`.
    second.cluster.controller.createTopic({ name: "t", replicaAssignment: [[0, 1, 2]] });
    second.settle();
    expect(lines.filter((l) => l.fields.event === "log.recovery_truncated")).toEqual([]);
    for (const id of [0, 1, 2])
      expect(second.cluster.broker(id)!.replica("t", 0)!.recoveryLoss).toBeUndefined();
    const acked = await produceAll(second.cluster, second.settle, 1);
    second.settle(1000);
    for (const id of [0, 1, 2]) expect(valuesOn(second.cluster, id)).toEqual(acked);
  });

  it("a broker down while its topic was deleted and created again takes no loss from the old topic's checkpoint", async () => {
    const { logger, lines } = capturingLogger();
    const first = firstStart(logger);
    await produceAll(first.cluster, first.settle, 5);
    first.settle(6000); // high watermarks checkpointed: 50
    first.cluster.crashBroker(2);
    first.cluster.controller.deleteTopic("t");
    first.settle();
    first.cluster.controller.createTopic({ name: "t", replicaAssignment: [[0, 1, 2]] });
    first.settle();
    // Broker 2 comes back: its replay deletes the old t-0, then opens the new one, empty, under the name
    // its checkpoint gives 50 for. That 50 was the deleted topic's: nothing of the new one is missing.
    first.cluster.startBroker(2);
    first.settle(1000);
    expect(lines.filter((l) => l.fields.event === "log.recovery_truncated")).toEqual([]);
    expect(first.cluster.broker(2)!.replica("t", 0)!.recoveryLoss).toBeUndefined();
    const acked = await produceAll(first.cluster, first.settle, 1);
    first.settle(1000);
    for (const id of [0, 1, 2]) expect(valuesOn(first.cluster, id)).toEqual(acked);
  });

  it("a log cut below its high watermark on purpose (a mirror aligning it) is no loss after a crash right after the cut", async () => {
    const first = firstStart();
    const acked = await produceAll(first.cluster, first.settle, 5);
    first.settle(6000); // high watermarks checkpointed: 50
    // A mirror aligning the copy with its source cuts the leader's log at 20; the followers follow.
    first.cluster.leaderFor("t", 0).truncateTo("t", 0, 20n);
    first.settle(500);
    for (const id of [0, 1, 2]) expect(valuesOn(first.cluster, id)).toEqual(acked.slice(0, 20));
    // The process dies before the next periodic checkpoint (5 s): the file still said 50.
    const records = processDies(first.cluster);

    const { logger, lines } = capturingLogger();
    const second = fileCluster(first.dataDir, logger, records);
    expect(lines.filter((l) => l.fields.event === "log.recovery_truncated")).toEqual([]);
    for (const id of [0, 1, 2])
      expect(second.cluster.broker(id)!.replica("t", 0)!.recoveryLoss).toBeUndefined();
    expect(second.cluster.controller.image.partition("t", 0)!.isr).toHaveLength(3);
  });

  it("a last-ISR leader that lost data does not make out-of-sync followers drop acknowledged records", async () => {
    const { dataDir, ...first } = firstStart();
    const acked = await produceAll(first.cluster, first.settle, 5);
    first.settle(6000);
    // Followers 1 and 2 stop and leave the ISR; broker 0 is the last member, then it is killed too.
    first.cluster.crashBroker(1);
    first.cluster.crashBroker(2);
    expect(first.cluster.controller.image.partition("t", 0)!.isr).toEqual([0]);
    const records = processDies(first.cluster);
    flipByte(dataDir, 0);

    const { logger } = capturingLogger();
    const second = fileCluster(dataDir, logger, records);
    // Broker 0 is the only ISR member, but 1 and 2 left it only because they were fenced (eligible leader
    // replicas, KIP-966): the one fenced last (2) leads instead of the replica that lost data.
    const meta = second.cluster.controller.image.partition("t", 0)!;
    expect(meta.leader).toBe(2);
    expect(meta.isr).not.toContain(0);
    second.settle(2000);
    // The followers keep every acknowledged record, and broker 0 fetches them back.
    for (const id of [0, 1, 2]) expect(valuesOn(second.cluster, id)).toEqual(acked);
  });

  it("a node restart with the corrupt last ISR member started first keeps every acknowledged record", async () => {
    const { dataDir, ...first } = firstStart();
    const acked = await produceAll(first.cluster, first.settle, 5);
    // Every broker dies before the followers checkpoint their high watermarks; broker 0 goes last, so it
    // is the last ISR member, and its segment is the corrupt one.
    for (const id of [1, 2, 0]) first.cluster.crashBroker(id);
    expect(first.cluster.controller.image.partition("t", 0)).toMatchObject({ leader: -1, isr: [0] });
    const records = processDies(first.cluster);
    flipByte(dataDir, 0);

    const { logger, lines } = capturingLogger();
    const { cluster, settle } = fileCluster(dataDir, logger, records, []);
    // The corrupt replica alone: it must not lead while an eligible replica can come back.
    cluster.startBroker(0);
    settle(500);
    expect(lines.filter((l) => l.fields.event === "log.recovery_truncated")).toHaveLength(1);
    expect(cluster.controller.image.partition("t", 0)).toMatchObject({ leader: -1, isr: [] });
    // 1 comes back first, but 2 was fenced after it (it may hold what was committed after 1 left): wait.
    cluster.startBroker(1);
    expect(cluster.controller.image.partition("t", 0)!.leader).toBe(-1);
    cluster.startBroker(2);
    expect(cluster.controller.image.partition("t", 0)!.leader).toBe(2);
    settle(2000);
    for (const id of [1, 2, 0]) expect(valuesOn(cluster, id)).toEqual(acked);
    expect(cluster.controller.image.partition("t", 0)!.isr).toEqual([0, 1, 2]);
  });

  it("a replica's loss outlives the replay of an ISR it once left and rejoined (FC_SEED=12 soak)", async () => {
    const { dataDir, ...first } = firstStart();
    const acked = await produceAll(first.cluster, first.settle, 2);
    // Broker 0 leaves the ISR and rejoins it: the metadata log now holds a rejoin of broker 0.
    first.cluster.crashBroker(0);
    first.cluster.startBroker(0);
    first.settle(2000);
    expect(first.cluster.controller.image.partition("t", 0)!.isr).toContain(0);
    acked.push(...(await produceAll(first.cluster, first.settle, 3)));
    // Broker 0 goes last: the last ISR member, and its segment is the corrupt one.
    for (const id of [1, 2, 0]) first.cluster.crashBroker(id);
    expect(first.cluster.controller.image.partition("t", 0)).toMatchObject({ leader: -1, isr: [0] });
    const records = processDies(first.cluster);
    flipByte(dataDir, 0);

    const { logger } = capturingLogger();
    const { cluster, settle } = fileCluster(dataDir, logger, records, []);
    cluster.startBroker(0);
    settle(500);
    // Replaying the rejoin must not clear the loss this start found: it must not lead.
    expect(cluster.broker(0)!.replica("t", 0)!.recoveryLoss).toBeDefined();
    expect(cluster.controller.image.partition("t", 0)).toMatchObject({ leader: -1, isr: [] });
    cluster.startBroker(1);
    cluster.startBroker(2);
    settle(2000);
    for (const id of [1, 2, 0]) expect(valuesOn(cluster, id)).toEqual(acked);
  });

  it("followers without a checkpointed high watermark keep the records a lossy last-ISR leader lost", async () => {
    const { dataDir, ...first } = firstStart();
    const acked = await produceAll(first.cluster, first.settle, 5);
    // The leader shrinks the ISR to itself (lagging followers, not fenced ones: no eligible leader replica),
    // then the whole process dies before any high watermark checkpoint.
    const meta = first.cluster.controller.image.partition("t", 0)!;
    first.cluster.controller.alterPartition("t", 0, { leader: 0, leaderEpoch: meta.leaderEpoch, isr: [0] });
    const records = processDies(first.cluster);
    flipByte(dataDir, 0);

    const { logger, lines } = capturingLogger();
    const second = fileCluster(dataDir, logger, records);
    // Nothing is known to hold more than the last ISR member, so it leads (Kafka's rule)...
    expect(second.cluster.controller.image.partition("t", 0)!.leader).toBe(0);
    second.settle(2000);
    // ...but the followers, whose own high watermark is 0, keep what the leader's recovery cut.
    for (const id of [1, 2]) expect(valuesOn(second.cluster, id)).toEqual(acked);
    const refused = lines.filter((l) => l.fields.event === "replica.truncation_refused");
    expect(refused.map((l) => l.fields.brokerId).sort()).toEqual([1, 2]);
    expect(refused[0]!.fields).toMatchObject({ partition: "t-0", offset: "0" });
  });

  it("each replica stores its own bytes: damage to one follower's stored batch leaves the other copies intact", async () => {
    const { cluster, settle } = testCluster();
    cluster.controller.createTopic({ name: "t", replicaAssignment: [[0, 1, 2]] });
    settle();
    const p = cluster
      .leaderFor("t", 0)
      .produce({ topic: "t", partition: 0, batch: batch(["a", "b"]), acks: -1 });
    settle();
    await p;
    settle(1000);
    const stored = (id: number) => [...cluster.broker(id)!.replica("t", 0)!.log.batches()][0]!.buffer;
    const healthy = Buffer.from(stored(0));
    expect(stored(1)).toEqual(healthy);
    // The sim's corrupt segment: one byte of broker 1's stored batch flips in place.
    const damaged = stored(1);
    damaged[70] = damaged[70]! ^ 0xff;
    expect(stored(1)).not.toEqual(healthy);
    for (const id of [0, 2]) expect(stored(id)).toEqual(healthy);
  });

  it("the controller takes a replica that lost data out of the ISR, also when it hears of it after an outage", () => {
    const { cluster, settle } = testCluster();
    cluster.controller.createTopic({ name: "t", replicaAssignment: [[0, 1, 2]] });
    settle();
    const topicId = cluster.controller.image.topic("t")!.topicId;
    const c = cluster.controller;
    const epoch = c.image.partition("t", 0)!.leaderEpoch;
    c.setAvailable(false);
    c.registerBroker(0, null, [{ topicId, partition: 0 }]);
    expect(c.image.partition("t", 0)).toMatchObject({ leader: 0, isr: [0, 1, 2] });
    c.setAvailable(true);
    expect(c.image.partition("t", 0)).toMatchObject({ leader: 1, isr: [1, 2], leaderEpoch: epoch + 1 });
    // A follower that lost data just leaves the ISR; the leader stays.
    c.registerBroker(2, null, [{ topicId, partition: 0 }]);
    expect(c.image.partition("t", 0)).toMatchObject({ leader: 1, isr: [1], leaderEpoch: epoch + 1 });
    // The last ISR member stays: no replica is known to hold more.
    c.registerBroker(1, null, [{ topicId, partition: 0 }]);
    expect(c.image.partition("t", 0)).toMatchObject({ leader: 1, isr: [1] });
  });

  it("a last ISR member that lost data hands the lead to the eligible replica fenced last (it left the ISR last)", () => {
    const { cluster, settle } = testCluster();
    // Replica order puts broker 2 before broker 1, so an election in replica order would pick 2.
    cluster.controller.createTopic({ name: "t", replicaAssignment: [[0, 2, 1]] });
    settle();
    const topicId = cluster.controller.image.topic("t")!.topicId;
    const c = cluster.controller;
    // 2 is fenced first; writes committed after that may be on 0 and 1 only. Then 1, then the last member 0.
    c.fenceBroker(2);
    c.fenceBroker(1);
    c.fenceBroker(0);
    expect(c.image.partition("t", 0)).toMatchObject({ leader: -1, isr: [0], elr: [2, 1] });
    // 2 and 1 come back: the partition waits for its last ISR member.
    c.registerBroker(2);
    c.registerBroker(1);
    expect(c.image.partition("t", 0)!.leader).toBe(-1);
    // 0 returns without part of its log: 1, which left the ISR after 2, holds everything 2 holds and more.
    c.registerBroker(0, null, [{ topicId, partition: 0 }]);
    expect(c.image.partition("t", 0)).toMatchObject({ leader: 1, isr: [1] });
  });
});

describe("an eligible replica fenced while the ISR still met min.insync.replicas", () => {
  it("does not lead without what the ISR committed after it was fenced", async () => {
    const { cluster, settle } = testCluster();
    cluster.controller.createTopic({
      name: "t",
      replicaAssignment: [[0, 1, 2]],
      configs: { "min.insync.replicas": "2" },
    });
    settle();
    const topicId = cluster.controller.image.topic("t")!.topicId;
    // Broker 2 stops: the ISR [0, 1] still meets min.insync.replicas, and commits "a" without it.
    cluster.crashBroker(2);
    settle(100);
    const write = cluster.broker(0)!.produce({ topic: "t", partition: 0, batch: batch(["a"]), acks: -1 });
    settle(100);
    await write;
    // Broker 1 stops too (the ISR is broker 0 alone), then broker 0 comes back having lost its log.
    cluster.crashBroker(1);
    settle(100);
    const c = cluster.controller;
    c.fenceBroker(0);
    c.registerBroker(0, null, [{ topicId, partition: 0 }]);
    // Only broker 1 is eligible: broker 2 left while [0, 1] still met min.insync.replicas (KIP-966).
    expect(c.image.partition("t", 0)).toMatchObject({ leader: -1, isr: [], elr: [1] });
    // Broker 2 registers first: it must not lead, as it never had "a" (broker 1 has it).
    cluster.startBroker(2);
    expect(c.image.partition("t", 0)!.leader).not.toBe(2);
    // The partition waits for broker 1, which left the ISR last, and which then leads.
    cluster.startBroker(1);
    settle(100);
    expect(c.image.partition("t", 0)).toMatchObject({ leader: 1 });
  });

  it("a replica that leaves by lag while the ISR falls under min.insync.replicas is eligible; one fenced while it met it is not", async () => {
    const { cluster, settle } = testCluster();
    cluster.controller.createTopic({
      name: "t",
      replicaAssignment: [[0, 1, 2]],
      configs: { "min.insync.replicas": "2" },
    });
    settle();
    const topicId = cluster.controller.image.topic("t")!.topicId;
    const c = cluster.controller;
    // Broker 2 stops while [0, 1] still meets min.insync.replicas: the high watermark moves on without it.
    cluster.crashBroker(2);
    settle(100);
    const write = cluster.broker(0)!.produce({ topic: "t", partition: 0, batch: batch(["a"]), acks: -1 });
    settle(100);
    await write;
    expect(c.image.partition("t", 0)!.elr ?? []).toEqual([]);
    // The leader drops broker 1 by lag: the ISR falls under min.insync.replicas, the high watermark stops,
    // and broker 1, which has everything up to it, is eligible.
    const meta = c.image.partition("t", 0)!;
    c.alterPartition("t", 0, { leader: 0, leaderEpoch: meta.leaderEpoch, isr: [0] });
    expect(c.image.partition("t", 0)).toMatchObject({ isr: [0], elr: [1] });
    // Broker 0, the last ISR member, comes back without its log: broker 1 leads, not broker 2.
    c.fenceBroker(0);
    c.registerBroker(0, null, [{ topicId, partition: 0 }]);
    expect(c.image.partition("t", 0)).toMatchObject({ leader: 1, isr: [1] });
    // The ISR meets min.insync.replicas again once broker 0 rejoins: nobody is eligible any more.
    settle(2000);
    const after = c.image.partition("t", 0)!;
    expect([...after.isr].sort()).toEqual([0, 1]);
    expect(after.elr ?? []).toEqual([]);
  });

  it("an eligible replica fenced last that comes back without part of its log hands the wait to the one fenced before it", () => {
    const { cluster, settle } = testCluster();
    cluster.controller.createTopic({ name: "t", replicaAssignment: [[0, 2, 1]] });
    settle();
    const topicId = cluster.controller.image.topic("t")!.topicId;
    const c = cluster.controller;
    c.fenceBroker(2);
    c.fenceBroker(1);
    c.fenceBroker(0);
    c.registerBroker(2);
    c.registerBroker(0, null, [{ topicId, partition: 0 }]);
    // 1 (fenced last) is down: the partition waits for it, though 2 is live.
    expect(c.image.partition("t", 0)).toMatchObject({ leader: -1, isr: [], elr: [2, 1] });
    // 1 comes back having lost data too: 2, fenced before it, is the best copy left, and leads.
    c.registerBroker(1, null, [{ topicId, partition: 0 }]);
    expect(c.image.partition("t", 0)).toMatchObject({ leader: 2, isr: [2] });
  });
});
