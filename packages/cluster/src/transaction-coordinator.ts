import type { Clock } from "./clock";
import { ClusterError } from "./errors";
import type { Cancel, Scheduler } from "./scheduler";

/** A topic partition named by topic and index. */
export interface TopicPartition {
  topic: string;
  partition: number;
}

/** Kafka's TransactionState names. Prepare states last only while markers are still being written. */
export type TransactionStateName =
  | "Empty"
  | "Ongoing"
  | "PrepareCommit"
  | "PrepareAbort"
  | "CompleteCommit"
  | "CompleteAbort";

/** What the coordinator knows of one transactional id (Kafka's TransactionMetadata). */
export interface TransactionMetadata {
  transactionalId: string;
  producerId: bigint;
  producerEpoch: number;
  state: TransactionStateName;
  transactionTimeoutMs: number;
  /** When the current transaction started (its first partition was added), or -1. */
  txnStartTimestamp: number;
  /**
   * When the coordinator last changed this transactional id's state (Kafka's txnLastUpdateTimestamp): an id
   * left Empty or complete this long ago expires (`transactionalIdExpirationMs`). Absent in a state stored
   * without it: the load counts it as updated then.
   */
  txnLastUpdateTimestamp?: number;
  partitions: TopicPartition[];
  /**
   * Partitions whose end marker is not written yet: not acknowledged by their in-sync replicas, or their
   * leader was not available.
   */
  pendingMarkers: TopicPartition[];
  /**
   * The last transaction's end, kept while no new transaction starts: its markers are checked again on
   * each housekeeping pass (see `restoreLostMarkers`).
   */
  lastEnd?: {
    result: "COMMIT" | "ABORT";
    producerId: bigint;
    producerEpoch: number;
    partitions: TopicPartition[];
  };
}

/**
 * Writes one transaction's end marker on a partition's leader; throws if the leader is not available.
 * Returns nothing when the marker is written for good at once (the in-sync replicas have it), or a promise
 * that settles once they have it (Kafka's coordinator sends WriteTxnMarkers, which the leader answers with
 * acks=all) and rejects when the leader lost its leadership or timed out first.
 */
export type WriteTxnMarker = (marker: {
  partition: TopicPartition;
  producerId: bigint;
  producerEpoch: number;
  coordinatorEpoch: number;
  result: "COMMIT" | "ABORT";
}) => void | Promise<void>;

/** How long a marker whose write failed waits before it is written again (Kafka's retry.backoff.ms). */
export const MARKER_RETRY_BACKOFF_MS = 100;

/** Settings and ports of the transaction coordinator. */
export interface TransactionCoordinatorOptions {
  clock: Clock;
  /** Hands out producer ids that are never used twice in the cluster. */
  nextProducerId: () => bigint;
  writeTxnMarker: WriteTxnMarker;
  /**
   * Whether the partition's current leader still holds a transaction of `producerId` open: a marker
   * written before it lost its leadership, and not copied by the new leader, is gone. Default: never.
   */
  txnOpenOnLeader?: (partition: TopicPartition, producerId: bigint) => boolean;
  /** Kafka's `transaction.max.timeout.ms` (default 900000). */
  maxTransactionTimeoutMs?: number;
  /**
   * Kafka's `transactional.id.expiration.ms` (default 604800000, 7 days): a transactional id with no
   * transaction in progress whose state did not change for this long is forgotten by the housekeeping
   * pass (its next InitProducerId gets a new producer id), so the stored state does not grow forever.
   */
  transactionalIdExpirationMs?: number;
  coordinatorEpoch?: number;
  /**
   * Where markers whose write failed are retried, {@link MARKER_RETRY_BACKOFF_MS} later. Without it they
   * are retried on the transactional id's next request and on each housekeeping pass.
   */
  scheduler?: Scheduler;
  /**
   * Stores the coordinator's whole state (Kafka's `__transaction_state`): called with every transactional
   * id's metadata after each change, before the request that made it is answered and before any marker of
   * a decision is written. A throw from a request's change undoes the change and fails the request with
   * the retriable COORDINATOR_NOT_AVAILABLE; after a change the coordinator makes on its own (a marker
   * acknowledged) it is ignored, and the next change stores the whole state again.
   */
  persist?: (transactions: TransactionMetadata[]) => void;
}

