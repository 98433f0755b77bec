import { sleep } from "@cluster-mirror/cluster";
import { MIRROR_STATE_TOPIC, MirroringClosedError, type SourceConnector } from "@cluster-mirror/mirror";
import { describe, expect, it } from "vitest";
import { failForGood, leaderBatches, ordersOn, topology, untilCaughtUp } from "./helpers";

/** A connector whose source answers `clusterId` after `slowMs` of the topology's clock (0: at once). */
function slowClusterId(delay: { slowMs: number }) {
  return (inner: SourceConnector, scheduler: Parameters<typeof sleep>[0]): SourceConnector => ({
    connect(name, configs, options) {
      const real = inner.connect(name, configs, options);
      return new Proxy(real, {
        get(target, prop, receiver) {
          if (prop !== "clusterId") return Reflect.get(target, prop, receiver);
          return async () => {
            if (delay.slowMs > 0) await sleep(scheduler, delay.slowMs);
            return target.clusterId();
          };
        },
      });
    },
  });
}

/**
 * `orders` mirrored from a to b by `dr` over a source whose `clusterId` answers after `delay.slowMs` (0 for
 * now), then failed for good on b: only a recover brings it back.
 */
async function failedForGoodOverSlowSource() {
  const delay = { slowMs: 0 };
  const t = topology(["a", "b"], { wrapSources: slowClusterId(delay) });
  const [a, b] = [t.node("a"), t.node("b")];
  await ordersOn(t, a, 3);
  await t.run(b.mirroring.admin.createMirror("dr", { "bootstrap.servers": "a:9092" }));
  await t.run(b.mirroring.admin.addTopics("dr", "orders"));
  await untilCaughtUp(t, b, "dr caught up");
  await failForGood(t, b);
  return { delay, t, b };
}

/**
 * A recover checks the source before it sends RECOVER (its cluster id, each topic's id): over a slow link
 * those checks may take longer than `defaultApiTimeoutMs`. That bound is the coordinators' wait to record
 * the commands (as `drive`'s, from its first command), not the source's answers.
 */
describe("a recover whose checks on the source take longer than defaultApiTimeoutMs", () => {
  it("recovers, rather than timing out before the coordinators had a moment to record it", async () => {
    // Failed for good (no retry of its own): only the recover brings it back.
    const { delay, t, b } = await failedForGoodOverSlowSource();

    delay.slowMs = 70_000;
    const start = t.clock.now();
    const result = await t.run(b.mirroring.admin.recoverTopics("dr", "orders"), 300_000);
    delay.slowMs = 0;
    expect(t.clock.now() - start).toBeGreaterThanOrEqual(70_000);
    expect(result.partitions).toHaveLength(1);
    await untilCaughtUp(t, b, "dr caught up after the recover");
  });

  it("fails with MirroringClosedError and sends no RECOVER when close() ran while it waited on the source", async () => {
    const { delay, t, b } = await failedForGoodOverSlowSource();
    const partitions = b.cluster.controller.image.topic(MIRROR_STATE_TOPIC)!.partitions.length;
    const stateRecords = () =>
      Array.from(
        { length: partitions },
        (_, p) => leaderBatches(b.cluster, MIRROR_STATE_TOPIC, p).length,
      ).reduce((x, y) => x + y, 0);
    const before = stateRecords();

    // Every command the engine's coordinators are sent from here on (the router refuses them once closed,
    // NOT_COORDINATOR: a closed engine must not send them at all).
    const sent: string[] = [];
    const router = b.mirroring.coordinators;
    const command = router.command.bind(router);
    router.command = (key, c) => {
      sent.push(`${c.type} ${key.topic}-${key.partition}`);
      return command(key, c);
    };
    // Started before close(): its closed check passes, then it waits on the source's cluster id.
    delay.slowMs = 10_000;
    const outcome = b.mirroring.admin.recoverTopics("dr", "orders").then(
      (result) => result,
      (error: unknown) => error,
    );
    await t.advance(1_000);
    b.mirroring.close();
    const error = await t.run(outcome, 60_000);
    expect(error, String(error)).toBeInstanceOf(MirroringClosedError);
    expect(sent).toEqual([]);
    // Nothing recorded: the partition's last __mirror_state record is still its FAILED one.
    expect(stateRecords()).toBe(before);
  });
});
