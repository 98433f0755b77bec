import { describe, expect, it } from "vitest";
import { initialTransition, transition } from "xstate";
import { classifyFetchResult, type FetcherEvent, fetcherMachine } from "../src/index";

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
  it("classifies each partition's result", () => {
    expect(classifyFetchResult({ partition: "p", error: null })).toBe("ok");
    expect(classifyFetchResult({ partition: "p", error: "CORRUPT_MESSAGE" })).toBe("fatal");
    expect(classifyFetchResult({ partition: "p", error: "SOMETHING_NEW" })).toBe("fatal");
    expect(classifyFetchResult({ partition: "p", error: "NOT_LEADER_OR_FOLLOWER" })).toBe("retriable");
    expect(classifyFetchResult({ partition: "p", error: "OFFSET_OUT_OF_RANGE" })).toBe("offsetOutOfRange");
    expect(
      classifyFetchResult({ partition: "p", error: null, divergingEpoch: { epoch: 3, endOffset: 10 } }),
    ).toBe("divergingEpoch");
  });

  it("fails fatal partitions, re-routes retriable ones, truncates and continues the rest", () => {
    const { snapshot, effects } = run([
      { type: "ADD_PARTITIONS", partitions: ["t-0", "t-1", "t-2", "t-3", "t-4"] },
      {
        type: "FETCH_COMPLETED",
        fetchId: 0,
        throttleTimeMs: 0,
        results: [
          { partition: "t-0", error: null },
          { partition: "t-1", error: "CORRUPT_MESSAGE" },
          { partition: "t-2", error: "FENCED_LEADER_EPOCH" },
          { partition: "t-3", error: "OFFSET_OUT_OF_RANGE" },
          { partition: "t-4", error: null, divergingEpoch: { epoch: 2, endOffset: 40 } },
        ],
      },
      { type: "TRUNCATION_COMPLETED", partition: "t-3" },
    ]);
    expect(effects[1]).toEqual([
      { type: "sendFetch", params: { fetchId: 0, partitions: ["t-0", "t-1", "t-2", "t-3", "t-4"] } },
    ]);
    expect(effects[2]).toEqual([
      { type: "truncateFullyAndStartAt", params: { fetchId: 0, partition: "t-3" } },
      { type: "truncateToDivergingEpoch", params: { fetchId: 0, partition: "t-4", epoch: 2, endOffset: 40 } },
      {
        type: "reportPartitionFailures",
        params: { fetchId: 0, failures: [{ partition: "t-1", error: "CORRUPT_MESSAGE" }] },
      },
      {
        type: "reroutePartitions",
        params: { fetchId: 0, partitions: [{ partition: "t-2", error: "FENCED_LEADER_EPOCH" }] },
      },
      { type: "sendFetch", params: { fetchId: 1, partitions: ["t-0"] } },
    ]);
    expect(effects[3]).toEqual([]); // t-3 joins the next fetch, not the one in flight
    expect(snapshot.context.truncating).toEqual(["t-4"]);
    expect(snapshot.context.partitions).toEqual(["t-0", "t-3", "t-4"]);
  });

  it("drops a response for another fetch id", () => {
    const { effects } = run([
      { type: "ADD_PARTITIONS", partitions: ["t-0"] },
      { type: "FETCH_COMPLETED", fetchId: 7, results: [], throttleTimeMs: 0 },
      { type: "FETCH_FAILED", fetchId: 7, message: "x", random: 0.5 },
    ]);
    expect(effects[2]).toEqual([]);
    expect(effects[3]).toEqual([]);
  });

  it("acknowledges a removal only once no in-flight fetch includes the partition", () => {
    const { effects } = run([
      { type: "ADD_PARTITIONS", partitions: ["t-0", "t-1"] },
      { type: "REMOVE_PARTITIONS", partitions: ["t-1", "t-9"] },
      {
        type: "FETCH_COMPLETED",
        fetchId: 0,
        results: [{ partition: "t-1", error: "CORRUPT_MESSAGE" }],
        throttleTimeMs: 0,
      },
    ]);
    expect(effects[2]).toEqual([{ type: "partitionsRemoved", params: { partitions: ["t-9"] } }]);
    expect(effects[3]).toEqual([
      { type: "partitionsRemoved", params: { partitions: ["t-1"] } },
      { type: "sendFetch", params: { fetchId: 1, partitions: ["t-0"] } },
    ]);
  });

  it("waits after a round that brought nothing (waiting), apart from a quota's throttle (throttled)", () => {
    const { snapshot, effects } = run([
      { type: "ADD_PARTITIONS", partitions: ["t-0"] },
      { type: "FETCH_COMPLETED", fetchId: 0, results: [], throttleTimeMs: 0, fetchWaitMs: 500 },
    ]);
    expect(snapshot.value).toBe("waiting");
    expect(effects[2]).toEqual([{ type: "scheduleFetchWait", params: { delayMs: 500 } }]);
    // Only its own timer ends the wait.
    expect(transition(fetcherMachine, snapshot, { type: "THROTTLE_ELAPSED" })[0].value).toBe("waiting");
    const [next, actions] = transition(fetcherMachine, snapshot, { type: "FETCH_WAIT_ELAPSED" });
    expect(next.value).toBe("fetching");
    expect(actions.map((a) => a.params)).toEqual([{ fetchId: 1, partitions: ["t-0"] }]);
    // A throttled empty round is throttled, for the longer of the two waits.
    const throttled = transition(fetcherMachine, next, {
      type: "FETCH_COMPLETED",
      fetchId: 1,
      results: [],
      throttleTimeMs: 200,
      fetchWaitMs: 500,
    });
    expect(throttled[0].value).toBe("throttled");
    expect(throttled[1].map((a) => ({ type: a.type, params: a.params }))).toEqual([
      { type: "scheduleThrottle", params: { delayMs: 500 } },
    ]);
  });

  it("backs off on request failure, waits out a throttle, goes idle without partitions, stops", () => {
    const { snapshot, effects } = run([
      { type: "ADD_PARTITIONS", partitions: ["t-0"] },
      { type: "FETCH_FAILED", fetchId: 0, message: "connection refused", random: 0.5 },
      { type: "BACKOFF_ELAPSED" },
      { type: "FETCH_FAILED", fetchId: 1, message: "connection refused", random: 0.5 },
      { type: "BACKOFF_ELAPSED" },
      { type: "FETCH_COMPLETED", fetchId: 2, results: [], throttleTimeMs: 250 },
      { type: "THROTTLE_ELAPSED" },
      { type: "REMOVE_PARTITIONS", partitions: ["t-0"] },
      { type: "FETCH_COMPLETED", fetchId: 3, results: [], throttleTimeMs: 0 },
      { type: "STOP" },
    ]);
    expect(effects[2]).toEqual([{ type: "scheduleBackoff", params: { delayMs: 50 } }]);
    expect(effects[4]).toEqual([{ type: "scheduleBackoff", params: { delayMs: 100 } }]);
    expect(effects[6]).toEqual([{ type: "scheduleThrottle", params: { delayMs: 250 } }]);
    expect(effects[8]).toEqual([]);
    expect(effects[9]).toEqual([{ type: "partitionsRemoved", params: { partitions: ["t-0"] } }]);
    expect(effects[10]).toEqual([{ type: "closeFetcher", params: { partitions: [] } }]);
    expect(snapshot.status).toBe("done");
  });
});