const MAX_EPOCH = 32767;

/**
 * The transaction coordinator: producer ids and epochs for transactional ids (fencing zombies), the
 * transaction state machine (Empty -> Ongoing -> PrepareCommit/PrepareAbort -> CompleteCommit/CompleteAbort),
 * end markers on every partition of a transaction, and aborts of transactions that run past their timeout.
 */
export class TransactionCoordinator {
  private readonly transactions = new Map<string, TransactionMetadata>();
  private readonly options: TransactionCoordinatorOptions;
  /** Markers written and waiting for their acknowledgement, by transactional id and partition. */
  private readonly markersInFlight = new Set<string>();
  /** Retries scheduled after a failed marker write, by transactional id. */
  private readonly retries = new Map<string, Cancel>();
  private closed = false;

  constructor(options: TransactionCoordinatorOptions) {
    this.options = options;
  }

  /**
   * InitProducerId. Without a transactional id: a fresh idempotent producer id at epoch 0. With one: the
   * same producer id at a higher epoch, which fences the previous producer; an open transaction of the
   * previous producer is aborted first.
   */
  initProducerId(request: { transactionalId?: string; transactionTimeoutMs?: number }): {
    producerId: bigint;
    producerEpoch: number;
  } {
    const { transactionalId } = request;
    if (transactionalId === undefined) return { producerId: this.options.nextProducerId(), producerEpoch: 0 };
    if (transactionalId === "")
      throw new ClusterError("INVALID_REQUEST", "transactional id must not be empty");
    const timeout = request.transactionTimeoutMs ?? 60_000;
    const max = this.options.maxTransactionTimeoutMs ?? 900_000;
    if (!Number.isInteger(timeout) || timeout <= 0 || timeout > max) {
      throw new ClusterError(
        "INVALID_TRANSACTION_TIMEOUT",
        `transaction timeout ${timeout} ms must be between 1 and transaction.max.timeout.ms (${max})`,
      );
    }
    const existing = this.transactions.get(transactionalId);
    if (!existing) {
      const fresh: TransactionMetadata = {
        transactionalId,
        producerId: this.options.nextProducerId(),
        producerEpoch: 0,
        state: "Empty",
        transactionTimeoutMs: timeout,
        txnStartTimestamp: -1,
        txnLastUpdateTimestamp: this.options.clock.now(),
        partitions: [],
        pendingMarkers: [],
      };
      this.transactions.set(transactionalId, fresh);
      this.storeOrUndo(transactionalId, () => this.transactions.delete(transactionalId));
      return { producerId: fresh.producerId, producerEpoch: 0 };
    }
    this.retryPendingMarkers(existing);
    if (existing.state === "PrepareCommit" || existing.state === "PrepareAbort") {
      throw new ClusterError(
        "CONCURRENT_TRANSACTIONS",
        `transactional id '${transactionalId}' is still completing its last transaction; retry shortly`,
      );
    }
    if (existing.state === "Ongoing") {
      // Kafka's handleInitProducerId: fence the old producer by bumping the epoch of the same producer id,
      // and abort its transaction with markers at that epoch, so the partitions' producer state refuses
      // its batches. The new producer then gets a further epoch, and starts a clean transaction.
      this.change(existing, () => {
        this.fenceEpoch(existing);
        this.prepare(existing, "ABORT");
      });
      this.retryPendingMarkers(existing);
      if ((existing.state as TransactionStateName) === "PrepareAbort") {
        throw new ClusterError(
          "CONCURRENT_TRANSACTIONS",
          `transactional id '${transactionalId}': aborting the previous producer's transaction; retry shortly`,
        );
      }
    }
    this.change(existing, () => {
      this.bumpEpoch(existing);
      existing.transactionTimeoutMs = timeout;
    });
    return { producerId: existing.producerId, producerEpoch: existing.producerEpoch };
  }

