import { MirrorCommandTimeoutError, PromoteTimeoutError } from "@cluster-mirror/mirror";
import { describe, expect, it } from "vitest";
import {
  failForGood,
  type Node,
  onlyRowOf,
  ordersOn,
  type Topology,
  topology,
  untilCaughtUp,
} from "./helpers";

/**
 * Every disk of the destination full: `__mirror_state` takes no record, so the coordinators record no
 * command. An admin operation waiting for its commands hung until space was freed; Kafka's admin client
 * gives up after `default.api.timeout.ms` (60 s) with a TimeoutException (KafkaAdminClient), which is
 * retriable and may still take effect.
 */

/** `orders` on a with 3 records, mirrored to b by `dr` until caught up. */
async function mirrored(options: { defaultApiTimeoutMs?: number } = {}) {
  const t = topology(["a", "b"], options);
  const [a, b] = [t.node("a"), t.node("b")];
  const producer = await ordersOn(t, a, 3);
  await t.run(b.mirroring.admin.createMirror("dr", { "bootstrap.servers": "a:9092" }));
  await t.run(b.mirroring.admin.addTopics("dr", "orders"));
  await untilCaughtUp(t, b, "dr caught up");
  return { t, a, b, producer };
}

function fillDisks(b: Node, full: boolean): void {
  for (const id of b.cluster.runningBrokers()) b.cluster.setDiskFull(id, full);
}

/** `work`'s rejection, and how long (virtual time) it took. */
async function refusal(t: Topology, work: Promise<unknown>): Promise<{ error: unknown; tookMs: number }> {
  const start = t.clock.now();
  let error: unknown;
  try {
    await t.run(work, 300_000);
  } catch (e) {
    error = e;
  }
  return { error, tookMs: t.clock.now() - start };
}

