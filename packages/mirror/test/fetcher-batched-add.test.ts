import { describe, expect, it } from "vitest";
import { InspectionHub } from "../src/coordinator/inspection-hub";
import { EmbeddedDestination } from "../src/destination/embedded-destination";
import { MirrorFetcherManager } from "../src/fetcher/mirror-fetcher-manager";
import { drive, mirrorEnv } from "./data-helpers";

const PARTITIONS = 50;

describe("mirror fetcher: partitions added together", () => {
  it("a fetcher takes the partitions added in one task as one ADD_PARTITIONS, and shows them at once", async () => {
    const env = mirrorEnv({ sourceAssignment: Array.from({ length: PARTITIONS }, () => [0]) });
    const hub = new InspectionHub();
    const added: (readonly string[])[] = [];
    hub.inspect((e) => {
      if (e.type === "@xstate.event" && e.event.type === "ADD_PARTITIONS") {
        added.push((e.event as unknown as { partitions: readonly string[] }).partitions);
      }
    });
    const manager = new MirrorFetcherManager({
      brokerId: 0,
      destination: new EmbeddedDestination(env.destination),
      sources: () => env.embeddedSource,
      events: env.events,
      clock: env.clock,
      scheduler: env.scheduler,
      config: () => env.config,
      inspection: hub,
    });
    // The first partition makes the manager learn the source leaders and start the fetcher.
    manager.addPartition(env.key(0));
    await drive(env, 0);
    expect(added.map((ids) => ids.length)).toEqual([1]);
    // A coordinator's load adds every partition in one task: each add used to be one event, and the
    // fetcher machine copies its partition list on every event (quadratic in the partitions per fetcher).
    for (let p = 1; p < PARTITIONS; p++) manager.addPartition(env.key(p));
    // Read in the same task, the fetcher already has them all.
    expect(manager.metrics().fetchers.map((f) => f.partitions.length)).toEqual([PARTITIONS]);
    await drive(env, 0);
    expect(added.map((ids) => ids.length)).toEqual([1, PARTITIONS - 1]);
    await drive(env, 2000);
    expect(manager.metrics().partitions.filter((p) => p.sourceHighWatermark >= 0n)).toHaveLength(PARTITIONS);
    manager.close();
  });
});
