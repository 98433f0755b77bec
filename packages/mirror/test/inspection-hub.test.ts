import { describe, expect, it } from "vitest";
import type { AnyActorRef, InspectionEvent } from "xstate";
import { InspectionHub } from "../src/coordinator/inspection-hub";
import { MIRROR_STATE_TOPIC } from "../src/destination/embedded-state-log";
import { mirrorEnv } from "./core-helpers";

/** The shard ids (`__mirror_state-N`) whose own snapshots `events` holds. */
function shardSnapshots(events: readonly InspectionEvent[]): string[] {
  return events
    .filter((e) => e.type === "@xstate.snapshot")
    .map((e) => (e.actorRef as AnyActorRef).id)
    .filter((id) => id.startsWith(`${MIRROR_STATE_TOPIC}-`));
}

describe("InspectionHub: the coordinators' actor systems follow leadership of __mirror_state", () => {
  it("drops a shard's system when the shard unloads (crash, resignation) and takes it back when it loads again", async () => {
    const hub = new InspectionHub();
    const env = await mirrorEnv({ inspection: hub });
    const key = await env.createTopic(5);
    void env.router.command(key, { type: "START" }).catch(() => {});
    await env.settle(1000);
    const events: InspectionEvent[] = [];
    hub.inspect((e) => events.push(e));
    // One shard per __mirror_state partition, on its leader (the test's fetchers are not actors).
    expect(hub.size).toBe(env.numStatePartitions);

    // The coordinator's broker dies: its partitions' leadership moves and the new leaders load them.
    const first = env.coordinatorBroker(key);
    env.crash(first);
    await env.settle(3000);
    const second = env.coordinatorBroker(key);
    expect(second).not.toBe(first);
    expect(hub.size).toBe(env.numStatePartitions);

    // It comes back and leadership moves back to it: the interim leaders resign (their brokers keep running).
    env.dest.startBroker(first);
    env.startRuntime(first);
    await env.settle(1000);
    env.dest.controller.electPreferredLeaders();
    await env.settle(3000);
    expect(env.coordinatorBroker(key)).toBe(first);
    expect(hub.size).toBe(env.numStatePartitions);
    expect(env.stateOf(key)?.state).toBe("MIRRORING");

    // The interim leader's shard (CLOSED, kept by its runtime) loads again when it is elected again, and is
    // observed again: every shard that leads now is seen from its election.
    events.length = 0;
    env.crash(first);
    await env.settle(3000);
    expect(env.coordinatorBroker(key)).toBe(second);
    expect(hub.size).toBe(env.numStatePartitions);
    const partition = env.runtimes.get(second)?.statePartitionOf(key) as number;
    expect(shardSnapshots(events)).toContain(`${MIRROR_STATE_TOPIC}-${partition}`);
    expect(env.runtimes.get(second)?.shardFor(partition)?.state).toBe("ACTIVE");
  });
});