  /** AddPartitionsToTxn: starts the transaction on its first call and adds partitions to it. */
  addPartitionsToTxn(request: {
    transactionalId: string;
    producerId: bigint;
    producerEpoch: number;
    partitions: readonly TopicPartition[];
  }): void {
    const txn = this.validate(request);
    this.retryPendingMarkers(txn);
    if (txn.state === "PrepareCommit" || txn.state === "PrepareAbort") {
      throw new ClusterError(
        "CONCURRENT_TRANSACTIONS",
        `transactional id '${txn.transactionalId}' is still completing its last transaction; retry shortly`,
      );
    }
    const added = request.partitions.filter(
      (tp) => !txn.partitions.some((p) => p.topic === tp.topic && p.partition === tp.partition),
    );
    if (txn.state === "Ongoing" && added.length === 0) return;
    this.change(txn, () => {
      if (txn.state !== "Ongoing") {
        txn.state = "Ongoing";
        txn.lastEnd = undefined;
        txn.partitions = [];
        txn.txnStartTimestamp = this.options.clock.now();
      }
      for (const tp of request.partitions) {
        if (!txn.partitions.some((p) => p.topic === tp.topic && p.partition === tp.partition)) {
          txn.partitions.push({ topic: tp.topic, partition: tp.partition });
        }
      }
    });
  }

  /**
   * AddOffsetsToTxn: a transaction sends consumer offsets. Kafka adds the group's `__consumer_offsets`
   * partition to the transaction; this coordinator keeps no such partition (the client holds the offsets
   * until the commit, see `Transaction.sendOffsets`), but the rest is the same: the producer must be the
   * transactional id's current one (PRODUCER_FENCED), and the transaction starts on its first call, so a
   * newer producer or the timeout aborts it and its EndTxn is checked.
   */
  addOffsetsToTxn(request: { transactionalId: string; producerId: bigint; producerEpoch: number }): void {
    this.addPartitionsToTxn({ ...request, partitions: [] });
  }

  /**
   * KIP-890's verification of a transactional produce, on the partition leader before it appends: the
   * batch's producer must be the transactional id's current one (an older epoch was fenced:
   * INVALID_PRODUCER_EPOCH, as Kafka answers a produce), and the partition must be in its ongoing
   * transaction (INVALID_TXN_STATE). Without the epoch check a fenced producer's batch could land in the
   * next producer's transaction on a partition it had not written yet, and be committed with it.
   */
  verifyTransaction(request: {
    transactionalId: string;
    producerId: bigint;
    producerEpoch: number;
    partition: TopicPartition;
  }): void {
    const { transactionalId, producerId, producerEpoch, partition } = request;
    const txn = this.transactions.get(transactionalId);
    if (!txn || txn.producerId !== producerId) {
      throw new ClusterError(
        "INVALID_PRODUCER_ID_MAPPING",
        `transactional id '${transactionalId}' does not belong to producer id ${producerId}; call initTransactions first`,
      );
    }
    if (producerEpoch !== txn.producerEpoch) {
      throw new ClusterError(
        "INVALID_PRODUCER_EPOCH",
        `producer ${producerId} epoch ${producerEpoch} of '${transactionalId}' was fenced by epoch ${txn.producerEpoch} (a newer producer with this transactional id, or a timeout, aborted its transaction); close this producer`,
      );
    }
    if (!this.isInTransaction(transactionalId, partition)) {
      throw new ClusterError(
        "INVALID_TXN_STATE",
        `${partition.topic}-${partition.partition} was not added to transaction '${transactionalId}'; call addPartitionsToTxn first`,
      );
    }
  }

  /** True if the partition is part of the producer's ongoing transaction (a produce must check this). */
  isInTransaction(transactionalId: string, tp: TopicPartition): boolean {
    const txn = this.transactions.get(transactionalId);
    return (
      txn?.state === "Ongoing" &&
      txn.partitions.some((p) => p.topic === tp.topic && p.partition === tp.partition)
    );
  }

