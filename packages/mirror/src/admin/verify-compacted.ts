import { ControlRecordType, decodeRecords, type RecordBatch } from "@cluster-mirror/protocol";

/** The latest committed record of one key: where it is and what it says (null: a tombstone). */
interface LatestRecord {
  offset: bigint;
  value: Buffer | null;
  /** Where it became visible: its own offset, or its transaction's COMMIT marker's. */
  committedAt?: bigint;
}

/**
 * The latest committed record of each key in `batches` (whole batches in offset order) at offsets from
 * `from` (inclusive) to `to` (exclusive): what a consumer reading the compacted topic to its end sees.
 * Records of a transaction count once its COMMIT marker is read; an aborted one, or one still open at
 * `to`, never does. Records without a key are left out (the cleaners of both sides may treat them
 * differently: Kafka's drops them, ours keeps them).
 */
export function latestCommittedByKey(
  batches: Iterable<RecordBatch>,
  from: bigint,
  to: bigint,
): Map<string, LatestRecord> {
  const latest = new Map<string, LatestRecord>();
  const open = new Map<bigint, { offset: bigint; key: string; value: Buffer | null }[]>();
  const apply = (offset: bigint, key: string, value: Buffer | null, committedAt = offset) => {
    if (offset >= from && offset < to) latest.set(key, { offset, value, committedAt });
  };
  for (const batch of batches) {
    if (batch.baseOffset >= to) break;
    if (batch.isControl) {
      const held = open.get(batch.producerId);
      open.delete(batch.producerId);
      if (held && batch.controlType === ControlRecordType.COMMIT)
        for (const r of held) apply(r.offset, r.key, r.value, batch.baseOffset);
      continue;
    }
    for (const r of decodeRecords(batch)) {
      if (r.key === null) continue;
      const offset = batch.baseOffset + BigInt(r.offsetDelta);
      const key = r.key.toString("hex");
      if (!batch.isTransactional) apply(offset, key, r.value);
      else {
        const held = open.get(batch.producerId) ?? [];
        held.push({ offset, key, value: r.value });
        open.set(batch.producerId, held);
      }
    }
  }
  return latest;
}

/** How a key is named in a difference: its text when printable, else its bytes in hex. */
function keyName(hex: string): string {
  const text = Buffer.from(hex, "hex").toString("utf8");
  return /^[\x20-\x7e]{1,64}$/.test(text) ? `'${text}'` : `0x${hex.slice(0, 64)}`;
}

/**
 * Compares a compacted topic's copy with its source by the latest committed record of each key, where a
 * cleaner rewrote one side's batches (so the byte for byte comparison cannot hold): `mine` below the
 * destination's high watermark `hw`, `theirs` up to the source's high watermark (a key the source wrote
 * again, or committed, at or above `hw` is the copy's lag, which the offsets check reports). Equal: the same offset and
 * value for every key. A tombstone on one side and nothing on the other is equal too (the other side's
 * cleaner removed it after `delete.retention.ms`). Returns the differences, at most `max`.
 */
export function compareLatestByKey(
  mine: ReadonlyMap<string, LatestRecord>,
  theirs: ReadonlyMap<string, LatestRecord>,
  hw: bigint,
  where: string,
  max: number,
): string[] {
  const diffs: string[] = [];
  const keys = new Set([...mine.keys(), ...theirs.keys()]);
  for (const key of keys) {
    if (diffs.length >= max) break;
    const a = mine.get(key);
    const b = theirs.get(key);
    if (b !== undefined && (b.committedAt ?? b.offset) >= hw) continue;
    if (a === undefined || b === undefined) {
      const held = a ?? b!;
      if (held.value === null) continue;
      diffs.push(
        a === undefined
          ? `${where}: key ${keyName(key)}: latest record at offset ${held.offset} on the source, none here`
          : `${where}: key ${keyName(key)}: latest record at offset ${held.offset} here, none on the source`,
      );
      continue;
    }
    const same = a.offset === b.offset && (a.value === null ? b.value === null : b.value?.equals(a.value));
    if (!same)
      diffs.push(
        `${where}: key ${keyName(key)}: latest record at offset ${a.offset} here, at offset ${b.offset} on the source${a.offset === b.offset ? " with another value" : ""}`,
      );
  }
  return diffs;
}
