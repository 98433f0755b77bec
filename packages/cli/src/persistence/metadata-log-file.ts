import * as fs from "node:fs";
import * as path from "node:path";
import { type MetadataLogEntry, type MetadataRecord, syncDirectory } from "@cluster-mirror/cluster";

/** File name of the persisted controller metadata log inside a cluster's data dir. */
export const METADATA_LOG_FILE = "metadata.log";

/** Fields of metadata records that hold bigints (stored as decimal strings). */
const BIGINT_FIELDS = new Set(["nextProducerId", "truncationOffset", "previousLogEndOffset"]);

/**
 * One metadata log entry as a JSON line (bigints as decimal strings), without the newline. `more`: a later
 * entry of the same record batch follows (written as `"more":true`; the last entry of a batch has none).
 */
export function encodeMetadataEntry(entry: MetadataLogEntry, more = false): string {
  return JSON.stringify(more ? { ...entry, more: true } : entry, (_key, value: unknown) =>
    typeof value === "bigint" ? value.toString() : value,
  );
}

/** Parses one JSON line back into an entry (bigint fields restored). */
export function decodeMetadataEntry(line: string): MetadataLogEntry {
  const parsed = JSON.parse(line, (key, value: unknown) =>
    BIGINT_FIELDS.has(key) && typeof value === "string" ? BigInt(value) : value,
  ) as MetadataLogEntry & { more?: boolean };
  if (typeof parsed.offset !== "number" || typeof parsed.record?.type !== "string") {
    throw new Error(`not a metadata log entry: ${line.slice(0, 120)}`);
  }
  return { offset: parsed.offset, record: parsed.record };
}

/**
 * Reads a persisted metadata log: the records in offset order. A torn last line (the process died while
 * writing it) is dropped, as Kafka drops a partial trailing batch, and so is the rest of a record batch
 * whose last entry never made it (KRaft's batches are atomic); any other bad line or an offset gap
 * throws, naming the file and line. Missing file: no records.
 */
export function readMetadataLog(file: string): MetadataRecord[] {
  if (!fs.existsSync(file)) return [];
  const bytes = fs.readFileSync(file);
  const text = bytes.toString("utf8");
  const lines = text.split("\n");
  // The last element is "" after a final newline, or a torn line the process died writing.
  const complete = lines.slice(0, -1);
  const records: MetadataRecord[] = [];
  /** Records and bytes up to the end of the last complete batch. */
  let kept = { records: 0, bytes: 0 };
  let position = 0;
  for (const [i, line] of complete.entries()) {
    // Byte positions from the file's own newlines: a line holding bytes that are not UTF-8 (a flipped bit
    // inside a string still parses) is longer once decoded, and a cut computed from it would keep part of
    // the torn tail.
    position = bytes.indexOf(0x0a, position) + 1;
    if (line.trim() === "") {
      if (kept.records === records.length) kept = { records: records.length, bytes: position };
      continue;
    }
    let entry: MetadataLogEntry;
    let more: boolean;
    try {
      entry = decodeMetadataEntry(line);
      more = (JSON.parse(line) as { more?: unknown }).more === true;
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
    if (!more) kept = { records: records.length, bytes: position };
  }
  if (kept.bytes < bytes.length) {
    // A torn tail or an incomplete batch: cut it in place (one truncate, so a crash here loses nothing
    // complete; rewriting the file would empty it first), so later appends start on a clean line.
    fs.truncateSync(file, kept.bytes);
    const fd = fs.openSync(file, "r+");
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  }
  return records.slice(0, kept.records);
}

/** Appends metadata log entries to a file, one JSON line each, optionally fsynced. */
export class MetadataLogWriter {
  private fd: number | undefined;
  /** Set when a failed batch could not be cut back: its bytes stay at the tail, so nothing may follow them. */
  private broken: Error | undefined;

  constructor(
    file: string,
    private readonly fsync: boolean,
  ) {
    // Mirror definitions, source credentials included, are stored here: the node's user alone reads it,
    // whatever the umask, and whatever mode an older version left on the file.
    const created = !fs.existsSync(file);
    this.fd = fs.openSync(file, "a", 0o600);
    fs.fchmodSync(this.fd, 0o600);
    // A new file is durable once its directory is: its fsynced records must not vanish with its name.
    if (created && fsync) syncDirectory(path.dirname(file));
  }

  /** Appends one entry (durable on return when fsync is on). */
  append(entry: MetadataLogEntry): void {
    this.appendBatch([entry]);
  }

  /**
   * Appends one record batch, durable on return when fsync is on (the controller's journal). All or
   * nothing: a failed write or fsync cuts what it wrote and throws, so the controller does not take the
   * batch and the next one starts where it would have (no offset gap, no half line).
   */
  appendBatch(entries: readonly MetadataLogEntry[]): void {
    if (this.fd === undefined || entries.length === 0) return;
    if (this.broken) throw this.broken;
    const fd = this.fd;
    const text = entries.map((e, i) => `${encodeMetadataEntry(e, i < entries.length - 1)}\n`).join("");
    const bytes = Buffer.from(text, "utf8");
    const size = fs.fstatSync(fd).size;
    try {
      let done = 0;
      while (done < bytes.length) done += fs.writeSync(fd, bytes, done, bytes.length - done);
      if (this.fsync) fs.fsyncSync(fd);
    } catch (error) {
      try {
        fs.ftruncateSync(fd, size);
      } catch (cutError) {
        // The disk is failing: the reader drops a torn or incomplete batch at the tail, but only at the tail.
        // A later batch appended after it (the controller reuses the offsets it did not take) would turn it
        // into a corrupt line or an offset gap in the middle, and the log would never load again: every
        // later batch is refused until a restart (whose reader cuts the tail).
        this.broken = new Error(
          `the metadata log could not be cut back after a failed write (${String(cutError)}); restart the node to recover it`,
          { cause: error },
        );
      }
      throw error;
    }
  }

  /** Closes the file; later appends are dropped. */
  close(): void {
    if (this.fd === undefined) return;
    fs.closeSync(this.fd);
    this.fd = undefined;
  }
}
