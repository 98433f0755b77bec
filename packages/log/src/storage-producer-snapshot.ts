import { crc32c } from "@cluster-mirror/protocol";
import { KafkaStorageError } from "./errors";
import type { ProducerStateEntry } from "./producer-state-entry";

/** Kafka's producer snapshot file suffix: `<offset, 20 digits>.snapshot`. */
export const PRODUCER_SNAPSHOT_SUFFIX = ".snapshot";
/** The only version of Kafka's ProducerSnapshot schema. */
const SNAPSHOT_VERSION = 1;
const CRC_OFFSET = 2;
/** The CRC covers everything from the entry count on. */
const ENTRIES_OFFSET = CRC_OFFSET + 4;
/** producerId 8, epoch 2, lastSequence 4, lastOffset 8, offsetDelta 4, timestamp 8, coordinatorEpoch 4, currentTxnFirstOffset 8. */
const ENTRY_SIZE = 46;

/** One producer of a snapshot, with Kafka's field names (ProducerSnapshot.json). */
export interface ProducerSnapshotEntry {
  producerId: bigint;
  epoch: number;
  /** Last sequence of the producer's last batch, -1 if none. */
  lastSequence: number;
  /** Last offset of the producer's last batch, -1 if none. */
  lastOffset: bigint;
  /** lastSequence - firstSequence of that batch, 0 if none. */
  offsetDelta: number;
  /** Max timestamp of the producer's last batch. */
  timestamp: bigint;
  /** The coordinator epoch of the producer's last marker; -1 when unknown (not tracked here). */
  coordinatorEpoch: number;
  /** First offset of the open transaction, -1 if none. */
  currentTxnFirstOffset: bigint;
}

/** A producer state entry as Kafka's snapshot stores it (only the producer's last batch is kept). */
export function toSnapshotEntry(e: ProducerStateEntry): ProducerSnapshotEntry {
  const last = e.batchMetadata[e.batchMetadata.length - 1];
  return {
    producerId: e.producerId,
    epoch: e.producerEpoch,
    lastSequence: last ? last.lastSeq : -1,
    lastOffset: last ? last.lastOffset : -1n,
    offsetDelta: last ? Number(last.lastOffset - last.firstOffset) : 0,
    timestamp: e.lastTimestamp,
    coordinatorEpoch: -1,
    currentTxnFirstOffset: e.currentTxnFirstOffset ?? -1n,
  };
}

/**
 * The producer state entry a snapshot entry loads as (Kafka's `ProducerStateManager.readSnapshot`): its
 * last batch only (a batch when `lastOffset` is set), the first sequence counted back from the last by
 * `offsetDelta` (wrapping below 0 as Kafka's `decrementSequence`).
 */
export function fromSnapshotEntry(e: ProducerSnapshotEntry): ProducerStateEntry {
  const firstSeq =
    e.lastSequence < e.offsetDelta
      ? 0x7fffffff - (e.offsetDelta - e.lastSequence) + 1
      : e.lastSequence - e.offsetDelta;
  return {
    producerId: e.producerId,
    producerEpoch: e.epoch,
    batchMetadata:
      e.lastOffset >= 0n
        ? [
            {
              firstSeq,
              lastSeq: e.lastSequence,
              firstOffset: e.lastOffset - BigInt(e.offsetDelta),
              lastOffset: e.lastOffset,
            },
          ]
        : [],
    currentTxnFirstOffset: e.currentTxnFirstOffset >= 0n ? e.currentTxnFirstOffset : undefined,
    lastTimestamp: e.timestamp,
  };
}

/**
 * Kafka's producer state snapshot (`ProducerStateManager.writeSnapshot`, schema version 1): int16 version,
 * uint32 CRC32C of the rest, int32 entry count, then per producer the fields of `ProducerSnapshotEntry` in
 * order, big-endian.
 */
export function formatProducerSnapshot(entries: readonly ProducerSnapshotEntry[]): Buffer {
  const buf = Buffer.alloc(ENTRIES_OFFSET + 4 + entries.length * ENTRY_SIZE);
  buf.writeInt16BE(SNAPSHOT_VERSION, 0);
  buf.writeInt32BE(entries.length, ENTRIES_OFFSET);
  let at = ENTRIES_OFFSET + 4;
  for (const e of entries) {
    buf.writeBigInt64BE(e.producerId, at);
    buf.writeInt16BE(e.epoch, at + 8);
    buf.writeInt32BE(e.lastSequence, at + 10);
    buf.writeBigInt64BE(e.lastOffset, at + 14);
    buf.writeInt32BE(e.offsetDelta, at + 22);
    buf.writeBigInt64BE(e.timestamp, at + 26);
    buf.writeInt32BE(e.coordinatorEpoch, at + 34);
    buf.writeBigInt64BE(e.currentTxnFirstOffset, at + 38);
    at += ENTRY_SIZE;
  }
  buf.writeUInt32BE(crc32c(buf.subarray(ENTRIES_OFFSET)), CRC_OFFSET);
  return buf;
}

/** Parses a snapshot written by `formatProducerSnapshot` (or Kafka); throws on a bad version, size or CRC. */
export function parseProducerSnapshot(buf: Buffer): ProducerSnapshotEntry[] {
  if (buf.length < ENTRIES_OFFSET + 4)
    throw new KafkaStorageError(`producer snapshot of ${buf.length} bytes is too short`);
  const version = buf.readInt16BE(0);
  if (version !== SNAPSHOT_VERSION)
    throw new KafkaStorageError(`producer snapshot version ${version} is not ${SNAPSHOT_VERSION}`);
  const count = buf.readInt32BE(ENTRIES_OFFSET);
  if (count < 0 || buf.length !== ENTRIES_OFFSET + 4 + count * ENTRY_SIZE) {
    throw new KafkaStorageError(`producer snapshot of ${buf.length} bytes does not hold ${count} entries`);
  }
  if (buf.readUInt32BE(CRC_OFFSET) !== crc32c(buf.subarray(ENTRIES_OFFSET))) {
    throw new KafkaStorageError("producer snapshot CRC does not match its contents");
  }
  const out: ProducerSnapshotEntry[] = [];
  for (let i = 0, at = ENTRIES_OFFSET + 4; i < count; i++, at += ENTRY_SIZE) {
    out.push({
      producerId: buf.readBigInt64BE(at),
      epoch: buf.readInt16BE(at + 8),
      lastSequence: buf.readInt32BE(at + 10),
      lastOffset: buf.readBigInt64BE(at + 14),
      offsetDelta: buf.readInt32BE(at + 22),
      timestamp: buf.readBigInt64BE(at + 26),
      coordinatorEpoch: buf.readInt32BE(at + 34),
      currentTxnFirstOffset: buf.readBigInt64BE(at + 38),
    });
  }
  return out;
}
