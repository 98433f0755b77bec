import { ClusterError, ManualClock, ManualScheduler, SeededRandom } from "@cluster-mirror/cluster";
import { afterEach, describe, expect, it } from "vitest";
import {
  MirroringClosedError,
  MirrorStateError,
  MirrorWaitTimeoutError,
  PromoteCancelledError,
  PromoteTimeoutError,
  SourceUnreachableError,
} from "../src/admin/errors";
import { MirrorChanges, waitForCondition } from "../src/admin/mirror-changes";
import { LIVE_SOURCE_ANSWER_MS } from "../src/admin/mirror-describe";
import { ClusterMirroring } from "../src/cluster-mirroring";
import { EmbeddedSourceConnector, EmbeddedSourceRegistry } from "../src/index";
import { mirrorTopics } from "../src/metadata/mirror-topics";
import type { SourceConnector } from "../src/ports";
import {
  addTopicsWhenReady,
  createTopic,
  overrideSourceMethod,
  produce,
  twoEngineClusters,
} from "./engine-helpers";

const closers: (() => void)[] = [];
afterEach(() => {
  for (const c of closers.splice(0)) c();
});

function env(options?: Parameters<typeof twoEngineClusters>[0]) {
  const e = twoEngineClusters(options);
  closers.push(e.close);
  return e;
}

/**
 * A source connector wrapper whose `method` (ListOffsets by default) hangs while set, as a paused broker
 * neither answers nor refuses; unset, the held calls go through.
 */
function hangingSource(method: "listOffsets" | "listMirrors" = "listOffsets") {
  let hanging = false;
  const held: (() => void)[] = [];
  const wrap = (inner: SourceConnector): SourceConnector => ({
    connect(name, configs) {
      const real = inner.connect(name, configs);
      return new Proxy(real, {
        get(target, prop, receiver) {
          if (prop !== method) return Reflect.get(target, prop, receiver);
          return async (...args: unknown[]) => {
            if (hanging) await new Promise<void>((resolve) => held.push(resolve));
            return (target[method] as (...a: unknown[]) => unknown).apply(target, args);
          };
        },
      });
    },
  });
  return {
    wrap,
    held: () => held.length,
    set(on: boolean) {
      hanging = on;
      if (!on) for (const release of held.splice(0)) release();
    },
  };
}

/** Mirror `m` of a topic `orders` of `partitions` partitions (5 records in partition 0), caught up. */
async function caughtUpOrders(e: ReturnType<typeof env>, partitions: number) {
  await createTopic(e.source, "orders", partitions);
  await produce(e.source, "orders", 0, 5);
  await e.dest.mirroring.admin.createMirror("m", { "bootstrap.servers": e.source.bootstrap });
  await addTopicsWhenReady(e.dest, "m", "orders");
  await e.dest.mirroring.whenCaughtUp("m", { timeoutMs: 30_000 });
  return e.dest.mirroring.admin;
}

/**
 * Mirror `m` of `orders` (2 partitions) caught up, then PAUSED, then 4 records written to partition 0:
 * partition 0 cannot catch up while paused (4 behind), partition 1 has nothing to catch up.
 */
async function pausedBehind(e: ReturnType<typeof env>) {
  const admin = await caughtUpOrders(e, 2);
  await admin.pauseTopics("m", "orders");
  await e.dest.mirroring.whenState("m", "PAUSED", { timeoutMs: 30_000 });
  await produce(e.source, "orders", 0, 4);
  return admin;
}

const leaderEnd = (c: ReturnType<typeof env>["dest"], topic: string, partition: number) =>
  c.cluster.leaderFor(topic, partition).replica(topic, partition)!.log.logEndOffset;
const sourceHw = (c: ReturnType<typeof env>["source"], topic: string, partition: number) =>
  c.cluster.leaderFor(topic, partition).replica(topic, partition)!.log.highWatermark;

