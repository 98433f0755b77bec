import { describe, expect, it } from "vitest";
import { initialTransition, transition } from "xstate";
import { type CoordinatorShardEvent, coordinatorShardMachine } from "../src/index";

function run(events: CoordinatorShardEvent[]) {
  let [s, actions] = initialTransition(coordinatorShardMachine, { partition: 3 });
  const effects: string[][] = [actions.map((a) => a.type)];
  for (const e of events) {
    [s, actions] = transition(coordinatorShardMachine, s, e);
    effects.push(actions.map((a) => a.type));
  }
  return { state: s.value, epoch: s.context.leaderEpoch, effects };
}

describe("coordinator shard", () => {
  it("INITIAL -> LOADING -> ACTIVE -> CLOSED on election, load and resignation", () => {
    const r = run([
      { type: "ELECTED", leaderEpoch: 5 },
      { type: "LOAD_COMPLETED", leaderEpoch: 5 },
      { type: "RESIGNED", leaderEpoch: 6 },
    ]);
    expect(r.state).toBe("CLOSED");
    expect(r.effects).toEqual([[], ["loadPartition"], ["activateShard"], ["unloadShard"]]);
  });

  it("ignores elections, resignations and load results from another epoch", () => {
    const r = run([
      { type: "ELECTED", leaderEpoch: 5 },
      { type: "RESIGNED", leaderEpoch: 5 },
      { type: "ELECTED", leaderEpoch: 4 },
      { type: "LOAD_COMPLETED", leaderEpoch: 4 },
      { type: "LOAD_FAILED", leaderEpoch: 4, message: "old" },
    ]);
    expect(r.state).toBe("LOADING");
    expect(r.epoch).toBe(5);
  });

  it("a resignation without an epoch unloads; one during a load aborts it", () => {
    expect(
      run([
        { type: "ELECTED", leaderEpoch: 5 },
        { type: "LOAD_COMPLETED", leaderEpoch: 5 },
        { type: "RESIGNED" },
      ]).state,
    ).toBe("CLOSED");
    const r = run([
      { type: "ELECTED", leaderEpoch: 5 },
      { type: "RESIGNED", leaderEpoch: 6 },
      { type: "LOAD_COMPLETED", leaderEpoch: 5 },
    ]);
    expect(r.state).toBe("CLOSED");
    expect(r.effects[2]).toEqual(["abortLoad"]);
  });

  it("LOAD_FAILED aborts the load; RETRY_LOAD and STATE_DIVERGED count only for the current epoch", () => {
    const r = run([
      { type: "ELECTED", leaderEpoch: 5 },
      { type: "ELECTED", leaderEpoch: 7 },
      { type: "LOAD_FAILED", leaderEpoch: 7, message: "corrupt record" },
      { type: "RETRY_LOAD", leaderEpoch: 6 },
      { type: "RETRY_LOAD", leaderEpoch: 7 },
      { type: "LOAD_COMPLETED", leaderEpoch: 7 },
      { type: "STATE_DIVERGED", leaderEpoch: 6, message: "old" },
      { type: "STATE_DIVERGED", leaderEpoch: 7, message: "offset mismatch" },
    ]);
    expect(r.effects[2]).toEqual(["abortLoad", "loadPartition"]);
    expect(r.effects[3]).toEqual(["abortLoad"]);
    expect(r.effects[4]).toEqual([]);
    expect(r.effects[5]).toEqual(["loadPartition"]);
    expect(r.effects[7]).toEqual([]);
    expect(r.effects[8]).toEqual(["unloadShard"]);
    expect(r.state).toBe("FAILED");
  });

  it("ACTIVE adopts a newer epoch in place, or reloads when asked", () => {
    const inPlace = run([
      { type: "ELECTED", leaderEpoch: 1 },
      { type: "LOAD_COMPLETED", leaderEpoch: 1 },
      { type: "ELECTED", leaderEpoch: 2 },
    ]);
    expect(inPlace).toMatchObject({ state: "ACTIVE", epoch: 2 });
    expect(inPlace.effects[3]).toEqual(["updateShardEpoch"]);
    const reload = run([
      { type: "ELECTED", leaderEpoch: 1 },
      { type: "LOAD_COMPLETED", leaderEpoch: 1 },
      { type: "ELECTED", leaderEpoch: 3, reload: true },
    ]);
    expect(reload).toMatchObject({ state: "LOADING", epoch: 3 });
    expect(reload.effects[3]).toEqual(["unloadShard", "loadPartition"]);
  });
});
