import { KafkaStorageError } from "./errors";
import type { AbortedTxn } from "./transaction-index";

/** Kafka's transaction index file suffix. */
export const TXN_INDEX_SUFFIX = ".txnindex";
/** Kafka's AbortedTxn entry: version 2, producerId 8, firstOffset 8, lastOffset 8, lastStableOffset 8. */
export const TXN_INDEX_ENTRY_SIZE = 34;
const TXN_INDEX_VERSION = 0;

/** An aborted transaction as Kafka's `.txnindex` stores it. */
export interface IndexedAbortedTxn extends AbortedTxn {
  /**
   * The LSO right after the ABORT marker was written (Kafka's `ProducerStateManager.lastStableOffset`): the
   * first offset of the earliest other open transaction, or the marker's offset + 1.
   */
  lastStableOffset: bigint;
}

/** Encodes entries in Kafka's TransactionIndex format (version 0, big-endian). */
export function formatTransactionIndex(txns: readonly IndexedAbortedTxn[]): Buffer {
  const buf = Buffer.alloc(txns.length * TXN_INDEX_ENTRY_SIZE);
  txns.forEach((t, i) => {
    const at = i * TXN_INDEX_ENTRY_SIZE;
    buf.writeInt16BE(TXN_INDEX_VERSION, at);
    buf.writeBigInt64BE(t.producerId, at + 2);
    buf.writeBigInt64BE(t.firstOffset, at + 10);
    buf.writeBigInt64BE(t.lastOffset, at + 18);
    buf.writeBigInt64BE(t.lastStableOffset, at + 26);
  });
  return buf;
}

/** Decodes a `.txnindex` file; throws on a partial entry or an unknown version. */
export function parseTransactionIndex(buf: Buffer): IndexedAbortedTxn[] {
  if (buf.length % TXN_INDEX_ENTRY_SIZE !== 0) {
    throw new KafkaStorageError(
      `transaction index of ${buf.length} bytes is not whole ${TXN_INDEX_ENTRY_SIZE}-byte entries`,
    );
  }
  const out: IndexedAbortedTxn[] = [];
  for (let at = 0; at < buf.length; at += TXN_INDEX_ENTRY_SIZE) {
    const version = buf.readInt16BE(at);
    if (version !== TXN_INDEX_VERSION)
      throw new KafkaStorageError(`transaction index entry version ${version} is unknown`);
    out.push({
      producerId: buf.readBigInt64BE(at + 2),
      firstOffset: buf.readBigInt64BE(at + 10),
      lastOffset: buf.readBigInt64BE(at + 18),
      lastStableOffset: buf.readBigInt64BE(at + 26),
    });
  }
  return out;
}