  /**
   * EndTxn: commits or aborts the ongoing transaction by writing markers on each of its partitions. The
   * decision is made when this returns (errors are thrown at once); the promise settles once every marker
   * was written once: acknowledged (the transaction is complete), or failed and retried later, while the
   * transaction stays PrepareCommit / PrepareAbort (its next request gets CONCURRENT_TRANSACTIONS). It never
   * rejects.
   */
  endTxn(request: {
    transactionalId: string;
    producerId: bigint;
    producerEpoch: number;
    commit: boolean;
  }): Promise<void> {
    const txn = this.validate(request);
    this.retryPendingMarkers(txn);
    const wanted = request.commit ? "CompleteCommit" : "CompleteAbort";
    if (txn.state === wanted) return SETTLED; // a retried EndTxn after success
    if (txn.state === "Empty" && !request.commit) return SETTLED; // aborting nothing is fine
    if (txn.state !== "Ongoing") {
      throw new ClusterError(
        txn.state.startsWith("Prepare") ? "CONCURRENT_TRANSACTIONS" : "INVALID_TXN_STATE",
        `transactional id '${txn.transactionalId}' is ${txn.state}; ${request.commit ? "commit" : "abort"} needs an ongoing transaction`,
      );
    }
    return this.complete(txn, request.commit ? "COMMIT" : "ABORT");
  }

  /**
   * Forgets the transactional ids with no transaction in progress (Empty, CompleteCommit, CompleteAbort)
   * whose state last changed `transactionalIdExpirationMs` ago or more, as Kafka's coordinator removes
   * expired ids; returns them. Stored at once; if that fails they are kept (the next pass tries again).
   */
  expireTransactionalIds(): string[] {
    const now = this.options.clock.now();
    const expiration = this.options.transactionalIdExpirationMs ?? 604_800_000;
    const expired = [...this.transactions.values()].filter(
      (t) =>
        (t.state === "Empty" || t.state === "CompleteCommit" || t.state === "CompleteAbort") &&
        !this.retries.has(t.transactionalId) &&
        now - (t.txnLastUpdateTimestamp ?? now) >= expiration,
    );
    if (expired.length === 0) return [];
    for (const t of expired) this.transactions.delete(t.transactionalId);
    try {
      this.store();
    } catch {
      for (const t of expired) this.transactions.set(t.transactionalId, t);
      return [];
    }
    return expired.map((t) => t.transactionalId);
  }

  /** Aborts every ongoing transaction older than its timeout; returns their transactional ids. */
  abortTimedOutTransactions(): string[] {
    const now = this.options.clock.now();
    const aborted: string[] = [];
    for (const txn of this.transactions.values()) {
      this.retryPendingMarkers(txn);
      this.restoreLostMarkers(txn);
      if (txn.state !== "Ongoing" || now - txn.txnStartTimestamp < txn.transactionTimeoutMs) continue;
      // Kafka bumps the epoch so the timed-out producer is fenced from continuing.
      try {
        this.change(txn, () => {
          this.fenceEpoch(txn);
          this.prepare(txn, "ABORT");
        });
      } catch {
        continue; // not stored: the next pass tries again
      }
      void this.retryPendingMarkers(txn);
      aborted.push(txn.transactionalId);
    }
    return aborted;
  }

  /**
   * Loads a stored state (after a restart, before any request): every transactional id as it was stored.
   * A transaction decided but not yet complete (PrepareCommit, PrepareAbort) writes its markers again (one
   * written before the restart changes nothing when written twice); an ongoing one is aborted once past its
   * timeout, as before the restart.
   */
  load(transactions: readonly TransactionMetadata[]): void {
    for (const stored of transactions) {
      const txn = structuredClone(stored);
      txn.txnLastUpdateTimestamp ??= this.options.clock.now();
      this.transactions.set(txn.transactionalId, txn);
      if (txn.state === "PrepareCommit" || txn.state === "PrepareAbort") this.retryLater(txn);
    }
  }

  /** Stops retrying markers and storing (the cluster shuts down): nothing is scheduled or stored any more. */
  close(): void {
    this.closed = true;
    for (const cancel of this.retries.values()) cancel();
    this.retries.clear();
  }

  /** Every transactional id the coordinator knows, with its state (a copy). */
  listTransactions(): TransactionMetadata[] {
    return [...this.transactions.values()].map((t) => structuredClone(t));
  }

  /** One transactional id's state (a copy), if known. */
  describeTransaction(transactionalId: string): TransactionMetadata | undefined {
    const t = this.transactions.get(transactionalId);
    return t && structuredClone(t);
  }

