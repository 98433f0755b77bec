import { describe, expect, it } from "vitest";
import { leaderBatches, ordersOn, topology } from "./helpers";

type Topology = ReturnType<typeof topology>;
type Node = ReturnType<Topology["node"]>;

/** `dst` mirrors `orders` from `src` (registered as `<src>:9092`) under `mirror`, until caught up. */
/**
 * These tests put records on the copy that its source no longer has (the source trims its log start) to
 * see that no truncation takes them: the copy must not follow the source's log start for that.
 */
const LOG_START_SYNC = "log.start.offset.sync.enable";

async function mirrorOrders(
  t: Topology,
  dst: Node,
  mirror: string,
  src: string,
  configs: Record<string, string> = {},
): Promise<void> {
  await t.run(dst.mirroring.admin.createMirror(mirror, { "bootstrap.servers": `${src}:9092`, ...configs }));
  await t.run(dst.mirroring.admin.addTopics(mirror, "orders"));
  await t.until(async () => {
    const rows = await dst.mirroring.admin.describe(mirror);
    return rows.length === 1 && rows.every((r) => r.state === "MIRRORING" && r.lag === 0n);
  }, `${mirror} caught up`);
}

async function stateOf(node: Node, mirror: string) {
  const [row] = await node.mirroring.admin.describe(mirror);
  return row;
}

/** The coordinator's committed view (state epoch, previous state) of the mirror's one partition. */
function viewOf(node: Node, mirror: string) {
  const [view] = node.mirroring.coordinators.describe(mirror);
  if (view === undefined) throw new Error(`no partition of mirror ${mirror}`);
  return view;
}

const logOf = (node: Node) => node.cluster.leaderFor("orders", 0).replica("orders", 0)!;
/** The batches of `orders-0` on the node's leader from its log start offset on (retention drops those below). */
const hexes = (node: Node) => {
  const start = logOf(node).log.logStartOffset;
  return leaderBatches(node.cluster, "orders", 0)
    .filter((b) => b.offset >= start)
    .map((b) => `${b.offset}:${b.hex}`);
};

describe("Critical: a FAILED retry does not wipe the copy (issue 11, item 3)", () => {
  it("a controller outage during a proactive bump: FAILED, then the retry resumes at the log end, keeping every record", async () => {
    const t = topology(["a", "b"]);
    const a = t.node("a");
    const b = t.node("b");
    const producer = await ordersOn(t, a, 10);
    // B keeps what the source's retention drops (it does not follow the source's log start), so it holds
    // committed records the source no longer has: what a wrong truncation would lose.
    await mirrorOrders(t, b, "dr", "a", { [LOG_START_SYNC]: "false" });
    // Retention on the source drops its first 4 records: B holds committed records the source no longer has.
    await t.run(
      a.kafka.admin().deleteTopicRecords({ topic: "orders", partitions: [{ partition: 0, offset: "4" }] }),
    );
    const before = hexes(b);
    expect(before).toHaveLength(10);
    const bLog = logOf(b).log;
    const hw = bLog.highWatermark;

    // The source's leader epoch comes within 3 of the destination's: the next batch asks for a proactive
    // bump, which the destination's controller, failing over, refuses (NOT_CONTROLLER, retriable), for
    // longer than the 60 s the step asks again in place: FAILED.
    const localEpoch = logOf(b).leaderEpoch;
    a.cluster.controller.bumpLeaderEpochs([
      { topic: "orders", partition: 0, minLeaderEpoch: localEpoch - 2 },
    ]);
    b.cluster.controller.setAvailable(false);
    await t.run(producer.send({ topic: "orders", messages: [{ key: "k10", value: "v10" }], acks: -1 }));
    await t.until(async () => (await stateOf(b, "dr"))?.state === "FAILED", "dr FAILED");
    const failed = viewOf(b, "dr");
    expect(failed.errorMessage).toMatch(/controller/);
    // The outage lasts 3 s, long enough for the first retry (the partition's log start must not move).
    const outageEnd = t.clock.now() + 3_000;
    await t.until(() => t.clock.now() >= outageEnd || bLog.logStartOffset !== 0n, "outage over");
    expect(bLog.logStartOffset).toBe(0n);
    b.cluster.controller.setAvailable(true);

    await t.until(async () => {
      const row = await stateOf(b, "dr");
      const view = viewOf(b, "dr");
      return view.stateEpoch > failed.stateEpoch && row?.state === "MIRRORING" && row.lag === 0n;
    }, "dr resumed and caught up");
    // Nothing was truncated: the log start did not move and every record B held is still there, unchanged.
    expect(bLog.logStartOffset).toBe(0n);
    expect(bLog.highWatermark).toBeGreaterThan(hw);
    expect(hexes(b).slice(0, 10)).toEqual(before);
    // And from the source's log start on, B is offset-identical to the source.
    expect(hexes(b).slice(4)).toEqual(hexes(a));
    // It came back from FAILED straight to MIRRORING, never through PREPARING's truncation.
    expect(viewOf(b, "dr")).toMatchObject({ state: "MIRRORING", previousState: "FAILED" });
  });
});

