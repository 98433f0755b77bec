import type { FailoverPreviewRow, MirrorVerification } from "@cluster-mirror/mirror";
import Table from "cli-table3";

/** Plain tables (no colors: the output is read by people and by scripts alike). */
function table(head: string[]): Table.Table {
  // No rule between body rows: a partition per row stays one line.
  const chars = { mid: "", "left-mid": "", "mid-mid": "", "right-mid": "" };
  return new Table({ head, chars, style: { head: [], border: [] } });
}

const show = (v: bigint | number | null): string => (v === null ? "-" : String(v));

/**
 * The `--failover-preview` table: one row per partition with its lag, the open transactions the failover
 * would abort (`producer id/epoch@first offset`), the LME it would record, the leader epoch before and
 * after the bump, and the records a failback would truncate on the source (n/a for a plain Kafka source, onto
 * which there is no failback).
 */
export function formatPreviewTable(mirror: string, rows: readonly FailoverPreviewRow[]): string {
  const t = table([
    "TOPIC",
    "PARTITION",
    "STATE",
    "LAG",
    "OPEN-TRANSACTIONS-ABORTED",
    "LME",
    "LEADER-EPOCH",
    "FAILBACK-TRUNCATES",
  ]);
  for (const r of rows) {
    // No running leader on the destination: its log (open transactions, latest epoch, end) cannot be read,
    // and the failover waits for a leader and reads it then. "none" or an LME of -1 would be a guess.
    const unknown = r.destinationOffset === null ? "unknown (no leader)" : undefined;
    t.push([
      r.topic,
      String(r.partition),
      r.state,
      show(r.lag),
      unknown ??
        (r.openTransactions.length === 0
          ? "none"
          : r.openTransactions.map((x) => `${x.producerId}/${x.producerEpoch}@${x.firstOffset}`).join(", ")),
      unknown ?? String(r.lastMirrorEpoch),
      `${r.leaderEpoch} -> ${unknown === undefined ? r.leaderEpochAfterBump : "?"}`,
      !r.failbackSupported
        ? "n/a (Kafka source)"
        : (unknown ??
          (r.failbackTruncation === null
            ? "none"
            : `${r.failbackTruncation.records} from offset ${r.failbackTruncation.fromOffset}`)),
    ]);
  }
  return `Failover preview of mirror ${mirror} (dry run: nothing was changed)\n${t.toString()}\n`;
}

/**
 * An offset (or producer id) in `--json` output as `--describe --json` gives it: a number, or a decimal
 * string beyond 2^53 where a number would lose digits.
 */
const jsonNumber = (v: bigint): number | string =>
  v <= BigInt(Number.MAX_SAFE_INTEGER) && v >= -BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : String(v);
const jsonNumberOrNull = (v: bigint | null) => (v === null ? null : jsonNumber(v));

/**
 * The `--failover-preview --json` output: the rows with offsets, lags and producer ids as numbers, as
 * `--describe --json` has them (the node's wire strings made `.lag > 0` true for every row in jq, where a
 * string sorts above any number).
 */
export function formatPreviewJson(rows: readonly FailoverPreviewRow[]): string {
  return JSON.stringify(
    rows.map((r) => ({
      topic: r.topic,
      partition: r.partition,
      state: r.state,
      sourceOffset: jsonNumberOrNull(r.sourceOffset),
      destinationOffset: jsonNumberOrNull(r.destinationOffset),
      lag: jsonNumberOrNull(r.lag),
      openTransactions: r.openTransactions.map((t) => ({
        producerId: jsonNumber(t.producerId),
        producerEpoch: t.producerEpoch,
        firstOffset: jsonNumber(t.firstOffset),
      })),
      lastMirrorEpoch: r.lastMirrorEpoch,
      leaderEpoch: r.leaderEpoch,
      leaderEpochAfterBump: r.leaderEpochAfterBump,
      failbackTruncation:
        r.failbackTruncation === null
          ? null
          : {
              fromOffset: jsonNumber(r.failbackTruncation.fromOffset),
              records: jsonNumber(r.failbackTruncation.records),
            },
      failbackSupported: r.failbackSupported,
    })),
    null,
    2,
  );
}

/** The `cluster-mirror verify` table: one row per check with OK or DIFFERS, what was compared, and the differences. */
export function formatVerifyTable(v: MirrorVerification): string {
  const t = table(["CHECK", "RESULT", "COMPARED", "DIFFERENCES"]);
  for (const c of v.checks) {
    const result = c.ok ? "OK" : c.notCompared ? "NOT COMPARED" : "DIFFERS";
    t.push([c.check, result, c.compared, c.differences.join("\n") || "-"]);
  }
  const verdict =
    v.topics.length === 0
      ? "nothing to compare"
      : v.ok
        ? "source and destination agree"
        : verdictOfFailed(v.checks);
  return `Mirror ${v.mirror} (${v.topics.join(", ") || "no topics"}): ${verdict}\n${t.toString()}\n`;
}

/** "2 check(s) differ", "1 check(s) not compared", or both. */
function verdictOfFailed(checks: MirrorVerification["checks"]): string {
  const differ = checks.filter((c) => !c.ok && !c.notCompared).length;
  const unknown = checks.filter((c) => c.notCompared).length;
  const parts = [
    ...(differ > 0 ? [`${differ} check(s) differ`] : []),
    ...(unknown > 0 ? [`${unknown} check(s) not compared`] : []),
  ];
  return parts.join(", ");
}

/** A preview row as the node sends it (bigints as decimal strings, the node's wire format). */
export type WirePreviewRow = {
  [K in keyof FailoverPreviewRow]: FailoverPreviewRow[K] extends bigint | null ? string | null : unknown;
};

/** Restores a preview row from its wire form (offsets and producer ids back to bigints). */
export function previewRowFromWire(w: WirePreviewRow): FailoverPreviewRow {
  const big = (v: string | null) => (v === null ? null : BigInt(v));
  const txns = w.openTransactions as { producerId: string; producerEpoch: number; firstOffset: string }[];
  const truncation = w.failbackTruncation as { fromOffset: string; records: string } | null;
  return {
    topic: w.topic as string,
    partition: w.partition as number,
    state: w.state as string,
    sourceOffset: big(w.sourceOffset),
    destinationOffset: big(w.destinationOffset),
    lag: big(w.lag),
    openTransactions: txns.map((t) => ({
      producerId: BigInt(t.producerId),
      producerEpoch: t.producerEpoch,
      firstOffset: BigInt(t.firstOffset),
    })),
    lastMirrorEpoch: w.lastMirrorEpoch as number,
    leaderEpoch: w.leaderEpoch as number,
    leaderEpochAfterBump: w.leaderEpochAfterBump as number,
    failbackTruncation:
      truncation === null
        ? null
        : { fromOffset: BigInt(truncation.fromOffset), records: BigInt(truncation.records) },
    // A node from before this field knew only sources that can fail back.
    failbackSupported: (w.failbackSupported as boolean | undefined) ?? true,
  };
}
