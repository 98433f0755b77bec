import { describe, expect, it } from "vitest";
import { coordinatorOf, failedPreparingSourceDown } from "./failed-retry-helpers";
import { LONG_RETRY_BACKOFF, onlyRowOf, ordersBatches, topology, untilCaughtUp } from "./helpers";

/** `dr`'s metadata refresh interval: each broker of b asks the source on its own cycle of this length. */
const REFRESH = 30_000;

/**
 * A source's return is heard by each broker at its own metadata refresh, not by all at once. The broker that
 * takes over a FAILED's coordination (its `__mirror_state` leader crashed) may have heard it just before it
 * loaded, while the coordinator before had not yet (its refresh came later): no coordinator heard it, and
 * the new one has no more return to hear. Without taking that as heard, the FAILED waited its whole backoff
 * (up to an hour here) with its source long back.
 */
describe("a FAILED partition whose source came back unheard by its coordinator, which then moved", () => {
  it("the next coordinator heard it at its latest refresh, before it loaded: it retries at once", async () => {
    const t = topology(["a", "b"], { retry: LONG_RETRY_BACKOFF });
    const { a, b, created } = await failedPreparingSourceDown(t);
    const coordinator = coordinatorOf(b, "dr");
    const others = [0, 1, 2].filter((id) => id !== coordinator);
    /** Virtual time from now to the next point `at` ms into the coordinator's refresh cycle. */
    const untilCycleAt = (at: number) => (at - ((t.clock.now() - created) % REFRESH) + REFRESH) % REFRESH;

    // The other brokers of b restart 10 s into the coordinator's refresh cycle: theirs runs 10 s after its.
    await t.advance(untilCycleAt(10_000));
    for (const id of others) b.cluster.crashBroker(id);
    for (const id of others) b.cluster.startBroker(id);
    // Every broker of b has found the source down (the restarted ones at their first refresh).
    await t.advance(REFRESH + 5_000);
    expect(await onlyRowOf(b)).toMatchObject({ state: "FAILED", retryAttempt: 0 });

    // The source back 1 s into the coordinator's cycle: the others hear it 9 s later, the coordinator 29 s.
    await t.advance(untilCycleAt(1_000));
    for (const id of [0, 1, 2]) a.cluster.startBroker(id);
    await t.advance(15_000);
    expect(await onlyRowOf(b)).toMatchObject({ state: "FAILED", retryAttempt: 0 });
    b.cluster.crashBroker(coordinator);
    expect(others).toContain(coordinatorOf(b, "dr"));

    const seen: string[] = [];
    b.mirroring.subscribeTransitions((x) => seen.push(`${x.previous.state}->${x.record.state}`));
    const moved = t.clock.now();
    await untilCaughtUp(t, b, "dr caught up under the new coordinator");
    expect(t.clock.now() - moved).toBeLessThan(1_000);
    expect(seen).toEqual(["FAILED->PREPARING", "PREPARING->MIRRORING"]);
    expect(ordersBatches(b)).toEqual(ordersBatches(a));
  });
});
