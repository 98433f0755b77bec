import { describe, expect, it } from "vitest";
import type { StateHistoryPage, StateHistoryRecord } from "../src/history/history-types";
import { loadHistory } from "../src/history/load-history";

/** A record of `__mirror_state`-`partition` at `offset`, stamped `timestamp`. */
const record = (
  timestamp: number,
  partition: number,
  offset: number,
): Omit<StateHistoryRecord, "position"> => ({
  partition,
  offset,
  timestamp,
  key: { kind: "LastMirrorEpochs", mirror: "m", topicId: "t1", topic: "orders", partition: 0 },
  value: { lastMirrorEpoch: offset },
});

const order = (a: Omit<StateHistoryRecord, "position">, b: Omit<StateHistoryRecord, "position">) =>
  a.timestamp - b.timestamp || a.partition - b.partition || a.offset - b.offset;

/**
 * A node's `/ui/api/mirror-state` over `history` (kept in order), as documented: `offset=` a position,
 * `after=timestamp:partition:offset` the records sorting after that one. `beforeEach` runs before each
 * page is served (records committed meanwhile). `maxPage` is the node's cap on `limit` (its
 * `MAX_HISTORY_PAGE`: a larger `limit` is clamped to it).
 */
function node(
  history: Omit<StateHistoryRecord, "position">[],
  beforeEach: (request: number) => void,
  maxPage = Number.POSITIVE_INFINITY,
) {
  let requests = 0;
  return async (query: string): Promise<StateHistoryPage> => {
    beforeEach(requests++);
    history.sort(order);
    const q = new URLSearchParams(query);
    const limit = Math.min(Number(q.get("limit")), maxPage);
    const after = q.get("after")?.split(":").map(Number);
    const offset =
      after === undefined
        ? Number(q.get("offset"))
        : history.filter((r) => order(r, record(after[0]!, after[1]!, after[2]!)) <= 0).length;
    return {
      total: history.length,
      offset,
      records: history.slice(offset, offset + limit).map((r, i) => ({ position: offset + i, ...r })),
      partitions: [{ partition: 0, logStartOffset: 0, logEndOffset: history.length }],
    };
  };
}

describe("loading the history page by page", () => {
  it("a record that sorts before the pages read is neither repeated nor shifts what follows", async () => {
    const history = [1, 2, 3, 4, 5].map((t) => record(t * 10, 0, t - 1));
    // Before the second page: partition 1's high watermark catches up with a record older than all.
    const fetchPage = node(history, (request) => {
      if (request === 1) history.push(record(5, 1, 0));
    });
    const { records } = await loadHistory(fetchPage, 2);
    expect(records.map((r) => `${r.partition}@${r.offset}`)).toEqual(["0@0", "0@1", "0@2", "0@3", "0@4"]);
    expect(records.map((r) => r.position)).toEqual([0, 1, 2, 3, 4]);
    // The next load has it, first.
    expect((await loadHistory(fetchPage, 2)).records.map((r) => `${r.partition}@${r.offset}`)).toEqual([
      "1@0",
      "0@0",
      "0@1",
      "0@2",
      "0@3",
      "0@4",
    ]);
  });

  it("a page size above the node's cap still reads the whole history (the clamped page is not the last)", async () => {
    const history = [1, 2, 3, 4, 5, 6, 7].map((t) => record(t * 10, 0, t - 1));
    let requests = 0;
    const fetchPage = node(history, () => requests++, 3);
    const { records } = await loadHistory(fetchPage, 5);
    expect(records.map((r) => r.offset)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(records.map((r) => r.position)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(requests).toBe(3);
  });

  it("a history that fills its last page exactly ends without asking for an empty page", async () => {
    const history = [1, 2, 3, 4].map((t) => record(t * 10, 0, t - 1));
    let requests = 0;
    const { records } = await loadHistory(
      node(history, () => requests++),
      2,
    );
    expect(records.map((r) => r.offset)).toEqual([0, 1, 2, 3]);
    expect(requests).toBe(2);
  });

  it("an empty history is one request", async () => {
    let requests = 0;
    const { records } = await loadHistory(
      node([], () => requests++),
      2,
    );
    expect(records).toEqual([]);
    expect(requests).toBe(1);
  });
});
