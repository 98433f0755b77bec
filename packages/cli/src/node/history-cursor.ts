import { BadRequestError } from "./http-errors";
import { type HistoryKey, historyOrder, type UnnumberedHistoryRecord } from "./mirror-state-history";

/** Where a record sits in the history, whatever arrived before it: its timestamp, partition and offset. */
export type HistoryCursor = HistoryKey;

/** The cursor of a record, as `?after=` takes it: `timestamp:partition:offset`. */
export function historyCursorOf(r: HistoryCursor): string {
  return `${r.timestamp}:${r.partition}:${r.offset}`;
}

/** Parses `?after=` (`timestamp:partition:offset`, as {@link historyCursorOf} writes it). */
export function parseHistoryCursor(text: string): HistoryCursor {
  const m = /^(-?\d+):(\d+):(\d+)$/.exec(text);
  const [timestamp, partition, offset] = m ? [Number(m[1]), Number(m[2]), Number(m[3])] : [];
  if (
    timestamp === undefined ||
    !Number.isSafeInteger(timestamp) ||
    !Number.isSafeInteger(partition) ||
    !Number.isSafeInteger(offset)
  ) {
    throw new BadRequestError(
      `field 'after' must be a record's timestamp:partition:offset (the last record of the previous page, e.g. 1700000000000:0:41), got ${JSON.stringify(text)}`,
    );
  }
  return { timestamp, partition: partition as number, offset: offset as number };
}

/** Index of the first record of `records` (in history order) that sorts after `cursor`. */
export function indexAfter(records: readonly UnnumberedHistoryRecord[], cursor: HistoryCursor): number {
  let lo = 0;
  let hi = records.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (historyOrder(records[mid]!, cursor) <= 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
