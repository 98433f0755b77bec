import { NON_RETRYABLE_ATTEMPT } from "@cluster-mirror/machines";

/** One row of `--describe`: a mirror partition's state and lag (DescribeClusterMirrors' partition fields). */
export interface MirrorDescribeRow {
  mirror: string;
  topic: string;
  partition: number;
  /**
   * Source high watermark: the source's answer now, or the fetcher's last-seen one when the source does not
   * answer; null when neither is known.
   */
  sourceOffset: bigint | null;
  /** Destination log end offset, or null when the partition has no running leader. */
  destinationOffset: bigint | null;
  /**
   * `sourceOffset - destinationOffset` (at least 0), or null when either is unknown, the source did not
   * answer now (a last-seen high watermark may miss records acknowledged since: never a false 0), or the
   * partition is STOPPED (failed over: its log takes its own writes and no longer follows the source).
   */
  lag: bigint | null;
  /** Committed lifecycle state (UNKNOWN when the partition has none yet). */
  state: string;
  errorMessage: string | null;
  /** Retries so far; -1 when the failure is not retryable. */
  retryAttempt: number;
  lastMirrorEpoch: number;
}

/** Column widths of the seeds' describe table (Java `%-30s %-40s %-10s %-15s %-18s %-8s %-12s`). */
const WIDTHS = [30, 40, 10, 15, 18, 8, 12] as const;
const HEADER = ["MIRROR", "TOPIC", "PARTITION", "SOURCE-OFFSET", "DESTINATION-OFFSET", "LAG", "STATE"];
const RETRY_WIDTH = 13;

/** Options of {@link formatDescribeTable}. */
export interface DescribeTableOptions {
  /** The `--describe --failed` view: adds RETRY (`n`, `n/max`, or `NonRetryable`) and ERROR columns. */
  failed?: boolean;
  /** `mirror.failed.retry.max.attempts`, shown as `n/max` in RETRY. */
  maxRetryAttempts?: number;
}

/**
 * The `kafka-mirrors --describe` table, exactly as the seeds print it: a header line, then one line per row,
 * each column left-aligned and padded to its width, separated by one space (a value longer than its column
 * pushes the rest right, as Java's `%-Ns` does). Unknown offsets print `-`. Ends with a newline.
 */
export function formatDescribeTable(
  rows: readonly MirrorDescribeRow[],
  options: DescribeTableOptions = {},
): string {
  const line = (cells: string[]): string => {
    const fixed = cells.slice(0, WIDTHS.length).map((c, i) => c.padEnd(WIDTHS[i]!));
    if (!options.failed) return fixed.join(" ");
    return [...fixed, (cells[7] ?? "").padEnd(RETRY_WIDTH), cells[8] ?? ""].join(" ");
  };
  const header = options.failed ? [...HEADER, "RETRY", "ERROR"] : HEADER;
  const lines = [line(header)];
  for (const r of rows) {
    lines.push(
      line([
        r.mirror,
        r.topic,
        String(r.partition),
        offset(r.sourceOffset),
        offset(r.destinationOffset),
        offset(r.lag),
        r.state,
        retry(r.retryAttempt, options.maxRetryAttempts),
        r.errorMessage ?? "",
      ]),
    );
  }
  return `${lines.join("\n")}\n`;
}

/**
 * `--describe --json`: the rows as a JSON array (offsets as numbers when they fit in a double exactly, else
 * strings; unknown ones null), pretty-printed.
 */
export function formatDescribeJson(rows: readonly MirrorDescribeRow[]): string {
  const num = (v: bigint | null): number | string | null =>
    v === null
      ? null
      : v <= BigInt(Number.MAX_SAFE_INTEGER) && v >= -BigInt(Number.MAX_SAFE_INTEGER)
        ? Number(v)
        : String(v);
  return JSON.stringify(
    rows.map((r) => ({
      mirror: r.mirror,
      topic: r.topic,
      partition: r.partition,
      sourceOffset: num(r.sourceOffset),
      destinationOffset: num(r.destinationOffset),
      lag: num(r.lag),
      state: r.state,
      errorMessage: r.errorMessage,
      retryAttempt: r.retryAttempt,
      lastMirrorEpoch: r.lastMirrorEpoch,
    })),
    null,
    2,
  );
}

/** One mirror as `--list` shows it (ListClusterMirrors). */
export interface MirrorListing {
  name: string;
  sourceClusterId: string;
  sourceBootstrap: string;
  /** The mirror's topics that are mirroring or paused (not removed), sorted. */
  topics: string[];
}

/** The `--list` table: `MIRROR TOPICS SOURCE-CLUSTER-ID SOURCE-BOOTSTRAP-SERVER` (the later CLI's columns). */
export function formatListTable(mirrors: readonly MirrorListing[]): string {
  const line = (c: string[]) => [c[0]!.padEnd(30), c[1]!.padEnd(8), c[2]!.padEnd(24), c[3]!].join(" ");
  const lines = [line(["MIRROR", "TOPICS", "SOURCE-CLUSTER-ID", "SOURCE-BOOTSTRAP-SERVER"])];
  for (const m of mirrors) {
    lines.push(line([m.name, String(m.topics.length), m.sourceClusterId, m.sourceBootstrap]));
  }
  return `${lines.join("\n")}\n`;
}

function offset(value: bigint | null): string {
  return value === null ? "-" : String(value);
}

function retry(attempt: number, max: number | undefined): string {
  if (attempt === NON_RETRYABLE_ATTEMPT) return "NonRetryable";
  return max === undefined ? String(attempt) : `${attempt}/${max}`;
}
