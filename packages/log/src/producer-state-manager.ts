import { ControlRecordType, controlTypeOf, type RecordBatch } from "@cluster-mirror/protocol";
import { InvalidProducerEpochError, InvalidTxnStateError, OutOfOrderSequenceError } from "./errors";
import {
  type BatchMetadata,
  type CompletedTxn,
  MAX_BATCHES_PER_PRODUCER,
  type ProducerStateEntry,
} from "./producer-state-entry";

/** Kafka's RecordBatch.NO_PRODUCER_EPOCH: an entry with it accepts any sequence. */
const NO_PRODUCER_EPOCH = -1;

/** The whole state of a `ProducerStateManager` at one offset of its log (see `checkpoint`). */
export interface ProducerStateCheckpoint {
  readonly producers: readonly ProducerStateEntry[];
  readonly unreplicated: readonly CompletedTxn[];
  /** Closed transactions whose marker lies below this were already dropped from `unreplicated`. */
  readonly highWatermarkFloor: bigint;
}

/**
 * Who wrote a batch, as Kafka's AppendOrigin: `client` produces are validated (sequences, epochs,
 * transactions), `coordinator` appends transaction markers (validated for epoch fencing only), and
 * `replication` (followers and the mirror) is taken as it comes.
 */
export type AppendOrigin = "client" | "coordinator" | "replication";

/**
 * Kafka's ProducerStateManager: per producer id its epoch, last sequences and open transaction, built from
 * batch headers and control records only, never from record payloads. COMMIT and ABORT close the
 * producer's transaction; MIRROR_PID_RESET removes every entry.
 */
export class ProducerStateManager {
  private readonly producers = new Map<bigint, ProducerStateEntry>();
  /** Closed transactions whose marker is not yet below the high watermark: still unstable for the LSO. */
  private unreplicated: CompletedTxn[] = [];
  /** The highest high watermark applied since the state was built: `unreplicated` lacks markers below it. */
  private highWatermarkFloor = -1n;

  /** The entry for `producerId` (a copy), if any. */
  entry(producerId: bigint): ProducerStateEntry | undefined {
    const e = this.producers.get(producerId);
    return e ? copyEntry(e) : undefined;
  }

  /** Every entry (copies), by ascending producer id: a stable view for comparisons. */
  snapshot(): ProducerStateEntry[] {
    return [...this.producers.values()]
      .sort((a, b) => (a.producerId < b.producerId ? -1 : a.producerId > b.producerId ? 1 : 0))
      .map(copyEntry);
  }

  /** Number of producer ids with state. */
  get size(): number {
    return this.producers.size;
  }

  /**
   * The batch this one duplicates (same producer epoch and the same first and last sequence as one of the
   * producer's last five batches), so a retried produce gets the original offsets back.
   */
  findDuplicate(batch: RecordBatch): BatchMetadata | undefined {
    const e = this.producers.get(batch.producerId);
    if (!e || e.producerEpoch !== batch.producerEpoch || batch.baseSequence < 0) return undefined;
    const first = batch.baseSequence;
    const last = batch.lastSequence;
    const found = e.batchMetadata.find((m) => m.firstSeq === first && m.lastSeq === last);
    return found ? { ...found } : undefined;
  }

  /**
   * Throws the Kafka error a leader answers for `batch` from `origin`; returns normally if it may be
   * appended. Replication is never refused here: the source already decided.
   */
  checkAppend(batch: RecordBatch, origin: AppendOrigin): void {
    if (origin === "replication" || batch.producerId < 0n) return;
    const e = this.producers.get(batch.producerId);
    const pid = batch.producerId;
    const epoch = batch.producerEpoch;
    if (batch.isControl) {
      if (e && epoch < e.producerEpoch) {
        throw new InvalidProducerEpochError(
          `marker for producer ${pid} has epoch ${epoch}, older than the current epoch ${e.producerEpoch}; the producer was fenced`,
        );
      }
      return;
    }
    const seq = batch.baseSequence;
    // Kafka's ProducerAppendInfo.checkSequence (2.5+, KIP-360): a producer the partition has no state for
    // (never seen, expired, or reset by MIRROR_PID_RESET) may continue at any sequence, and so may one whose
    // entry has no epoch (NO_PRODUCER_EPOCH, -1).
    if (!e) return;
    if (epoch < e.producerEpoch) {
      throw new InvalidProducerEpochError(
        `producer ${pid} wrote with epoch ${epoch}, older than the current epoch ${e.producerEpoch}; a newer instance fenced it`,
      );
    }
    if (seq >= 0 && e.producerEpoch !== NO_PRODUCER_EPOCH) {
      if (epoch !== e.producerEpoch) {
        if (seq !== 0) {
          throw new OutOfOrderSequenceError(
            `producer ${pid} started epoch ${epoch} at sequence ${seq}; a new epoch must start at sequence 0`,
          );
        }
      } else {
        const lastSeq = e.batchMetadata[e.batchMetadata.length - 1]?.lastSeq ?? -1;
        const expected = lastSeq === -1 ? 0 : lastSeq === 0x7fffffff ? 0 : lastSeq + 1;
        if (seq !== expected) {
          throw new OutOfOrderSequenceError(
            `producer ${pid} epoch ${epoch} sent sequence ${seq}, expected ${expected}; earlier batches are missing`,
          );
        }
      }
    }
    if (!batch.isTransactional && e.currentTxnFirstOffset !== undefined && epoch === e.producerEpoch) {
      throw new InvalidTxnStateError(
        `producer ${pid} wrote a non-transactional batch while its transaction from offset ${e.currentTxnFirstOffset} is open; commit or abort it first`,
      );
    }
  }

