import { canTransition, LIFECYCLE_STATES, validFrom } from "@cluster-mirror/machines";
import { describe, expect, it } from "vitest";
import { canTransitionIn, foldHistory, historyKeyId, partitionTimeline } from "../src/history/fold";
import type { StateHistoryRecord, StateValue } from "../src/history/history-types";

const key = (partition: number) => ({
  kind: "MirrorPartitionState" as const,
  mirror: "m",
  topicId: "t1",
  topic: "orders",
  partition,
});

/** A history from `[partition, state, stateEpoch, previousState, timestamp]` rows, in position order. */
function history(rows: [number, string, number, string | null, number, number?][]): StateHistoryRecord[] {
  return rows.map(([partition, state, stateEpoch, previousState, timestamp, retryAttempt], position) => ({
    position,
    partition: 0,
    offset: position,
    timestamp,
    key: key(partition),
    value: {
      state,
      stateEpoch,
      previousState,
      leaderEpoch: 0,
      errorMessage: state === "FAILED" ? "source unreachable" : null,
      retryAttempt: retryAttempt ?? 0,
    } satisfies StateValue,
  }));
}

describe("time travel over __mirror_state", () => {
  it("checks transitions exactly as the machines' canTransition does", () => {
    for (const to of LIFECYCLE_STATES) {
      for (const from of [null, ...LIFECYCLE_STATES]) {
        expect(canTransitionIn(validFrom, from, to), `${from} -> ${to}`).toBe(canTransition(from, to));
      }
    }
  });

  it("folds the records up to a position: each partition's state as of then", () => {
    const records = history([
      [0, "PREPARING", 1, "UNKNOWN", 100],
      [1, "PREPARING", 1, "UNKNOWN", 101],
      [0, "MIRRORING", 2, "PREPARING", 150],
      [1, "MIRRORING", 2, "PREPARING", 160],
      [0, "STOPPING", 3, "MIRRORING", 900],
      [0, "STOPPED", 4, "STOPPING", 950],
    ]);
    const at = (n: number) =>
      [...foldHistory(records, n, validFrom).partitions.values()].map(
        (p) => `${p.partition}:${p.value.state}`,
      );
    expect(at(0)).toEqual([]);
    expect(at(3)).toEqual(["0:MIRRORING", "1:PREPARING"]);
    expect(at(records.length)).toEqual(["0:STOPPED", "1:MIRRORING"]);
    const all = foldHistory(records, records.length, validFrom);
    expect(all.violations).toEqual([]);
    expect(all.gaps).toEqual([]);
  });

  it("flags a transition spec §4 forbids and shows compaction gaps instead of flagging them", () => {
    const records = history([
      [0, "MIRRORING", 5, "PREPARING", 100], // the first 4 changes were compacted away
      [0, "PAUSED", 6, "MIRRORING", 200], // MIRRORING -> PAUSED skips PAUSING: forbidden
      [0, "STOPPED", 9, "STOPPING", 300], // 2 changes erased; STOPPING -> STOPPED is allowed
    ]);
    const fold = foldHistory(records, records.length, validFrom);
    expect(canTransition("MIRRORING", "PAUSED")).toBe(false);
    expect(fold.violations.map((t) => `${t.from}->${t.to}`)).toEqual(["MIRRORING->PAUSED"]);
    expect(fold.gaps.map((t) => [t.position, t.erased])).toEqual([
      [0, 4],
      [2, 2],
    ]);
  });

  it("a tombstone deletes the partition from the fold", () => {
    const records: StateHistoryRecord[] = [
      ...history([[0, "PREPARING", 1, "UNKNOWN", 100]]),
      { position: 1, partition: 0, offset: 1, timestamp: 200, key: key(0), value: null },
    ];
    expect(foldHistory(records, 1, validFrom).partitions.size).toBe(1);
    expect(foldHistory(records, 2, validFrom).partitions.size).toBe(0);
  });

  it("groups a partition's timeline: retries of FAILED become one bar with a retry count and a duration", () => {
    const records = history([
      [0, "PREPARING", 1, "UNKNOWN", 0],
      [0, "MIRRORING", 2, "PREPARING", 10],
      [0, "FAILED", 3, "MIRRORING", 1000],
      [0, "FAILED", 4, "MIRRORING", 2000, 1],
      [0, "FAILED", 5, "MIRRORING", 4000, 2],
      [0, "MIRRORING", 6, "FAILED", 8000, 3],
    ]);
    const timeline = partitionTimeline(records, historyKeyId(key(0)), validFrom);
    expect(timeline.map((s) => [s.state, s.records, s.durationMs, s.retryAttempt])).toEqual([
      ["PREPARING", 1, 10, 0],
      ["MIRRORING", 1, 990, 0],
      ["FAILED", 3, 7000, 2],
      ["MIRRORING", 1, null, 3],
    ]);
  });
});
