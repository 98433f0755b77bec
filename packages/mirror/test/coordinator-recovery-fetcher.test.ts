import { describe, expect, it } from "vitest";
import { mirrorEnv, TOPIC } from "./core-helpers";

describe("coordinator runtime: a recovered fetching partition adds its fetcher", () => {
  it("MIRRORING back from EPOCH_FENCING, after a crash of the coordinator and of the data leader: the new leader fetches", async () => {
    const env = await mirrorEnv();
    const key = await env.createTopic(5);
    void env.router.command(key, { type: "START" });
    await env.settle(1000);
    expect(env.stateOf(key)?.state).toBe("MIRRORING");
    // A fetched batch above the local leader epoch: EPOCH_FENCING bumps the epoch and commits MIRRORING
    // again (previous state EPOCH_FENCING), keeping the fetcher it already had.
    const oldLeader = env.destination.leaderOf(TOPIC, 0);
    const localEpoch = env.destination.replica(oldLeader, TOPIC, 0)!.leaderEpoch();
    env.router.epochObserved(key, localEpoch + 10, localEpoch);
    await env.settle(1000);
    expect(env.stateOf(key)?.state).toBe("MIRRORING");
    expect(env.destination.replica(oldLeader, TOPIC, 0)!.leaderEpoch()).toBeGreaterThanOrEqual(
      localEpoch + 10,
    );
    expect(env.fetcherOf(oldLeader).calls).toEqual([
      `add ${TOPIC}-0`,
      `hold ${TOPIC}-0`,
      `release ${TOPIC}-0`,
    ]);

    // The coordinator's broker and the data leader's die (its fetchers with it): the one broker left
    // leads both. No coordinator had the partition loaded when it was elected, so only the recovered
    // partition can start its fetcher there.
    const coordinator = env.coordinatorBroker(key);
    env.crash(coordinator);
    if (oldLeader !== coordinator) env.crash(oldLeader);
    await env.settle(3000);
    const newLeader = env.destination.leaderOf(TOPIC, 0);
    expect(newLeader).not.toBe(oldLeader);
    expect(env.coordinatorBroker(key)).toBe(newLeader);
    expect(env.stateOf(key)?.state).toBe("MIRRORING");
    expect(env.fetcherOf(newLeader).active.has(`${TOPIC}-0`)).toBe(true);
  });
});