describe("MirrorAdmin.promoteTopics (kafka-mirrors --promote)", () => {
  it("waits until every partition has lag 0 against the source's high watermark, then fails over to STOPPED", async () => {
    const { source, dest } = env();
    await createTopic(source, "orders", 2);
    await produce(source, "orders", 0, 30);
    await produce(source, "orders", 1, 7);
    const admin = dest.mirroring.admin;
    await admin.createMirror("m", { "bootstrap.servers": source.bootstrap });
    await addTopicsWhenReady(dest, "m", "orders");

    // Promoted at once: the records are not mirrored yet, so it has to wait for them.
    const result = await admin.promoteTopics("m", "orders", { timeoutMs: 60_000 });

    expect(result.topics).toEqual(["orders"]);
    expect(result.partitions).toEqual([
      { topic: "orders", partition: 0, offset: sourceHw(source, "orders", 0) },
      { topic: "orders", partition: 1, offset: sourceHw(source, "orders", 1) },
    ]);
    expect(result.partitions.map((p) => p.offset)).toEqual([30n, 7n]);
    const rows = await admin.describe("m");
    expect(rows.map((r) => r.state)).toEqual(["STOPPED", "STOPPED"]);
    // Everything the source acknowledged is on the destination, before the abort markers and PID reset.
    for (const p of [0, 1])
      expect(leaderEnd(dest, "orders", p)).toBeGreaterThan(sourceHw(source, "orders", p));
    expect(result.message).toMatch(
      /^Promoted 1 topic\(s\) of mirror m: \[orders\]; 2 partition\(s\) reached lag 0/,
    );
    // The topic is writable on the destination now.
    await produce(dest, "orders", 0, 1);
  }, 60_000);

  it("on timeout fails over nothing and names each partition short of lag 0 with its lag", async () => {
    const paused = env();
    const admin = await pausedBehind(paused);
    const { dest } = paused;

    const error = await admin.promoteTopics("m", "orders", { timeoutMs: 300 }).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(PromoteTimeoutError);
    const e = error as PromoteTimeoutError;
    expect(e.errorName).toBe("REQUEST_TIMED_OUT");
    expect(e.phase).toBe("CATCH_UP");
    // Partition 1 has lag 0 but is PAUSED, which promote accepts; partition 0 is 4 behind.
    expect(e.partitions).toEqual([{ topic: "orders", partition: 0, lag: 4n, state: "PAUSED" }]);
    expect(e.message).toMatch(/orders-0 lag 4 \(PAUSED\).*Nothing was failed over/);
    expect((await admin.describe("m")).map((r) => r.state)).toEqual(["PAUSED", "PAUSED"]);
    expect(dest.cluster.controller.image.topic("orders")?.configs.get("mirror.name")).toBe("m.paused");
  }, 60_000);

  it("ends at once when another command fails a promoted topic over during its catch-up (no wait for the deadline)", async () => {
    const e = env();
    const admin = await caughtUpOrders(e, 2);
    await admin.pauseTopics("m", "orders");
    await e.dest.mirroring.whenState("m", "PAUSED", { timeoutMs: 30_000 });
    await produce(e.source, "orders", 0, 1); // behind while paused: the promote waits

    const promoted = admin.promoteTopics("m", "orders", { timeoutMs: 45_000 }).catch((x: unknown) => x);
    // An operator's unplanned failover of the same topic meanwhile (the catch-up holds no command queue).
    await admin.removeTopics("m", "orders");
    const error = await promoted;

    // Before: it waited out its 45 s and then timed out (REQUEST_TIMED_OUT, "check they are MIRRORING").
    expect(error).toBeInstanceOf(MirrorStateError);
    expect((error as MirrorStateError).errorName).toBe("INVALID_MIRROR_STATE");
    expect((error as Error).message).toMatch(
      /failed over by another command meanwhile \(--remove\): orders-0 \(STOPP(ING|ED)\)/,
    );
  }, 60_000);

  it("does not end early for a topic asked to mirror again whose partitions are still STOPPED (a re-add not started yet)", async () => {
    const e = env();
    const admin = await caughtUpOrders(e, 1);
    await admin.removeTopics("m", "orders");
    await e.dest.mirroring.whenState("m", "STOPPED", { timeoutMs: 30_000 });
    // mirror.name back to the mirror: ACTIVE with STOPPED partitions until the engine sends START.
    e.dest.cluster.controller.incrementalAlterConfigs({ type: "topic", name: "orders" }, [
      { name: "mirror.name", op: "SET", value: "m" },
    ]);
    const outcome = await admin.promoteTopics("m", "orders", { timeoutMs: 2_000 }).catch((x: unknown) => x);
    expect(outcome).not.toBeInstanceOf(MirrorStateError);
  }, 60_000);

  it("asks again while the source's new leader answers OFFSET_NOT_AVAILABLE (its HW not learnt yet), then fails over", async () => {
    let refusals = 0;
    const notYet = overrideSourceMethod("source:9092", "listOffsets", async (real, ...args) => {
      if (args[2] === -1n && refusals < 3) {
        refusals++;
        throw new ClusterError("OFFSET_NOT_AVAILABLE", "the leader has not yet learnt its high watermark");
      }
      return (real.listOffsets as (...a: unknown[]) => unknown).apply(real, args);
    });
    const e = env({ wrapSources: notYet });
    const admin = await caughtUpOrders(e, 1);
    refusals = 0;
    // Before: the first refusal ended the promote as an unreachable source.
    const result = await admin.promoteTopics("m", "orders", { timeoutMs: 30_000 });
    expect(refusals).toBe(3);
    expect(result.partitions).toEqual([{ topic: "orders", partition: 0, offset: 5n }]);
    expect((await admin.describe("m")).map((r) => r.state)).toEqual(["STOPPED"]);
  }, 60_000);

  it("a cancel (its AbortSignal) during the catch-up fails over nothing, then or after the copy catches up", async () => {
    const paused = env();
    const admin = await pausedBehind(paused);
    const { dest } = paused;

    const cancel = new AbortController();
    const promote = admin
      .promoteTopics("m", "orders", { timeoutMs: 30_000, signal: cancel.signal })
      .catch((e: unknown) => e);
    await new Promise((resolve) => setTimeout(resolve, 100));
    cancel.abort(); // the operator's Ctrl-C: the CLI went away

    const error = await promote;
    expect(error).toBeInstanceOf(PromoteCancelledError);
    expect((error as Error).message).toMatch(/cancelled before its failover began\. Nothing was failed over/);
    // Before: the promote went on without its caller and failed the topic over once a resume let it catch up.
    await admin.resumeTopics("m", "orders");
    await dest.mirroring.whenCaughtUp("m", { timeoutMs: 30_000 });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await admin.describe("m")).map((r) => r.state)).toEqual(["MIRRORING", "MIRRORING"]);
    expect(dest.cluster.controller.image.topic("orders")?.configs.get("mirror.name")).toBe("m");
    // An already cancelled signal changes nothing either.
    await expect(admin.promoteTopics("m", "orders", { signal: cancel.signal })).rejects.toBeInstanceOf(
      PromoteCancelledError,
    );
  }, 60_000);

  it("a source that hangs (answers nothing) is bounded by the timeout: nothing is failed over, then or later", async () => {
    const hang = hangingSource();
    const e = env({ wrapSources: hang.wrap });
    const { dest } = e;
    const admin = await caughtUpOrders(e, 2);
    hang.set(true);

    // Before: the first ask of the source had no bound; the promote waited as long as the source hung
    // and failed over once it answered, after the operator's command had given up.
    const error = await admin.promoteTopics("m", "orders", { timeoutMs: 300 }).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(SourceUnreachableError);
    expect((error as Error).message).toMatch(
      /did not answer ListOffsets for 2 partition\(s\) within the promote's 300 ms .*nothing was failed over .*--remove/,
    );
    expect(hang.held()).toBeGreaterThan(0);
    // The source answers late: the promote that gave up must not fail anything over now.
    hang.set(false);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await admin.describe("m")).map((r) => r.state)).toEqual(["MIRRORING", "MIRRORING"]);
    expect(dest.cluster.controller.image.topic("orders")?.configs.get("mirror.name")).toBe("m");
  }, 60_000);

  it("describe does not wait on a source that hangs: last-seen offsets, lag unknown, within its bound", async () => {
    const hang = hangingSource();
    const admin = await caughtUpOrders(env({ wrapSources: hang.wrap }), 1);
    hang.set(true);
    // Before: describe waited as long as the source hung (a paused broker: the client's request timeout
    // and retries, 90 s seen), past the CLI's own 60 s limit.
    const settled = await Promise.race([
      admin.describe("m"),
      new Promise<"still waiting">((resolve) =>
        setTimeout(() => resolve("still waiting"), LIVE_SOURCE_ANSWER_MS + 5_000),
      ),
    ]);
    expect(hang.held()).toBeGreaterThan(0);
    hang.set(false);
    expect(settled).not.toBe("still waiting");
    const rows = settled as Awaited<ReturnType<typeof admin.describe>>;
    expect(rows.map((r) => [r.state, r.sourceOffset, r.destinationOffset, r.lag])).toEqual([
      ["MIRRORING", 5n, 5n, null],
    ]);
  }, 60_000);

  it("a source that went away shows in the fetch errors counter (the lag gauge keeps the last-seen value)", async () => {
    const { source, dest } = env();
    await createTopic(source, "orders", 1);
    await produce(source, "orders", 0, 3);
    await dest.mirroring.admin.createMirror("m", { "bootstrap.servers": source.bootstrap });
    await addTopicsWhenReady(dest, "m", "orders");
    await dest.mirroring.whenCaughtUp("m", { timeoutMs: 30_000 });
    expect(dest.mirroring.metrics.fetchErrorCounts()).toEqual([]);
    source.mirroring.close();
    source.cluster.close();
    const end = Date.now() + 20_000;
    while (dest.mirroring.metrics.fetchErrorCounts().length === 0 && Date.now() < end)
      await new Promise((r) => setTimeout(r, 20));
    const [counted] = dest.mirroring.metrics.fetchErrorCounts();
    expect(counted?.mirror).toBe("m");
    expect(counted?.count).toBeGreaterThan(0);
    const text = dest.mirroring.metrics.toPrometheusText();
    expect(text).toMatch(/^kafka_server_cluster_mirror_fetch_errors_total\{mirror="m"\} [1-9]\d*$/m);
    expect(dest.mirroring.metrics.lags()).toEqual([{ mirror: "m", topic: "orders", partition: 0, lag: 0n }]);
  }, 60_000);

  it("fails over only the topics it checked: one added to the mirror during the catch-up keeps mirroring", async () => {
    const { source, dest } = env();
    await createTopic(source, "orders", 1);
    await createTopic(source, "ord2", 1);
    await produce(source, "orders", 0, 3);
    await produce(source, "ord2", 0, 2);
    const admin = dest.mirroring.admin;
    await admin.createMirror("m", { "bootstrap.servers": source.bootstrap });
    await addTopicsWhenReady(dest, "m", "orders");
    await dest.mirroring.whenCaughtUp("m", { timeoutMs: 30_000 });
    await admin.pauseTopics("m", "orders");
    await dest.mirroring.whenState("m", "PAUSED", { timeoutMs: 30_000 });
    await produce(source, "orders", 0, 1); // orders is behind while paused: the promote waits

    const promoted = admin.promoteTopics("m", "ord.*", { timeoutMs: 30_000 });
    // Matches the promote's pattern, but was not in the mirror when the promote checked its topics.
    await admin.addTopics("m", "ord2");
    await admin.resumeTopics("m", "orders");
    const result = await promoted;

    // Before: the failover re-read 'ord.*' and failed ord2 over too, never checked for catch-up.
    expect(result.topics).toEqual(["orders"]);
    const rows = await admin.describe("m");
    expect(rows.find((r) => r.topic === "orders")?.state).toBe("STOPPED");
    expect(rows.find((r) => r.topic === "ord2")?.state).not.toMatch(/STOPP/);
    expect(dest.cluster.controller.image.topic("ord2")?.configs.get("mirror.name")).toBe("m");
  }, 60_000);

  it("an add to one mirror does not take a topic another mirror re-added while this add asked the source", async () => {
    const hang = hangingSource("listMirrors");
    const { source, dest } = env({ wrapSources: hang.wrap });
    await createTopic(source, "orders", 1);
    await produce(source, "orders", 0, 2);
    const admin = dest.mirroring.admin;
    await admin.createMirror("x", { "bootstrap.servers": source.bootstrap });
    await admin.createMirror("y", { "bootstrap.servers": source.bootstrap });
    await addTopicsWhenReady(dest, "x", "orders");
    await dest.mirroring.whenCaughtUp("x", { timeoutMs: 30_000 });
    await admin.removeTopics("x", "orders");
    await dest.mirroring.whenState("x", "STOPPED", { timeoutMs: 30_000 });

    hang.set(true);
    // y's add passes its checks, then waits on the source (the mirror-loop check) ...
    const toY = admin.addTopics("y", "orders", { truncateLocalWrites: true }).catch((e: unknown) => e);
    while (hang.held() === 0) await new Promise((r) => setTimeout(r, 5));
    // ... while x, whose commands are not queued behind y's, re-adds it: it waits on the source too.
    const toX = admin.addTopics("x", "orders", { truncateLocalWrites: true }).catch((e: unknown) => e);
    while (hang.held() < 2) await new Promise((r) => setTimeout(r, 5));
    hang.set(false);
    const outcomes = { x: await toX, y: await toY };
    // Before: both went on and the last to set mirror.name won, the other's add reported as done.
    // Now the first to change the topic has it and the other is refused, having changed nothing.
    const winner = dest.cluster.controller.image.topic("orders")?.configs.get("mirror.name");
    expect(["x", "y"]).toContain(winner);
    const loser = winner === "x" ? "y" : "x";
    expect(outcomes[winner as "x" | "y"]).not.toBeInstanceOf(Error);
    expect(outcomes[loser]).toBeInstanceOf(Error);
    expect((outcomes[loser] as Error).message).toMatch(new RegExp(`already mirrored by mirror '${winner}'`));
  }, 60_000);

  it("a failover whose turn behind another command of the mirror comes after the deadline does not start, then or later", async () => {
    const hang = hangingSource("listMirrors");
    const e = env({ wrapSources: hang.wrap });
    const admin = await caughtUpOrders(e, 1);
    await createTopic(e.source, "ord2", 1);
    hang.set(true);
    // An add of the same mirror waits on the source (its mirror-loop check), holding the mirror's commands.
    const add = admin.addTopics("m", "ord2").catch((error: unknown) => error);
    while (hang.held() === 0) await new Promise((r) => setTimeout(r, 5));
    const promoted = admin.promoteTopics("m", "orders", { timeoutMs: 300 }).catch((error: unknown) => error);
    await new Promise((r) => setTimeout(r, 600));
    hang.set(false);
    await add;
    const outcome = await promoted;
    // Before: the promote waited for its turn without a bound and failed orders over once the add was
    // done, long after its 300 ms: a caller told "timed out" would have sent writers back to the source.
    expect(outcome).toBeInstanceOf(PromoteTimeoutError);
    expect((outcome as Error).message).toMatch(
      /waited behind other commands on the mirror.*Nothing was failed over/,
    );
    await new Promise((r) => setTimeout(r, 300));
    expect(e.dest.cluster.controller.image.topic("orders")?.configs.get("mirror.name")).toBe("m");
    expect((await admin.describe("m")).find((r) => r.topic === "orders")?.state).toBe("MIRRORING");
  }, 60_000);

  it("refuses to promote a copy whose source topic was deleted and created again: another topic's high watermark is no catch-up", async () => {
    const e = env();
    const admin = await caughtUpOrders(e, 1);
    await e.source.kafka.admin().deleteTopics({ topics: ["orders"] });
    await createTopic(e.source, "orders", 1);
    await produce(e.source, "orders", 0, 1);
    // Before: the new topic's high watermark (1) was below the copy's end (5), so the copy read as caught
    // up and was failed over without the record just written to the new topic.
    await expect(admin.promoteTopics("m", "orders", { timeoutMs: 5_000 })).rejects.toThrow(
      /no longer has the topic 'orders' mirror 'm' copies .*Nothing was failed over/,
    );
    expect(e.dest.cluster.controller.image.topic("orders")?.configs.get("mirror.name")).toBe("m");
  }, 60_000);

  it("a catch-up timeout with no partition behind (the source was being asked again) says so", () => {
    const e = new PromoteTimeoutError("m", "CATCH_UP", 1, []);
    expect(e.errorName).toBe("REQUEST_TIMED_OUT");
    expect(e.message).toMatch(
      /^Promote of mirror 'm' timed out after 1 ms while it asked the source for its live high watermarks again \(every partition had reached the ones asked before\)\. Nothing was failed over; .*a larger --timeout-ms/,
    );
    expect(e.message).not.toMatch(/0 partition\(s\)/);
  });

  it("whenCaughtUp and whenState time out with a typed, retriable REQUEST_TIMED_OUT naming what is not there", async () => {
    const { source, dest } = env();
    await createTopic(source, "orders", 1);
    const admin = dest.mirroring.admin;
    await admin.createMirror("m", { "bootstrap.servers": source.bootstrap });
    await addTopicsWhenReady(dest, "m", "orders");
    await dest.mirroring.whenState("m", "MIRRORING", { timeoutMs: 30_000 });
    const error = await dest.mirroring.whenState("m", "STOPPED", { timeoutMs: 100 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MirrorWaitTimeoutError);
    expect(error).toMatchObject({ errorName: "REQUEST_TIMED_OUT", code: 7, retriable: true });
    expect((error as Error).message).toBe(
      "timed out after 100 ms: 1 of 1 partitions of mirror m not STOPPED (orders-0 MIRRORING)",
    );
    await admin.pauseTopics("m", "orders");
    await dest.mirroring.whenState("m", "PAUSED", { timeoutMs: 30_000 });
    await produce(source, "orders", 0, 2);
    await expect(dest.mirroring.whenCaughtUp("m", { timeoutMs: 100 })).rejects.toThrow(
      MirrorWaitTimeoutError,
    );
    // A state no partition can be in is refused at once, not waited for until the timeout.
    await expect(dest.mirroring.whenState("m", "paused", { timeoutMs: 30_000 })).rejects.toMatchObject({
      errorName: "INVALID_REQUEST",
      retriable: false,
      message:
        "'paused' is not a mirror partition state; did you mean 'PAUSED'? (states: PREPARING, MIRRORING, EPOCH_FENCING, PAUSING, PAUSED, STOPPING, STOPPED, FAILED)",
    });
    await expect(dest.mirroring.whenState("m", "BOGUS")).rejects.toThrow(
      /^'BOGUS' is not a mirror partition state \(states: PREPARING,/,
    );
  }, 60_000);

  it("whenCaughtUp leaves failed-over topics out, and says so when nothing is left to catch up", async () => {
    const { source, dest } = env();
    await createTopic(source, "orders", 1);
    await createTopic(source, "payments", 1);
    const admin = dest.mirroring.admin;
    await admin.createMirror("m", { "bootstrap.servers": source.bootstrap });
    await expect(dest.mirroring.whenCaughtUp("m", { timeoutMs: 100 })).rejects.toThrow(
      "timed out after 100 ms: mirror m has no partition to catch up (no topics, or all failed over): add topics with addTopics (kafka-mirrors --add)",
    );
    await addTopicsWhenReady(dest, "m", "orders|payments");
    await dest.mirroring.whenCaughtUp("m", { timeoutMs: 30_000 });
    await admin.removeTopics("m", "payments");
    await dest.mirroring.whenState("m", "STOPPED", { topic: "payments", timeoutMs: 30_000 });
    // payments is failed over: it never catches up again, and orders alone decides.
    await produce(source, "orders", 0, 3);
    await dest.mirroring.whenCaughtUp("m", { timeoutMs: 30_000 });
    expect(leaderEnd(dest, "orders", 0)).toBe(sourceHw(source, "orders", 0));
    await admin.removeTopics("m", "orders");
    await dest.mirroring.whenState("m", "STOPPED", { timeoutMs: 30_000 });
    await expect(dest.mirroring.whenCaughtUp("m", { timeoutMs: 100 })).rejects.toThrow(
      /has no partition to catch up/,
    );
  }, 60_000);

  it("close() ends every pending wait at once with MirroringClosedError, and later waits too", async () => {
    const { source, dest } = env();
    await createTopic(source, "orders", 1);
    const admin = dest.mirroring.admin;
    await admin.createMirror("m", { "bootstrap.servers": source.bootstrap });
    await addTopicsWhenReady(dest, "m", "orders");
    // Waits that would hold the process for minutes: nothing pauses the topic, no sync comes soon.
    const state = dest.mirroring.whenState("m", "PAUSED", { timeoutMs: 600_000 }).catch((e: unknown) => e);
    const synced = dest.mirroring.whenSynced("m", { timeoutMs: 600_000 }).catch((e: unknown) => e);
    dest.mirroring.close();
    for (const error of [await state, await synced]) {
      expect(error).toBeInstanceOf(MirroringClosedError);
      expect(error).toMatchObject({ errorName: "MIRRORING_CLOSED", retriable: false });
    }
    await expect(dest.mirroring.whenCaughtUp("m")).rejects.toThrow(MirroringClosedError);
  }, 10_000);

  it("close() ends a promote still catching up with MirroringClosedError, failing nothing over; a later promote too", async () => {
    const paused = env();
    const admin = await pausedBehind(paused);
    const { dest } = paused;
    // Partition 0 cannot catch up while paused: the promote would wait its whole timeout (ten minutes here,
    // its timer keeping the process alive) and then report a PromoteTimeoutError about an engine long gone.
    const promote = admin.promoteTopics("m", "orders", { timeoutMs: 600_000 }).catch((e: unknown) => e);
    await new Promise((resolve) => setTimeout(resolve, 50));
    dest.mirroring.close();
    const error = await promote;
    expect(error).toBeInstanceOf(MirroringClosedError);
    expect(error).toMatchObject({ errorName: "MIRRORING_CLOSED", retriable: false });
    // Nothing was failed over.
    expect(dest.cluster.controller.image.topic("orders")?.configs.get("mirror.name")).toBe("m.paused");
    await expect(admin.promoteTopics("m", "orders", { timeoutMs: 600_000 })).rejects.toThrow(
      MirroringClosedError,
    );
    // Every other call of the closed engine says so too, changing nothing: a mirror created then would never
    // run, and deleting one needs the coordinators' tombstones (no load comes).
    await expect(
      admin.createMirror("idle", { "bootstrap.servers": paused.source.bootstrap }),
    ).rejects.toThrow(MirroringClosedError);
    await expect(admin.deleteMirror("m")).rejects.toThrow(MirroringClosedError);
    expect([...dest.cluster.controller.image.mirrors.keys()]).toEqual(["m"]);
  }, 10_000);

  it("close() once the failover began says the topics were failed over already, and which partitions finish later", async () => {
    const e = env();
    const admin = await caughtUpOrders(e, 1);
    // The destination's followers are slow: STOPPING's records and markers wait for the in-sync replicas.
    e.dest.cluster.setReplicationLatency(60_000);
    const promote = admin
      .promoteTopics("m", "orders", { timeoutMs: 600_000 })
      .catch((error: unknown) => error);
    const removed = () =>
      mirrorTopics(e.dest.cluster.controller.image, "m").find((t) => t.name === "orders")?.desired ===
      "REMOVED";
    for (let i = 0; i < 500 && !removed(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(removed()).toBe(true);
    e.dest.mirroring.close();
    const error = await promote;
    expect(error).toBeInstanceOf(MirroringClosedError);
    // Before: only "the cluster's mirroring was closed", as if nothing had been failed over.
    expect((error as Error).message).toMatch(
      /Promote of mirror 'm' had already failed \[?orders\]? over \(no longer mirrored\), but 1 partition\(s\) were not STOPPED yet: orders-0 \([A-Z]+\)\. Their failover goes on when the mirroring starts again/,
    );
  }, 30_000);

  it("a source cluster that was closed is unreachable: createMirror and addTopics create nothing", async () => {
    const { source, dest } = env();
    await createTopic(source, "orders", 1);
    const admin = dest.mirroring.admin;
    await admin.createMirror("m", { "bootstrap.servers": source.bootstrap });
    source.mirroring.close();
    source.cluster.close();
    const created = await admin
      .createMirror("m2", { "bootstrap.servers": source.bootstrap })
      .catch((e: unknown) => e);
    expect(created).toBeInstanceOf(SourceUnreachableError);
    expect((created as Error).message).toMatch(
      /has no running broker \(it was closed, or every broker is down\)/,
    );
    await expect(admin.addTopics("m", "orders")).rejects.toThrow(SourceUnreachableError);
    expect(admin.listMirrors().map((m) => m.name)).toEqual(["m"]);
    expect(dest.cluster.controller.image.topic("orders")).toBeUndefined();
  });

  it("one engine per cluster: a second ClusterMirroring.start is refused until the first is closed", () => {
    const { dest } = env();
    const start = () =>
      ClusterMirroring.start({
        cluster: dest.cluster,
        sources: new EmbeddedSourceConnector(new EmbeddedSourceRegistry()),
        random: new SeededRandom(9),
      });
    expect(start).toThrow(
      /^mirroring is already started on this cluster \(cluster id .+\); close\(\) that ClusterMirroring before starting another$/,
    );
    dest.mirroring.close();
    const second = start();
    closers.push(() => second.close());
    // Closing the first again does not lift the second one's claim.
    dest.mirroring.close();
    expect(start).toThrow(/already started/);
  });

  it("refuses a pattern that matches none of the mirror's topics, changing nothing", async () => {
    const { source, dest } = env();
    await createTopic(source, "orders", 1);
    const admin = dest.mirroring.admin;
    await admin.createMirror("m", { "bootstrap.servers": source.bootstrap });
    await addTopicsWhenReady(dest, "m", "orders");
    await expect(admin.promoteTopics("m", "payments")).rejects.toMatchObject({
      errorName: "UNKNOWN_TOPIC_OR_PARTITION",
    });
    await expect(admin.promoteTopics("nope", "orders")).rejects.toMatchObject({
      errorName: "UNKNOWN_MIRROR",
    });
    expect(dest.cluster.controller.image.topic("orders")?.configs.get("mirror.name")).toBe("m");
  }, 60_000);
});

describe("waitForCondition over MirrorChanges", () => {
  it("re-checks only when a change is announced, and times out on the injected scheduler", async () => {
    const clock = new ManualClock(0);
    const scheduler = new ManualScheduler(clock);
    const changes = new MirrorChanges(scheduler);
    let checks = 0;
    let ready = false;
    const waited = waitForCondition({
      subscribe: (l) => changes.subscribe(l),
      scheduler,
      timeoutMs: 1_000,
      check: async () => {
        checks++;
        return ready ? { done: true as const, value: "ok" } : { done: false as const, why: "not yet" };
      },
      onTimeout: (why) => new Error(`timed out: ${why}`),
    });
    await Promise.resolve();
    expect(checks).toBe(1);
    scheduler.run(500);
    expect(checks).toBe(1); // no polling: time alone does not re-check
    ready = true;
    changes.notify();
    changes.notify(); // coalesced with the first
    scheduler.run(0);
    await Promise.resolve();
    await expect(waited).resolves.toBe("ok");
    expect(checks).toBe(2);

    const never = waitForCondition({
      subscribe: (l) => changes.subscribe(l),
      scheduler,
      timeoutMs: 1_000,
      check: async () => ({ done: false as const, why: "still lagging" }),
      onTimeout: (why) => new Error(`timed out: ${why}`),
    });
    const outcome = never.catch((e: Error) => e.message);
    await Promise.resolve();
    scheduler.run(999);
    await Promise.resolve();
    expect(await Promise.race([outcome, Promise.resolve("pending")])).toBe("pending");
    scheduler.run(1);
    expect(await outcome).toBe("timed out: still lagging");
  });
});