  /**
   * Applies an appended batch (offsets final) and returns the transactions it closed. The batch's control
   * type is read from its control record key; an empty control batch (compaction can leave one) or an
   * unknown control type changes nothing.
   */
  update(batch: RecordBatch): CompletedTxn[] {
    if (batch.isControl) {
      const type = controlTypeOf(batch);
      if (type === ControlRecordType.MIRROR_PID_RESET) return this.resetAll(batch.baseOffset);
      if (type !== ControlRecordType.ABORT && type !== ControlRecordType.COMMIT) return [];
      if (batch.producerId < 0n) return [];
      const e = this.entryFor(batch);
      e.lastTimestamp = batch.maxTimestamp;
      if (e.currentTxnFirstOffset === undefined) return [];
      const done: CompletedTxn = {
        producerId: e.producerId,
        firstOffset: e.currentTxnFirstOffset,
        lastOffset: batch.baseOffset,
        isAborted: type === ControlRecordType.ABORT,
      };
      e.currentTxnFirstOffset = undefined;
      this.unreplicated.push(done);
      return [done];
    }
    if (batch.producerId < 0n) return [];
    const e = this.entryFor(batch);
    if (batch.baseSequence >= 0) {
      e.batchMetadata.push({
        firstSeq: batch.baseSequence,
        lastSeq: batch.lastSequence,
        firstOffset: batch.baseOffset,
        lastOffset: batch.lastOffset,
      });
      if (e.batchMetadata.length > MAX_BATCHES_PER_PRODUCER) e.batchMetadata.shift();
    }
    e.lastTimestamp = batch.maxTimestamp;
    if (batch.isTransactional && e.currentTxnFirstOffset === undefined)
      e.currentTxnFirstOffset = batch.baseOffset;
    return [];
  }

  /**
   * First offset the LSO may not pass: the earliest open transaction, or the earliest closed one whose
   * marker is not yet below the high watermark (its outcome could still be truncated away).
   */
  firstUnstableOffset(): bigint | undefined {
    let min: bigint | undefined;
    for (const e of this.producers.values()) {
      const f = e.currentTxnFirstOffset;
      if (f !== undefined && (min === undefined || f < min)) min = f;
    }
    for (const t of this.unreplicated) if (min === undefined || t.firstOffset < min) min = t.firstOffset;
    return min;
  }

  /** Open transactions, as (producer id, first offset), earliest first. */
  ongoingTransactions(): { producerId: bigint; firstOffset: bigint }[] {
    const open: { producerId: bigint; firstOffset: bigint }[] = [];
    for (const e of this.producers.values()) {
      if (e.currentTxnFirstOffset !== undefined)
        open.push({ producerId: e.producerId, firstOffset: e.currentTxnFirstOffset });
    }
    return open.sort((a, b) => (a.firstOffset < b.firstOffset ? -1 : 1));
  }

  /** The highest high watermark applied since the state was built (-1: none): see `onHighWatermarkUpdated`. */
  get highWatermarkApplied(): bigint {
    return this.highWatermarkFloor;
  }

  /** Forgets closed transactions whose marker is now below the high watermark. */
  onHighWatermarkUpdated(highWatermark: bigint): void {
    if (highWatermark > this.highWatermarkFloor) this.highWatermarkFloor = highWatermark;
    if (this.unreplicated.length > 0)
      this.unreplicated = this.unreplicated.filter((t) => t.lastOffset >= highWatermark);
  }

  /**
   * Kafka's removeExpiredProducers: forgets every producer with no open transaction whose last batch's
   * timestamp is `expirationMs` or more before `nowMs` (producer.id.expiration.ms). Its next send is then
   * taken at any sequence, as from a producer the partition never saw. Returns how many went.
   */
  removeExpiredProducers(nowMs: number, expirationMs: number): number {
    let removed = 0;
    for (const [pid, e] of this.producers) {
      if (isProducerExpired(e, nowMs, expirationMs)) {
        this.producers.delete(pid);
        removed++;
      }
    }
    return removed;
  }

