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

  it("ignores an election or resignation whose epoch is not newer, and a stale load result", () => {
    const r = run([
      { type: "ELECTED", leaderEpoch: 5 },
      { type: "RESIGNED", leaderEpoch: 5 },
      { type: "ELECTED", leaderEpoch: 4 },
      { type: "LOAD_COMPLETED", leaderEpoch: 4 },
    ]);
    expect(r.state).toBe("LOADING");
    expect(r.epoch).toBe(5);
  });

  it("resignation during a load aborts it", () => {
    const r = run([
      { type: "ELECTED", leaderEpoch: 5 },
      { type: "RESIGNED", leaderEpoch: 6 },
      { type: "LOAD_COMPLETED", leaderEpoch: 5 },
    ]);
    expect(r.state).toBe("CLOSED");
    expect(r.effects[2]).toEqual(["abortLoad"]);
  });

  it("a newer election during a load restarts it; failures reload", () => {
    const r = run([
      { type: "ELECTED", leaderEpoch: 5 },
      { type: "ELECTED", leaderEpoch: 7 },
      { type: "LOAD_FAILED", leaderEpoch: 7, message: "corrupt record" },
      { type: "RETRY_LOAD" },
      { type: "LOAD_COMPLETED", leaderEpoch: 7 },
      { type: "STATE_DIVERGED", message: "offset mismatch" },
    ]);
    expect(r.effects[2]).toEqual(["abortLoad", "loadPartition"]);
    expect(r.effects[4]).toEqual(["loadPartition"]);
    expect(r.state).toBe("FAILED");
  });

  it("a closed shard loads again when elected with a newer epoch", () => {
    const r = run([
      { type: "ELECTED", leaderEpoch: 1 },
      { type: "RESIGNED", leaderEpoch: 2 },
      { type: "ELECTED", leaderEpoch: 3 },
    ]);
    expect(r.state).toBe("LOADING");
    expect(r.epoch).toBe(3);
  });
});