  private validate(request: {
    transactionalId: string;
    producerId: bigint;
    producerEpoch: number;
  }): TransactionMetadata {
    const txn = this.transactions.get(request.transactionalId);
    if (!txn || txn.producerId !== request.producerId) {
      throw new ClusterError(
        "INVALID_PRODUCER_ID_MAPPING",
        `transactional id '${request.transactionalId}' does not belong to producer id ${request.producerId}; call initTransactions first`,
      );
    }
    if (request.producerEpoch !== txn.producerEpoch) {
      throw new ClusterError(
        "PRODUCER_FENCED",
        `producer ${request.producerId} epoch ${request.producerEpoch} was fenced by epoch ${txn.producerEpoch} of '${request.transactionalId}'; close this producer`,
      );
    }
    return txn;
  }

  /**
   * Kafka's prepareFenceProducerEpoch: the same producer id, one epoch up, never a new producer id. The
   * abort that follows must write its markers for the producer id the transaction's batches carry, or
   * their partitions keep the transaction open forever. Epochs stay below MAX_EPOCH - 1 in use (the next
   * InitProducerId moves to a new producer id), so this never overflows.
   */
  private fenceEpoch(txn: TransactionMetadata): void {
    if (txn.producerEpoch < MAX_EPOCH) txn.producerEpoch++;
  }

  /** Kafka's prepareIncrementProducerEpoch: one epoch up, or a new producer id once the epochs run out. */
  private bumpEpoch(txn: TransactionMetadata): void {
    if (txn.producerEpoch >= MAX_EPOCH - 1) {
      txn.producerId = this.options.nextProducerId();
      txn.producerEpoch = 0;
    } else txn.producerEpoch++;
  }

  /** Decides the transaction's end and writes its markers: the decision is stored before any marker. */
  private complete(txn: TransactionMetadata, result: "COMMIT" | "ABORT"): Promise<void> {
    this.change(txn, () => this.prepare(txn, result));
    return this.retryPendingMarkers(txn);
  }

  private prepare(txn: TransactionMetadata, result: "COMMIT" | "ABORT"): void {
    txn.state = result === "COMMIT" ? "PrepareCommit" : "PrepareAbort";
    txn.pendingMarkers = [...txn.partitions];
  }

  /**
   * Applies a request's change to `txn` and stores the state; if it cannot be stored, the change is undone
   * and the request fails with the retriable COORDINATOR_NOT_AVAILABLE (Kafka answers so when its
   * `__transaction_state` append fails).
   */
  private change(txn: TransactionMetadata, apply: () => void): void {
    const before = structuredClone(txn);
    apply();
    txn.txnLastUpdateTimestamp = this.options.clock.now();
    this.storeOrUndo(txn.transactionalId, () => Object.assign(txn, before));
  }

  /** Stores the state; if that fails, runs `undo` and throws COORDINATOR_NOT_AVAILABLE (see `change`). */
  private storeOrUndo(transactionalId: string, undo: () => void): void {
    try {
      this.store();
    } catch (error) {
      undo();
      throw new ClusterError(
        "COORDINATOR_NOT_AVAILABLE",
        `transactional id '${transactionalId}': the transaction state could not be stored (${error instanceof Error ? error.message : String(error)}); nothing changed, retry once the disk is writable`,
        { cause: error },
      );
    }
  }

  /** Stores the whole state, if a store is set; throws what it throws. */
  private store(): void {
    // Closed: the data dir (and its lock) may already belong to the next node, whose state this would
    // overwrite (a marker acknowledged while the brokers shut down completes its transaction after close).
    if (this.closed && this.options.persist) throw new Error("the transaction coordinator is closed");
    this.options.persist?.(this.listTransactions());
  }

  /** Stores the state after a change the coordinator made on its own: a failure waits for the next change. */
  private storeQuietly(): void {
    try {
      this.store();
    } catch {
      // The stored state is the one before: its markers are written again after a restart, which is harmless.
    }
  }

  /**
   * The safety net behind the acknowledged markers: while the transaction stays ended (no new one started:
   * a transactional producer writes only inside one), a partition whose leader still holds the producer's
   * transaction open gets the marker again (a leader elected uncleanly, without it). A second marker of an
   * ended transaction changes nothing, so writing one the leader already had is harmless.
   */
  private restoreLostMarkers(txn: TransactionMetadata): void {
    const end = txn.lastEnd;
    const check = this.options.txnOpenOnLeader;
    if (!end || !check || (txn.state !== "CompleteCommit" && txn.state !== "CompleteAbort")) return;
    for (const partition of end.partitions) {
      // A leader that is not available now is asked again on the next pass.
      if (!check(partition, end.producerId)) continue;
      try {
        const written = this.writeTxnMarker(partition, end, end.result);
        if (written instanceof Promise) written.catch(() => {});
      } catch {
        // no leader now
      }
    }
  }

