import * as fs from "node:fs";
import type { MetadataLogEntry, MetadataRecord } from "@cluster-mirror/cluster";

/** File name of the persisted controller metadata log inside a cluster's data dir. */
export const METADATA_LOG_FILE = "metadata.log";

/** Fields of metadata records that hold bigints (stored as decimal strings). */
const BIGINT_FIELDS = new Set(["nextProducerId", "truncationOffset", "previousLogEndOffset"]);

/** One metadata log entry as a JSON line (bigints as decimal strings), without the newline. */
export function encodeMetadataEntry(entry: MetadataLogEntry): string {
  return JSON.stringify(entry, (_key, value: unknown) =>
    typeof value === "bigint" ? value.toString() : value,
  );
}

/** Parses one JSON line back into an entry (bigint fields restored). */
export function decodeMetadataEntry(line: string): MetadataLogEntry {
  const parsed = JSON.parse(line, (key, value: unknown) =>
    BIGINT_FIELDS.has(key) && typeof value === "string" ? BigInt(value) : value,
  ) as MetadataLogEntry;
  if (typeof parsed.offset !== "number" || typeof parsed.record?.type !== "string") {
    throw new Error(`not a metadata log entry: ${line.slice(0, 120)}`);
  }
  return parsed;
}

/**
 * Reads a persisted metadata log: the records in offset order. A torn last line (the process died while
 * writing it) is dropped, as Kafka drops a partial trailing batch; any other bad line or an offset gap
 * throws, naming the file and line. Missing file: no records.
 */
export function readMetadataLog(file: string): MetadataRecord[] {
  if (!fs.existsSync(file)) return [];
  const text = fs.readFileSync(file, "utf8");
  const lines = text.split("\n");
  // The last element is "" after a final newline, or a torn line the process died writing.
  const complete = lines.slice(0, -1);
  const records: MetadataRecord[] = [];
  for (const [i, line] of complete.entries()) {
    if (line.trim() === "") continue;
    let entry: MetadataLogEntry;
    try {
      entry = decodeMetadataEntry(line);
    } catch (error) {
      throw new Error(
        `${file} line ${i + 1} is corrupt (${String(error)}); restore the data dir from a backup or start on an empty one`,
      );
    }
    if (entry.offset !== records.length) {
      throw new Error(
        `${file} line ${i + 1} has offset ${entry.offset}, expected ${records.length}; the metadata log is not contiguous`,
      );
    }
    records.push(entry.record);
  }
  if (!text.endsWith("\n") && (lines.at(-1) ?? "") !== "") {
    // Torn tail: rewrite the file without it so later appends start on a clean line.
    fs.writeFileSync(file, complete.map((l) => `${l}\n`).join(""), { mode: 0o600 });
  }
  return records;
}

/** Appends metadata log entries to a file, one JSON line each, optionally fsynced. */
export class MetadataLogWriter {
  private fd: number | undefined;

  constructor(
    file: string,
    private readonly fsync: boolean,
  ) {
    // Mirror definitions, source credentials included, are stored here: the node's user alone reads it,
    // whatever the umask, and whatever mode an older version left on the file.
    this.fd = fs.openSync(file, "a", 0o600);
    fs.fchmodSync(this.fd, 0o600);
  }

  /** Appends one entry (durable on return when fsync is on). */
  append(entry: MetadataLogEntry): void {
    if (this.fd === undefined) return;
    fs.writeSync(this.fd, `${encodeMetadataEntry(entry)}\n`);
    if (this.fsync) fs.fsyncSync(this.fd);
  }

  /** Closes the file; later appends are dropped. */
  close(): void {
    if (this.fd === undefined) return;
    fs.closeSync(this.fd);
    this.fd = undefined;
  }
}