/** The asserts every timed out operation meets: Kafka's retriable REQUEST_TIMED_OUT, saying why and what next. */
function expectTimedOut(error: unknown, operation: string, tookMs: number, timeoutMs = 60_000): void {
  expect(error).toBeInstanceOf(MirrorCommandTimeoutError);
  expect(error).toMatchObject({ errorName: "REQUEST_TIMED_OUT", code: 7, retriable: true, operation });
  const message = (error as Error).message;
  expect(message).toMatch(
    new RegExp(`^The ${operation} of \\[orders\\] in mirror 'dr' timed out after ${timeoutMs} ms`),
  );
  expect(message).toMatch(
    /__mirror_state-\d \(leader \d; full disk on brokers 0, 1, 2, whose appends fail with KAFKA_STORAGE_ERROR/,
  );
  expect(message).toMatch(/It may still take effect/);
  expect(message).toMatch(/--describe --mirror dr/);
  expect(tookMs).toBeGreaterThanOrEqual(timeoutMs);
  expect(tookMs).toBeLessThan(timeoutMs + 1_000);
}

describe("an admin operation while every destination disk is full", () => {
  it("a pause fails after default.api.timeout.ms, keeps mirror.name, and takes effect once space is freed", async () => {
    const { t, b } = await mirrored();
    fillDisks(b, true);
    const { error, tookMs } = await refusal(t, b.mirroring.admin.pauseTopics("dr", "orders"));
    expectTimedOut(error, "pause", tookMs);
    // Not restored: the PAUSE waits in its coordinator, and mirror.name asks for what it will do.
    expect(b.cluster.controller.image.topic("orders")!.configs.get("mirror.name")).toBe("dr.paused");
    expect((await onlyRowOf(b)).state).toBe("MIRRORING");

    fillDisks(b, false);
    await t.until(async () => (await onlyRowOf(b)).state === "PAUSED", "PAUSED once space is freed");
    // Running it again, as the message says, is safe.
    expect((await t.run(b.mirroring.admin.pauseTopics("dr", "orders"))).topics).toEqual(["orders"]);
    expect((await onlyRowOf(b)).state).toBe("PAUSED");
  });

  it("a failover (remove) fails after the timeout and goes on to STOPPED once space is freed", async () => {
    const { t, b } = await mirrored();
    fillDisks(b, true);
    const { error, tookMs } = await refusal(t, b.mirroring.admin.removeTopics("dr", "orders"));
    expectTimedOut(error, "remove", tookMs);
    expect(b.cluster.controller.image.topic("orders")!.configs.get("mirror.name")).toBe("dr.removed");

    fillDisks(b, false);
    await t.until(async () => (await onlyRowOf(b)).state === "STOPPED", "STOPPED once space is freed");
  });

  it("an add fails after the timeout and mirrors once space is freed", async () => {
    const { t, b, producer } = await mirrored();
    await t.run(b.mirroring.admin.removeTopics("dr", "orders"));
    await t.until(async () => (await onlyRowOf(b)).state === "STOPPED", "STOPPED");
    fillDisks(b, true);
    const { error, tookMs } = await refusal(t, b.mirroring.admin.addTopics("dr", "orders"));
    expectTimedOut(error, "add", tookMs);

    fillDisks(b, false);
    await untilCaughtUp(t, b, "dr caught up once space is freed");
    await t.run(producer.send({ topic: "orders", messages: [{ value: "after" }], acks: -1 }));
    await untilCaughtUp(t, b, "dr caught up with the new record");
  });

  it("a recover fails after the timeout and the partition retries once space is freed", async () => {
    const { t, b } = await mirrored();
    // Failed for good (no retry of its own): only the recover brings it back.
    await failForGood(t, b);
    fillDisks(b, true);
    const { error, tookMs } = await refusal(t, b.mirroring.admin.recoverTopics("dr", "orders"));
    expectTimedOut(error, "recover", tookMs);
    expect((await onlyRowOf(b)).state).toBe("FAILED");

    fillDisks(b, false);
    await untilCaughtUp(t, b, "dr caught up once space is freed");
  });

  it("a promote whose failover is not recorded within its timeoutMs says the failover was made and goes on", async () => {
    const { t, b } = await mirrored();
    fillDisks(b, true);
    // Its own timeoutMs bounds the STOP phase, not defaultApiTimeoutMs (KafkaAdminClient.calcDeadlineMs).
    const { error, tookMs } = await refusal(
      t,
      b.mirroring.admin.promoteTopics("dr", "orders", { timeoutMs: 30_000 }),
    );
    expect(error).toBeInstanceOf(PromoteTimeoutError);
    expect(error).toMatchObject({ phase: "STOP", retriable: true });
    expect((error as Error).message).toMatch(
      /failed its topics over, but after 30000 ms 1 partition\(s\) are not STOPPED yet: orders-0 \(MIRRORING\)/,
    );
    expect(tookMs).toBeGreaterThanOrEqual(30_000);
    expect(tookMs).toBeLessThan(31_000);

    fillDisks(b, false);
    await t.until(async () => (await onlyRowOf(b)).state === "STOPPED", "STOPPED once space is freed");
  });

  it("a promote with a timeoutMs longer than defaultApiTimeoutMs waits that long for its failover", async () => {
    const { t, b } = await mirrored();
    fillDisks(b, true);
    // Space freed 90 s in: past default.api.timeout.ms, within the promote's own 240 s.
    const freed = t.scheduler.schedule(() => fillDisks(b, false), 90_000);
    const result = await t.run(
      b.mirroring.admin.promoteTopics("dr", "orders", { timeoutMs: 240_000 }),
      300_000,
    );
    freed();
    expect(result.topics).toEqual(["orders"]);
    expect((await onlyRowOf(b)).state).toBe("STOPPED");
    expect(b.cluster.isDiskFull(0)).toBe(false);
  });

  it("the bound is defaultApiTimeoutMs", async () => {
    const { t, b } = await mirrored({ defaultApiTimeoutMs: 5_000 });
    await t.run(b.mirroring.admin.pauseTopics("dr", "orders"));
    await t.until(async () => (await onlyRowOf(b)).state === "PAUSED", "PAUSED");
    fillDisks(b, true);
    const { error, tookMs } = await refusal(t, b.mirroring.admin.resumeTopics("dr", "orders"));
    expectTimedOut(error, "resume", tookMs, 5_000);
    expect(b.cluster.controller.image.topic("orders")!.configs.get("mirror.name")).toBe("dr");

    fillDisks(b, false);
    await untilCaughtUp(t, b, "dr caught up once space is freed");
  });
});