  /** Writes one end marker (see {@link WriteTxnMarker}); throws when the partition's leader is not available. */
  private writeTxnMarker(
    partition: TopicPartition,
    producer: { producerId: bigint; producerEpoch: number },
    result: "COMMIT" | "ABORT",
  ): void | Promise<void> {
    return this.options.writeTxnMarker({
      partition,
      producerId: producer.producerId,
      producerEpoch: producer.producerEpoch,
      coordinatorEpoch: this.options.coordinatorEpoch ?? 0,
      result,
    });
  }

  /**
   * Writes the pending markers not already waiting for their acknowledgement. A marker counts once its
   * in-sync replicas have it (as Kafka's coordinator waits for WriteTxnMarkers): one appended on a leader
   * that is lost before its followers copied it is written again on the new leader. The transaction
   * completes when every marker counts. Settles once each marker written here was acknowledged or failed.
   */
  private retryPendingMarkers(txn: TransactionMetadata): Promise<void> {
    if (txn.state !== "PrepareCommit" && txn.state !== "PrepareAbort") return SETTLED;
    const result = txn.state === "PrepareCommit" ? "COMMIT" : "ABORT";
    const waits: Promise<void>[] = [];
    for (const partition of [...txn.pendingMarkers]) {
      const key = `${txn.transactionalId}\u0000${partition.topic}\u0000${partition.partition}`;
      if (this.markersInFlight.has(key)) continue;
      let written: void | Promise<void>;
      try {
        written = this.writeTxnMarker(partition, txn, result);
      } catch {
        this.retryLater(txn); // no leader now
        continue;
      }
      if (!(written instanceof Promise)) {
        this.markerWritten(txn, partition);
        continue;
      }
      this.markersInFlight.add(key);
      waits.push(
        written.then(
          () => {
            this.markersInFlight.delete(key);
            this.markerWritten(txn, partition);
            this.completeIfWritten(txn, result);
          },
          () => {
            // The leader was not available, or lost its leadership before its followers had the marker.
            this.markersInFlight.delete(key);
            this.retryLater(txn);
          },
        ),
      );
    }
    this.completeIfWritten(txn, result);
    return waits.length === 0 ? SETTLED : Promise.all(waits).then(() => {});
  }

  private markerWritten(txn: TransactionMetadata, partition: TopicPartition): void {
    txn.pendingMarkers = txn.pendingMarkers.filter(
      (p) => p.topic !== partition.topic || p.partition !== partition.partition,
    );
  }

  private completeIfWritten(txn: TransactionMetadata, result: "COMMIT" | "ABORT"): void {
    if (
      txn.pendingMarkers.length > 0 ||
      txn.state !== (result === "COMMIT" ? "PrepareCommit" : "PrepareAbort")
    )
      return;
    txn.state = result === "COMMIT" ? "CompleteCommit" : "CompleteAbort";
    txn.lastEnd = {
      result,
      producerId: txn.producerId,
      producerEpoch: txn.producerEpoch,
      partitions: txn.partitions,
    };
    txn.partitions = [];
    txn.txnStartTimestamp = -1;
    txn.txnLastUpdateTimestamp = this.options.clock.now();
    this.storeQuietly();
  }

  /** Writes the transaction's pending markers again after the backoff (once per transaction at a time). */
  private retryLater(txn: TransactionMetadata): void {
    const scheduler = this.options.scheduler;
    if (!scheduler || this.closed || this.retries.has(txn.transactionalId)) return;
    this.retries.set(
      txn.transactionalId,
      scheduler.schedule(() => {
        this.retries.delete(txn.transactionalId);
        void this.retryPendingMarkers(txn);
      }, MARKER_RETRY_BACKOFF_MS),
    );
  }
}

const SETTLED: Promise<void> = Promise.resolve();
