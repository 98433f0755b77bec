import { afterEach, describe, expect, it } from "vitest";
import type { FailoverPreviewRow } from "../src/admin/failover-preview";
import {
  addTopicsWhenReady,
  createTopic,
  type EngineCluster,
  overrideSourceMethod,
  produce,
  twoEngineClusters,
} from "./engine-helpers";

// Each scenario takes the preview, runs the failover (`removeTopics`) right after with nothing in between,
// and compares what the preview said with what the failover wrote.

const closers: (() => void)[] = [];
afterEach(() => {
  for (const c of closers.splice(0)) c();
});

const leaderLog = (c: EngineCluster, topic: string, partition: number) =>
  c.cluster.leaderFor(topic, partition).replica(topic, partition)!.log;

/** The LME in `__mirror_state`, the leader epoch and the producers of the ABORT markers after the failover. */
function failoverOutcome(dest: EngineCluster) {
  const view = dest.mirroring.coordinators.describe("m")[0]!;
  const aborts = [...leaderLog(dest, "payments", 0).batches()].filter(
    (b) => b.isControl && b.controlType === 0,
  );
  return {
    lastMirrorEpoch: view.lastMirrorEpoch,
    leaderEpoch: dest.cluster.controller.image.partition("payments", 0)!.leaderEpoch,
    aborted: aborts.map((b) => b.producerId),
  };
}

const predicted = (row: FailoverPreviewRow) => ({
  lastMirrorEpoch: row.lastMirrorEpoch,
  leaderEpoch: row.leaderEpochAfterBump,
  aborted: row.openTransactions.map((t) => t.producerId),
});

async function failOver(dest: EngineCluster): Promise<void> {
  await dest.mirroring.admin.removeTopics("m", "payments");
  await dest.mirroring.whenState("m", "STOPPED", { timeoutMs: 30_000 });
}

/** The preview's rows, taken right before the failover they preview. */
async function previewThenFailOver(dest: EngineCluster): Promise<FailoverPreviewRow[]> {
  const rows = await dest.mirroring.admin.previewFailover("m", "payments");
  await failOver(dest);
  return rows;
}

/**
 * `payments` (`partitions` partitions, `records` on partition 0) on the source, `beforeMirror` run, then
 * mirrored by `m` on the destination until caught up.
 */
async function mirroredPayments(
  options: {
    partitions?: number;
    records?: number;
    replicationFactor?: number;
    beforeMirror?: (source: EngineCluster) => Promise<void>;
  } = {},
) {
  const e = twoEngineClusters();
  closers.push(e.close);
  const { source, dest } = e;
  await createTopic(source, "payments", options.partitions ?? 1);
  await produce(source, "payments", 0, options.records ?? 5);
  await options.beforeMirror?.(source);
  await dest.mirroring.admin.createMirror("m", { "bootstrap.servers": source.bootstrap });
  const replicationFactor = options.replicationFactor;
  await addTopicsWhenReady(dest, "m", "payments", replicationFactor ? { replicationFactor } : undefined);
  await dest.mirroring.whenCaughtUp("m", { timeoutMs: 30_000 });
  return e;
}

/**
 * Fails back onto the source (its mirror `back` of the destination, until caught up) and returns, per
 * partition, the offset where the source's log was cut (its first batch that changed) and its log end before.
 */
async function failBackCuts(source: EngineCluster, dest: EngineCluster, partitions: number[]) {
  const before = partitions.map((p) => {
    const log = leaderLog(source, "payments", p);
    return {
      end: log.logEndOffset,
      batches: new Map([...log.batches()].map((b) => [b.baseOffset, b.buffer.toString("hex")])),
    };
  });
  await source.mirroring.admin.createMirror("back", { "bootstrap.servers": dest.bootstrap });
  await addTopicsWhenReady(source, "back", "payments");
  await source.mirroring.whenCaughtUp("back", { timeoutMs: 30_000 });
  return partitions.map((p, i) => {
    const { end, batches } = before[i]!;
    const cut = [...leaderLog(source, "payments", p).batches()].find(
      (b) => batches.get(b.baseOffset) !== b.buffer.toString("hex"),
    )!.baseOffset;
    return { cut, end };
  });
}

/**
 * `payments` (5 records on the source) mirrored and failed over, `localRecords` written on the destination
 * then, and added back while the source never answers the LME lookup: the re-add waits in PREPARING, its
 * log still the topic's own (the mirrored records, the failover's PID reset, the local writes).
 */
