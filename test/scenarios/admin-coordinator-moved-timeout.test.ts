import {
  MIRROR_STATE_TOPIC,
  MirrorCommandTimeoutError,
  mirrorStatePartitionFor,
  PromoteTimeoutError,
} from "@cluster-mirror/mirror";
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
 * Kafka's admin client bounds a call from its start (`KafkaAdminClient.calcDeadlineMs`: the call's
 * `timeoutMs`, else `default.api.timeout.ms`): a call refused NOT_COORDINATOR is sent again to the new
 * coordinator while the deadline allows, and times out at the deadline (`Call.fail`, `handleTimeouts`),
 * however long the new coordinator takes to be found.
 */

/** `orders` on a, mirrored to b by `dr` (defaultApiTimeoutMs 5 s) until caught up. */
async function mirrored() {
  const t = topology(["a", "b"], { defaultApiTimeoutMs: 5_000, brokers: 4, seed: 2 });
  const [a, b] = [t.node("a"), t.node("b")];
  await ordersOn(t, a, 3);
  await t.run(b.mirroring.admin.createMirror("dr", { "bootstrap.servers": "a:9092" }));
  await t.run(b.mirroring.admin.addTopics("dr", "orders"));
  await untilCaughtUp(t, b, "dr caught up");
  return { t, b };
}

function fillDisks(b: Node, full: boolean): void {
  for (const id of b.cluster.runningBrokers()) b.cluster.setDiskFull(id, full);
}

/**
 * `operation` (a pause unless told) started while b's disks are full (its records wait), and `movedAtMs`
 * into it the leader of the `__mirror_state` partition of orders-0 crashes while b's controller is away:
 * the command is answered NOT_COORDINATOR, and no coordinator serves it until the controller, back
 * `electedAtMs` in, elects another leader. Returns what the operation answered (its result or its
 * rejection) and how long it took.
 */
async function whileCoordinatorMoves(
  t: Topology,
  b: Node,
  movedAtMs: number,
  electedAtMs: number,
  operation: () => Promise<unknown> = () => b.mirroring.admin.pauseTopics("dr", "orders"),
) {
  const [view] = b.mirroring.coordinators.describe("dr");
  const statePartition = mirrorStatePartitionFor(view!.key, 4);
  const stateLeader = b.cluster.controller.image.partition(MIRROR_STATE_TOPIC, statePartition)!.leader;
  fillDisks(b, true);
  const start = t.clock.now();
  t.scheduler.schedule(() => {
    b.cluster.controller.setAvailable(false);
    b.cluster.crashBroker(stateLeader);
  }, movedAtMs);
  t.scheduler.schedule(() => b.cluster.controller.setAvailable(true), electedAtMs);
  const answer = await t.run(operation(), 300_000).catch((e: unknown) => e);
  const tookMs = t.clock.now() - start;
  return { answer, tookMs };
}

describe("an admin operation whose coordinator moves while its command waits to be recorded", () => {
  it("the new coordinator loads after the deadline: the timeout comes at the deadline and says how long it waited", async () => {
    const { t, b } = await mirrored();
    const { answer: error, tookMs } = await whileCoordinatorMoves(t, b, 4_000, 8_000);
    expect(error).toBeInstanceOf(MirrorCommandTimeoutError);
    expect(error).toMatchObject({ errorName: "REQUEST_TIMED_OUT", retriable: true, timeoutMs: 5_000 });
    expect((error as Error).message).toMatch(
      /^The pause of \[orders\] in mirror 'dr' timed out after 5000 ms/,
    );
    expect(tookMs).toBeGreaterThanOrEqual(5_000);
    expect(tookMs).toBeLessThan(6_000);
    // mirror.name asks for the pause: it takes effect once the coordinator can write.
    expect(b.cluster.controller.image.topic("orders")!.configs.get("mirror.name")).toBe("dr.paused");
    fillDisks(b, false);
    await t.until(async () => (await onlyRowOf(b)).state === "PAUSED", "PAUSED once space is freed");
  });

  it("the new coordinator loads before the deadline: the second round's timeout says the whole wait", async () => {
    const { t, b } = await mirrored();
    const { answer: error, tookMs } = await whileCoordinatorMoves(t, b, 3_000, 4_000);
    expect(error).toBeInstanceOf(MirrorCommandTimeoutError);
    expect(error).toMatchObject({ timeoutMs: 5_000 });
    expect((error as Error).message).toMatch(
      /^The pause of \[orders\] in mirror 'dr' timed out after 5000 ms/,
    );
    expect(tookMs).toBeGreaterThanOrEqual(5_000);
    expect(tookMs).toBeLessThan(6_000);
  });

  it("a promote's STOP phase ends at its own timeoutMs, not once the moved coordinator loaded", async () => {
    const { t, b } = await mirrored();
    const { answer: error, tookMs } = await whileCoordinatorMoves(t, b, 2_000, 8_000, () =>
      b.mirroring.admin.promoteTopics("dr", "orders", { timeoutMs: 4_000 }),
    );
    expect(error).toBeInstanceOf(PromoteTimeoutError);
    expect(error).toMatchObject({ phase: "STOP", retriable: true });
    expect(tookMs).toBeGreaterThanOrEqual(4_000);
    expect(tookMs).toBeLessThan(5_000);
    fillDisks(b, false);
    await t.until(async () => (await onlyRowOf(b)).state === "STOPPED", "STOPPED once space is freed");
  });

  it("the new coordinator loads in time: the second round is sent and the pause succeeds", async () => {
    const { t, b } = await mirrored();
    t.scheduler.schedule(() => fillDisks(b, false), 3_000);
    const { answer, tookMs } = await whileCoordinatorMoves(t, b, 2_000, 3_000);
    expect(answer).toMatchObject({ topics: ["orders"] });
    expect(tookMs).toBeLessThan(5_000);
    await t.until(async () => (await onlyRowOf(b)).state === "PAUSED", "PAUSED");
  });

  it("a recover's second round: the timeout comes at the deadline and says how long it waited", async () => {
    const { t, b } = await mirrored();
    await failForGood(t, b);
    const { answer: error, tookMs } = await whileCoordinatorMoves(t, b, 4_000, 8_000, () =>
      b.mirroring.admin.recoverTopics("dr", "orders"),
    );
    expect(error).toBeInstanceOf(MirrorCommandTimeoutError);
    expect(error).toMatchObject({ operation: "recover", timeoutMs: 5_000 });
    expect((error as Error).message).toMatch(
      /^The recover of \[orders\] in mirror 'dr' timed out after 5000 ms/,
    );
    expect(tookMs).toBeGreaterThanOrEqual(5_000);
    expect(tookMs).toBeLessThan(6_000);
    // Its coordinator moved: the recover it was sent went with it, and is not sent past the deadline.
    expect((error as Error).message).toMatch(/stays FAILED until it is run again/);
    fillDisks(b, false);
    await t.advance(10_000);
    expect((await onlyRowOf(b)).state).toBe("FAILED");
    await t.run(b.mirroring.admin.recoverTopics("dr", "orders"));
    await untilCaughtUp(t, b, "dr caught up once recovered again");
  });
});
