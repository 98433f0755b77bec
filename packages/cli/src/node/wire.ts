import type { MirrorDescribeRow } from "@cluster-mirror/mirror";

/** JSON.stringify replacer that writes bigints as decimal strings (the node's wire format). */
export function bigintReplacer(_key: string, value: unknown): unknown {
  return typeof value === "bigint" ? value.toString() : value;
}

/** JSON text of a value, bigints as decimal strings. */
export function toJson(value: unknown): string {
  return JSON.stringify(value, bigintReplacer);
}

/** A describe row as it travels over HTTP: offsets as decimal strings or null. */
export type WireDescribeRow = Omit<MirrorDescribeRow, "sourceOffset" | "destinationOffset" | "lag"> & {
  sourceOffset: string | null;
  destinationOffset: string | null;
  lag: string | null;
};

/** Restores a describe row from its wire form (offsets back to bigints). */
export function rowFromWire(row: WireDescribeRow): MirrorDescribeRow {
  const big = (v: string | null) => (v === null ? null : BigInt(v));
  return {
    ...row,
    sourceOffset: big(row.sourceOffset),
    destinationOffset: big(row.destinationOffset),
    lag: big(row.lag),
  };
}

/**
 * A header on every answer of the node's admin endpoint: how the CLIs tell the node from another HTTP
 * server on the port they were given (the node's metrics port, any web server), which may answer 200 `{}`.
 */
export const NODE_HEADER = "x-cluster-mirror-node";

/** The media type of the node's streamed answers (a consume's messages): one JSON value per line. */
export const NDJSON = "application/x-ndjson";