describe("Critical: a source that cannot answer the LME yet is a retriable error (issue 11, item 3)", () => {
  /** A -> B, failover on B (LME recorded), B writes and trims its log start: the failback setting. */
  async function failedOver() {
    const t = topology(["a", "b"]);
    const a = t.node("a");
    const b = t.node("b");
    await ordersOn(t, a, 8);
    await mirrorOrders(t, b, "dr", "a");
    await t.run(b.mirroring.admin.removeTopics("dr", "orders"));
    await t.until(async () => (await stateOf(b, "dr"))?.state === "STOPPED", "dr STOPPED");
    const lme = (await stateOf(b, "dr"))?.lastMirrorEpoch ?? -1;
    expect(lme).toBeGreaterThanOrEqual(0);
    const producerB = b.kafka.producer({ idempotent: true });
    await t.run(producerB.connect());
    await t.run(producerB.send({ topic: "orders", messages: [{ key: "b", value: "on b" }], acks: -1 }));
    // B's retention: A holds records (offsets 0-2) B no longer has; a full truncation on A would lose them.
    await t.run(
      b.kafka.admin().deleteTopicRecords({ topic: "orders", partitions: [{ partition: 0, offset: "3" }] }),
    );
    const topicId = b.cluster.controller.image.topic("orders")!.topicId;
    return { t, a, b, lme, topicId };
  }

  it("asSource answers COORDINATOR_LOAD_IN_PROGRESS while the owning coordinator loads, then the LME", async () => {
    const { t, b, lme, topicId } = await failedOver();
    const source = b.mirroring.asSource();
    expect(await source.lastMirrorEpoch!(topicId, 0)).toBe(lme);
    // The leader of the __mirror_state partition that owns the key crashes: the new leader's coordinator
    // loads on its next task (the manual scheduler has not run it yet).
    const key = { mirror: "dr", topic: "orders", topicId, partition: 0 };
    const owner = b.mirroring.coordinators.coordinatorOf(key)!.brokerId;
    b.cluster.crashBroker(owner);
    const answer = Promise.resolve().then(() => source.lastMirrorEpoch!(topicId, 0));
    await expect(answer).rejects.toMatchObject({ retriable: true });
    await expect(answer).rejects.toMatchObject({
      errorName: expect.stringMatching(/^COORDINATOR_(LOAD_IN_PROGRESS|NOT_AVAILABLE)$/),
    });
    await t.until(async () => {
      try {
        return (await source.lastMirrorEpoch!(topicId, 0)) === lme;
      } catch {
        return false;
      }
    }, "the LME answered again");
  });

  it("a failback whose source coordinator is not available fails retriably, then truncates to the LME only", async () => {
    const { t, a, b, topicId } = await failedOver();
    const aLog = logOf(a).log;
    const before = hexes(a);
    // The source's coordinator for the key has no running leader for a while.
    const key = { mirror: "dr", topic: "orders", topicId, partition: 0 };
    const runtime = b.mirroring.coordinators.coordinatorOf(key)!;
    b.mirroring.coordinators.unregister(runtime.brokerId);

    // A keeps what B's retention dropped (see LOG_START_SYNC): only a truncation could take it.
    await t.run(
      a.mirroring.admin.createMirror("back", { "bootstrap.servers": "b:9092", [LOG_START_SYNC]: "false" }),
    );
    await t.run(a.mirroring.admin.addTopics("back", "orders"));
    await t.until(async () => {
      const s = (await stateOf(a, "back"))?.state;
      return s === "FAILED" || s === "MIRRORING" || aLog.logStartOffset !== 0n;
    }, "back FAILED, MIRRORING or truncated");
    expect(aLog.logStartOffset).toBe(0n);
    const failed = await stateOf(a, "back");
    expect(failed?.state).toBe("FAILED");
    expect(failed?.errorMessage).toMatch(/COORDINATOR|coordinator/);
    expect(failed?.retryAttempt).toBeGreaterThanOrEqual(0); // retryable
    expect(hexes(a)).toEqual(before); // nothing truncated

    b.mirroring.coordinators.register(runtime);
    await t.until(async () => {
      const row = await stateOf(a, "back");
      return row?.state === "MIRRORING" && row.lag === 0n;
    }, "back caught up");
    // Truncated to the end of B's LME (nothing of A's was past it), not fully: A keeps offsets 0-2.
    expect(aLog.logStartOffset).toBe(0n);
    expect(hexes(a).slice(0, before.length)).toEqual(before);
    expect(hexes(a).slice(3)).toEqual(hexes(b));
  });
});

describe("Critical: a failover writes no marker into a log that never held mirrored data (issue 11, item 5)", () => {
  it("a mirror loop added by mistake, then removed: the live primary's log is untouched, its producer keeps working", async () => {
    const t = topology(["a", "b"]);
    const a = t.node("a");
    const b = t.node("b");
    const producer = await ordersOn(t, a, 5);
    await mirrorOrders(t, b, "dr", "a");
    const before = hexes(a);
    const end = logOf(a).log.logEndOffset;

    // On A, a mirror of B's `orders`, which B mirrors from A: a loop, refused in PREPARING (FAILED).
    await t.run(a.mirroring.admin.createMirror("loop", { "bootstrap.servers": "b:9092" }));
    await t.run(a.mirroring.admin.addTopics("loop", "orders")).catch(() => undefined);
    await t.until(async () => {
      const s = (await stateOf(a, "loop"))?.state;
      return s === undefined || s === "FAILED";
    }, "loop refused");
    if ((await stateOf(a, "loop"))?.state === "FAILED") {
      await t.run(a.mirroring.admin.removeTopics("loop", "orders"));
      await t.until(async () => (await stateOf(a, "loop"))?.state === "STOPPED", "loop STOPPED");
    }

    // No ABORT marker, no PID reset: the log is exactly what A's producers wrote.
    expect(logOf(a).log.logEndOffset).toBe(end);
    expect(hexes(a)).toEqual(before);
    expect(leaderBatches(a.cluster, "orders", 0).filter((b) => b.batch.isControl)).toEqual([]);
    // The live idempotent producer goes on with its next sequence number.
    await t.run(producer.send({ topic: "orders", messages: [{ key: "k5", value: "v5" }], acks: -1 }));
    expect(logOf(a).log.logEndOffset).toBe(end + 1n);
  });
});