async function readdWaitingInPreparing(localWrites: (dest: EngineCluster) => Promise<void>) {
  let sourceAnswers = true;
  const e = twoEngineClusters({
    wrapSources: overrideSourceMethod("source:9092", "lastMirrorEpoch", (real, ...args) =>
      sourceAnswers
        ? (real.lastMirrorEpoch as (...a: unknown[]) => unknown).apply(real, args)
        : new Promise(() => {}),
    ),
  });
  closers.push(e.close);
  const { source, dest } = e;
  await createTopic(source, "payments", 1);
  await produce(source, "payments", 0, 5);
  await dest.mirroring.admin.createMirror("m", { "bootstrap.servers": source.bootstrap });
  await addTopicsWhenReady(dest, "m", "payments");
  await dest.mirroring.whenCaughtUp("m", { timeoutMs: 30_000 });
  await failOver(dest);
  await localWrites(dest);
  sourceAnswers = false;
  await dest.mirroring.admin.addTopics("m", "payments", { truncateLocalWrites: true });
  await dest.mirroring.whenState("m", "PREPARING", { timeoutMs: 30_000 });
  return e;
}

describe("MirrorAdmin.previewFailover says what the failover then does", () => {
  it("a FAILED partition whose log is a copy of the source: the LME is the log's latest epoch, not -1", async () => {
    let producer: ReturnType<EngineCluster["kafka"]["producer"]> | undefined;
    const { dest } = await mirroredPayments({
      beforeMirror: async (source) => {
        producer = source.kafka.producer({ transactionalId: "tx-open", transactionTimeout: 900_000 });
        await producer.connect();
        const txn = await producer.transaction();
        await txn.send({ topic: "payments", messages: [{ key: "a", value: "open", partition: 0 }] });
      },
    });
    const key = dest.mirroring.coordinators.describe("m")[0]!.key;
    await dest.mirroring.coordinators.command(key, {
      type: "FAIL",
      message: "a corrupt batch",
      retryable: false,
      random: 0.5,
    });
    await dest.mirroring.whenState("m", "FAILED", { timeoutMs: 30_000 });

    const [row] = await previewThenFailOver(dest);
    const outcome = failoverOutcome(dest);
    expect(outcome.lastMirrorEpoch).toBe(0);
    expect(outcome.aborted).toEqual([producer!.producerId()!.producerId]);
    expect(predicted(row!)).toEqual(outcome);
    await producer!.disconnect();
  }, 60_000);

  it("a re-add waiting in PREPARING over a live local transaction: the failover leaves it open, so does the preview", async () => {
    let producer: ReturnType<EngineCluster["kafka"]["producer"]> | undefined;
    const { dest } = await readdWaitingInPreparing(async (d) => {
      producer = d.kafka.producer({ transactionalId: "local-tx", transactionTimeout: 900_000 });
      await producer.connect();
      const txn = await producer.transaction();
      await txn.send({ topic: "payments", messages: [{ key: "a", value: "local", partition: 0 }] });
    });

    const [row] = await previewThenFailOver(dest);
    const outcome = failoverOutcome(dest);
    expect(outcome.aborted).toEqual([]);
    expect(leaderLog(dest, "payments", 0).ongoingTransactions().length).toBe(1);
    expect(predicted(row!)).toEqual(outcome);
    await producer!.disconnect();
  }, 60_000);

  it("a re-add waiting in PREPARING over local writes: a failback cuts at the end of the LME's epoch, not at the log end", async () => {
    const { source, dest } = await readdWaitingInPreparing((d) => produce(d, "payments", 0, 1));
    await produce(source, "payments", 0, 3); // the old primary's writes since: offsets 5..7

    const [row] = await previewThenFailOver(dest);
    // The failback onto the source: it cuts its log where it diverges from this one.
    const [cut] = await failBackCuts(source, dest, [0]);
    expect(cut!.cut).toBe(5n);
    expect(row!.failbackTruncation).toEqual({ fromOffset: cut!.cut, records: cut!.end - cut!.cut });
  }, 60_000);

  it("a PAUSED partition whose leader was elected again meanwhile: the bump is 10 above the epoch the partition last saw", async () => {
    const { dest } = await mirroredPayments();
    await dest.mirroring.admin.pauseTopics("m", "payments");
    await dest.mirroring.whenState("m", "PAUSED", { timeoutMs: 30_000 });
    // No fetcher runs while PAUSED: the partition does not see the election this stop causes.
    const image = dest.cluster.controller.image;
    const epoch = image.partition("payments", 0)!.leaderEpoch;
    dest.cluster.stopBroker(image.partition("payments", 0)!.leader);
    expect(image.partition("payments", 0)!.leaderEpoch).toBe(epoch + 1);

    const [row] = await previewThenFailOver(dest);
    const outcome = failoverOutcome(dest);
    expect(outcome.leaderEpoch).toBe(epoch + 10);
    expect(predicted(row!)).toEqual(outcome);
  }, 60_000);

  it("a partition without a running leader here: unknown destination offset, and the failover waits for a leader", async () => {
    // One replica, so stopping its broker leaves the partition without a leader (the coordinators move).
    const { dest } = await mirroredPayments({ replicationFactor: 1 });
    dest.cluster.stopBroker(dest.cluster.controller.image.partition("payments", 0)!.leader);
    expect(dest.cluster.controller.image.partition("payments", 0)!.leader).toBe(-1);

    const [row] = await dest.mirroring.admin.previewFailover("m", "payments");
    expect([row!.destinationOffset, row!.lag, row!.failbackTruncation]).toEqual([null, null, null]);
    await dest.mirroring.admin.removeTopics("m", "payments");
    await dest.mirroring.whenState("m", "FAILED", { timeoutMs: 30_000 });
    expect(dest.mirroring.coordinators.describe("m")[0]).toMatchObject({
      previousState: "STOPPING",
      errorMessage: expect.stringContaining("has no leader on the destination"),
    });
  }, 60_000);

  it("two partitions with committed, aborted and open transactions and lag: every field, up to what a failback cuts", async () => {
    type Producer = ReturnType<EngineCluster["kafka"]["producer"]>;
    let producers: Producer[] = [];
    let o: Awaited<ReturnType<Producer["transaction"]>> | undefined;
    const { source, dest } = await mirroredPayments({
      partitions: 2,
      records: 3,
      beforeMirror: async (source) => {
        await produce(source, "payments", 1, 4);
        const producer = async (id: string) => {
          const p = source.kafka.producer({ transactionalId: id, transactionTimeout: 900_000 });
          await p.connect();
          return p;
        };
        producers = [await producer("c"), await producer("a"), await producer("o")];
        const [committed, aborted, open] = producers as [Producer, Producer, Producer];
        const both = (v: string) => [0, 1].map((partition) => ({ key: v, value: v, partition }));
        const c = await committed.transaction();
        await c.send({ topic: "payments", messages: both("c") });
        await c.commit();
        const a = await aborted.transaction();
        await a.send({ topic: "payments", messages: both("a") });
        await a.abort();
        o = await open.transaction();
        await o.send({ topic: "payments", messages: both("o") });
      },
    });
    await dest.mirroring.admin.pauseTopics("m", "payments");
    await dest.mirroring.whenState("m", "PAUSED", { timeoutMs: 30_000 });
    await o!.commit(); // its COMMIT markers are not mirrored: the failover aborts it here
    await produce(source, "payments", 1, 2);

    const rows = await previewThenFailOver(dest);
    const views = dest.mirroring.coordinators.describe("m");
    for (const row of rows) {
      const p = row.partition;
      const aborts = [...leaderLog(dest, "payments", p).batches()].filter(
        (b) => b.isControl && b.controlType === 0 && b.baseOffset >= row.destinationOffset!,
      );
      expect(predicted(row)).toEqual({
        lastMirrorEpoch: views.find((v) => v.key.partition === p)!.lastMirrorEpoch,
        leaderEpoch: dest.cluster.controller.image.partition("payments", p)!.leaderEpoch,
        aborted: aborts.map((b) => b.producerId),
      });
      expect(row.openTransactions.map((t) => t.producerId)).toEqual([producers[2]!.producerId()!.producerId]);
    }

    // The failback onto the source: each partition's log is cut where it diverges from the copy here.
    const cuts = await failBackCuts(
      source,
      dest,
      rows.map((r) => r.partition),
    );
    rows.forEach((row, i) => {
      const { cut, end } = cuts[i]!;
      expect(row.failbackTruncation).toEqual({ fromOffset: cut, records: end - cut });
    });
    for (const p of producers) await p.disconnect();
  }, 60_000);
});
