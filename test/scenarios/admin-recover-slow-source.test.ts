import { sleep } from "@cluster-mirror/cluster";
import type { SourceConnector } from "@cluster-mirror/mirror";
import { describe, expect, it } from "vitest";
import { failForGood, ordersOn, topology, untilCaughtUp } from "./helpers";

/**
 * A recover checks the source before it sends RECOVER (its cluster id, each topic's id): over a slow link
 * those checks may take longer than `defaultApiTimeoutMs`. That bound is the coordinators' wait to record
 * the commands (as `drive`'s, from its first command), not the source's answers.
 */
describe("a recover whose checks on the source take longer than defaultApiTimeoutMs", () => {
  it("recovers, rather than timing out before the coordinators had a moment to record it", async () => {
    let slowMs = 0;
    const slow = (inner: SourceConnector, scheduler: Parameters<typeof sleep>[0]): SourceConnector => ({
      connect(name, configs, options) {
        const real = inner.connect(name, configs, options);
        return new Proxy(real, {
          get(target, prop, receiver) {
            if (prop !== "clusterId") return Reflect.get(target, prop, receiver);
            return async () => {
              if (slowMs > 0) await sleep(scheduler, slowMs);
              return target.clusterId();
            };
          },
        });
      },
    });
    const t = topology(["a", "b"], { wrapSources: slow });
    const [a, b] = [t.node("a"), t.node("b")];
    await ordersOn(t, a, 3);
    await t.run(b.mirroring.admin.createMirror("dr", { "bootstrap.servers": "a:9092" }));
    await t.run(b.mirroring.admin.addTopics("dr", "orders"));
    await untilCaughtUp(t, b, "dr caught up");
    // Failed for good (no retry of its own): only the recover brings it back.
    await failForGood(t, b);

    slowMs = 70_000;
    const start = t.clock.now();
    const result = await t.run(b.mirroring.admin.recoverTopics("dr", "orders"), 300_000);
    slowMs = 0;
    expect(t.clock.now() - start).toBeGreaterThanOrEqual(70_000);
    expect(result.partitions).toHaveLength(1);
    await untilCaughtUp(t, b, "dr caught up after the recover");
  });
});
