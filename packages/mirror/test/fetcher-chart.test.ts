import { describe, expect, it } from "vitest";
import { fetcherStateName, fetcherTransition, initialFetcherSnapshot } from "../src/fetcher/fetcher-chart";

describe("fetcher chart interpreter (follows fetcherMachine)", () => {
  it("fetches, acknowledges a removal only once the in-flight fetch settles, throttles and backs off", () => {
    let s = initialFetcherSnapshot({ baseMs: 100, capMs: 100, maxAttempts: 0 });
    let step = fetcherTransition(s, { type: "ADD_PARTITIONS", partitions: ["t-0", "t-1"] });
    s = step.snapshot;
    expect(fetcherStateName(s)).toBe("fetching");
    expect(step.effects).toEqual([{ type: "sendFetch", params: { fetchId: 0, partitions: ["t-0", "t-1"] } }]);
    step = fetcherTransition(s, { type: "REMOVE_PARTITIONS", partitions: ["t-1"] });
    s = step.snapshot;
    expect(step.effects).toEqual([]);
    step = fetcherTransition(s, {
      type: "FETCH_COMPLETED",
      fetchId: 0,
      results: [
        { partition: "t-0", error: null, divergingEpoch: { epoch: 1, endOffset: 5 } },
        { partition: "t-1", error: null },
      ],
      throttleTimeMs: 50,
    });
    s = step.snapshot;
    expect(step.effects.map((e) => e.type)).toEqual([
      "truncateToDivergingEpoch",
      "partitionsRemoved",
      "scheduleThrottle",
    ]);
    expect(fetcherStateName(s)).toBe("throttled");
    s = fetcherTransition(s, { type: "TRUNCATION_COMPLETED", partition: "t-0" }).snapshot;
    step = fetcherTransition(s, { type: "THROTTLE_ELAPSED" });
    s = step.snapshot;
    expect(step.effects).toEqual([{ type: "sendFetch", params: { fetchId: 1, partitions: ["t-0"] } }]);
    step = fetcherTransition(s, { type: "FETCH_FAILED", fetchId: 1, message: "down", random: 0.5 });
    expect(fetcherStateName(step.snapshot)).toBe("backingOff");
    expect(step.effects).toEqual([{ type: "scheduleBackoff", params: { delayMs: 50 } }]);
    // A stale answer is ignored; STOP closes the fetcher.
    expect(
      fetcherTransition(step.snapshot, { type: "FETCH_FAILED", fetchId: 0, message: "", random: 0 }).effects,
    ).toEqual([]);
    const stopped = fetcherTransition(step.snapshot, { type: "STOP" });
    expect(fetcherStateName(stopped.snapshot)).toBe("stopped");
    expect(stopped.effects).toEqual([{ type: "closeFetcher", params: { partitions: ["t-0"] } }]);
  });
});