  /** `checkpoint` without the producers `removeExpiredProducers(nowMs, expirationMs)` would forget. */
  static withoutExpired(
    checkpoint: ProducerStateCheckpoint,
    nowMs: number,
    expirationMs: number,
  ): ProducerStateCheckpoint {
    const producers = checkpoint.producers.filter((e) => !isProducerExpired(e, nowMs, expirationMs));
    return producers.length === checkpoint.producers.length ? checkpoint : { ...checkpoint, producers };
  }

  /** Removes all state. */
  clear(): void {
    this.producers.clear();
    this.unreplicated = [];
    this.highWatermarkFloor = -1n;
  }

  /** A copy of the whole state, for `restore` (a log takes one at every segment roll). */
  checkpoint(): ProducerStateCheckpoint {
    return {
      producers: [...this.producers.values()].map(copyEntry),
      unreplicated: this.unreplicated.map((t) => ({ ...t })),
      highWatermarkFloor: this.highWatermarkFloor,
    };
  }

  /** `checkpoint` after `onLogStartOffsetIncremented(offset)`. */
  static onLogStartOffsetIncremented(
    checkpoint: ProducerStateCheckpoint,
    offset: bigint,
  ): ProducerStateCheckpoint {
    const m = new ProducerStateManager();
    m.restore(checkpoint);
    m.onLogStartOffsetIncremented(offset);
    return m.checkpoint();
  }

  /** Puts back the state of `checkpoint` (which stays usable: nothing of it is shared). */
  restore(checkpoint: ProducerStateCheckpoint): void {
    this.producers.clear();
    for (const e of checkpoint.producers) this.producers.set(e.producerId, copyEntry(e));
    this.unreplicated = checkpoint.unreplicated.map((t) => ({ ...t }));
    this.highWatermarkFloor = checkpoint.highWatermarkFloor;
  }

  /**
   * Kafka's onLogStartOffsetIncremented: the log start moved to `offset` (retention or DeleteRecords deleted
   * the batches below it). Only the closed transactions whose marker lies below it are forgotten; every
   * producer stays, with its epoch, sequences and open transaction, even when none of its batches is left,
   * so its next send continues its sequence. Producers leave only by MIRROR_PID_RESET, a full truncation
   * or `removeExpiredProducers` (producer.id.expiration.ms).
   */
  onLogStartOffsetIncremented(offset: bigint): void {
    if (this.unreplicated.length > 0)
      this.unreplicated = this.unreplicated.filter((t) => t.lastOffset >= offset);
  }

  private entryFor(batch: RecordBatch): ProducerStateEntry {
    let e = this.producers.get(batch.producerId);
    if (!e) {
      e = {
        producerId: batch.producerId,
        producerEpoch: batch.producerEpoch,
        batchMetadata: [],
        currentTxnFirstOffset: undefined,
        lastTimestamp: batch.maxTimestamp,
      };
      this.producers.set(batch.producerId, e);
    } else if (e.producerEpoch !== batch.producerEpoch) {
      // Kafka's maybeUpdateProducerEpoch: sequences restart with a new epoch.
      e.producerEpoch = batch.producerEpoch;
      e.batchMetadata = [];
    }
    return e;
  }

  /**
   * MIRROR_PID_RESET: every entry goes. The mirror appends ABORT markers first, so normally no transaction
   * is open; one that still is gets closed as aborted, so its records never read as committed and the
   * LSO does not stay behind it forever.
   */
  private resetAll(resetOffset: bigint): CompletedTxn[] {
    const closed: CompletedTxn[] = [];
    // Earliest first, as `ongoingTransactions` lists them: an order that does not depend on when each
    // producer was first seen, so a replay of part of the log closes them in the same order.
    for (const { producerId, firstOffset } of this.ongoingTransactions()) {
      const done = { producerId, firstOffset, lastOffset: resetOffset, isAborted: true };
      closed.push(done);
      this.unreplicated.push(done);
    }
    this.producers.clear();
    return closed;
  }
}

/** Kafka's isProducerExpired: no open transaction, and the last batch is `expirationMs` old or older. */
function isProducerExpired(e: ProducerStateEntry, nowMs: number, expirationMs: number): boolean {
  return e.currentTxnFirstOffset === undefined && nowMs - Number(e.lastTimestamp) >= expirationMs;
}

function copyEntry(e: ProducerStateEntry): ProducerStateEntry {
  return { ...e, batchMetadata: e.batchMetadata.map((m) => ({ ...m })) };
}
