import { describe, expect, it } from "vitest";
import { initialTransition, transition } from "xstate";
import { type FetcherEvent, fetcherMachine } from "../src/index";

function run(events: FetcherEvent[]) {
  let [s, actions] = initialTransition(fetcherMachine, {
    backoff: { baseMs: 100, capMs: 1000, maxAttempts: 5 },
  });
  const effects: { type: string; params?: unknown }[][] = [
    actions.map((a) => ({ type: a.type, params: a.params })),
  ];
  for (const e of events) {
    [s, actions] = transition(fetcherMachine, s, e);
    effects.push(actions.map((a) => ({ type: a.type, params: a.params })));
  }
  return { snapshot: s, effects };
}

describe("fetcher", () => {
  it("a partition error is reported for that partition only; the others keep fetching", () => {
    const { snapshot, effects } = run([
      { type: "ADD_PARTITIONS", partitions: ["t-0", "t-1", "t-2"] },
      {
        type: "FETCH_COMPLETED",
        errors: [{ partition: "t-1", message: "CORRUPT_MESSAGE", retryable: false }],
        throttleTimeMs: 0,
      },
    ]);
    expect(snapshot.value).toBe("fetching");
    expect(snapshot.context.partitions).toEqual(["t-0", "t-2"]);
    expect(effects[2]).toEqual([
      {
        type: "reportPartitionErrors",
        params: { errors: [{ partition: "t-1", message: "CORRUPT_MESSAGE", retryable: false }] },
      },
      { type: "sendFetch", params: { partitions: ["t-0", "t-2"] } },
    ]);
  });

  it("backs off on request failure, waits out a throttle, goes idle without partitions, stops", () => {
    const { snapshot, effects } = run([
      { type: "ADD_PARTITIONS", partitions: ["t-0"] },
      { type: "FETCH_FAILED", message: "connection refused", random: 0.5 },
      { type: "BACKOFF_ELAPSED" },
      { type: "FETCH_FAILED", message: "connection refused", random: 0.5 },
      { type: "BACKOFF_ELAPSED" },
      { type: "FETCH_COMPLETED", errors: [], throttleTimeMs: 250 },
      { type: "THROTTLE_ELAPSED" },
      { type: "REMOVE_PARTITIONS", partitions: ["t-0"] },
      { type: "STOP" },
    ]);
    expect(effects[2]).toEqual([{ type: "scheduleBackoff", params: { delayMs: 50 } }]);
    expect(effects[4]).toEqual([{ type: "scheduleBackoff", params: { delayMs: 100 } }]);
    expect(effects[6]).toContainEqual({ type: "scheduleThrottle", params: { delayMs: 250 } });
    expect(effects[8]).toEqual([]);
    expect(effects[9]).toEqual([{ type: "closeFetcher", params: undefined }]);
    expect(snapshot.status).toBe("done");
  });
});
