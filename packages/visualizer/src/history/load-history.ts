import type { StateHistoryPage, StateHistoryRecord } from "./history-types";

/** Fetches one page of `/ui/api/mirror-state` for the query given (`offset=0` or `after=...`, `limit=`). */
export type FetchHistoryPage = (query: string) => Promise<StateHistoryPage>;

/**
 * The whole `__mirror_state` history, page by page. Each page after the first starts after the last record
 * read (`after=timestamp:partition:offset`), not at a position: a record committed meanwhile may sort before
 * it and move every position after it up, which would repeat records (or, with deletions, skip some). Such
 * a record is left for the next load. Positions are numbered in the load's own order, as the fold and the
 * slider go by position.
 *
 * The history ends where the node says it does (`offset + records.length` reaches `total`), not at a short
 * page: the node clamps `limit` (its `MAX_HISTORY_PAGE`), so a page shorter than asked is not the last one
 * when `pageSize` is above that cap. An empty page ends the load too (nothing after the cursor).
 */
export async function loadHistory(
  fetchPage: FetchHistoryPage,
  pageSize: number,
): Promise<{ records: StateHistoryRecord[]; partitions: StateHistoryPage["partitions"] }> {
  const records: StateHistoryRecord[] = [];
  let partitions: StateHistoryPage["partitions"] = [];
  for (;;) {
    const last = records[records.length - 1];
    const from = last === undefined ? "offset=0" : `after=${last.timestamp}:${last.partition}:${last.offset}`;
    const page = await fetchPage(`${from}&limit=${pageSize}`);
    partitions = page.partitions;
    const base = records.length;
    records.push(...page.records.map((r, i) => ({ ...r, position: base + i })));
    if (page.records.length === 0 || page.offset + page.records.length >= page.total) {
      return { records, partitions };
    }
  }
}
