import { describe, expect, it } from "vitest";
import { FleetModel } from "../src/fleet/fleet-model";
import { actorEvent, type PartitionContext, snapshotEvent, stoppedEvent } from "../src/inspection";

const context = (partition: number, over: Partial<PartitionContext> = {}): PartitionContext => ({
  cluster: "dr",
  mirror: "m",
  topic: "orders",
  topicId: "t1",
  partition,
  stateEpoch: 2,
  leaderEpoch: 0,
  retryAttempt: 0,
  errorMessage: null,
  previousState: "PREPARING",
  lag: 0,
  ...over,
});

describe("the live fleet model", () => {
  it("rolls up 10,000 partitions per mirror and orders exceptions first, then by lag", () => {
    const model = new FleetModel();
    for (let p = 0; p < 10_000; p++) model.apply(actorEvent("MIRRORING", context(p, { lag: p % 7 }), 0));
    model.apply(
      snapshotEvent(
        "FAILED",
        context(42, { errorMessage: "source unreachable", stateEpoch: 3 }),
        { type: "COMMITTED" },
        1,
      ),
    );
    model.apply(snapshotEvent("STOPPING", context(7, { stateEpoch: 3 }), { type: "STOP" }, 1));
    const [summary] = model.mirrors();
    expect(summary).toMatchObject({
      mirror: "m",
      total: 10_000,
      counts: { MIRRORING: 9_998, FAILED: 1, STOPPING: 1 },
      errors: [{ message: "source unreachable", count: 1 }],
    });
    const ordered = model.ordered();
    expect(ordered.slice(0, 2).map((c) => `${c.context.partition} ${c.state}`)).toEqual([
      "42 FAILED",
      "7 STOPPING",
    ]);
    expect(ordered[2]?.context.lag).toBe(6);
  });

  it("ignores an event that changes nothing, so an unchanged fleet does not redraw", () => {
    const model = new FleetModel();
    expect(model.apply(actorEvent("MIRRORING", context(0), 0))).toBe(true);
    const version = model.version;
    expect(model.apply(snapshotEvent("MIRRORING", context(0), { type: "cluster-mirror.lag" }, 5))).toBe(
      false,
    );
    expect(model.version).toBe(version);
    expect(
      model.apply(snapshotEvent("MIRRORING", context(0, { lag: 3 }), { type: "cluster-mirror.lag" }, 5)),
    ).toBe(true);
  });

  it("drops a partition whose actor stopped (its mirror deleted) from the grid and the roll-ups", () => {
    const model = new FleetModel();
    model.apply(actorEvent("STOPPED", context(0), 0));
    model.apply(actorEvent("STOPPED", context(1), 0));
    model.apply(actorEvent("MIRRORING", context(0, { mirror: "other" }), 0));
    expect(model.apply(stoppedEvent("STOPPED", context(0), 9))).toBe(true);
    expect(model.apply(stoppedEvent("STOPPED", context(1), 9))).toBe(true);
    expect(model.apply(stoppedEvent("STOPPED", context(1), 9))).toBe(false);
    expect(model.get("dr/m/orders-0")).toBeUndefined();
    expect(model.ordered().map((c) => c.id)).toEqual(["dr/other/orders-0"]);
    expect(model.mirrors().map((s) => `${s.mirror} ${s.total}`)).toEqual(["other 1"]);
  });
});
