import type { CompressionType } from "@cluster-mirror/protocol";
import { KafkaError } from "@cluster-mirror/protocol";
import type { PendingTxnOffset } from "../admin-handler";
import { ClusterError } from "../errors";
import { refusedOffsetsError } from "../offset-commit-refusals";
import type { ClientContext } from "./kafka";
import { Retrier } from "./retry";
import { checkSendBatch, checkSendOptions, checkSendRecord } from "./send-checks";
import { sendOffsetsArgument } from "./send-offsets-checks";
import type { Message, ProducerBatch, ProducerRecord, RecordMetadata } from "./types";

/**
 * The TxnOffsetCommit errors kafkajs's eosManager retries in `sendOffsets` (its
 * COMMIT_RETRIABLE_PROTOCOL_ERRORS, and COMMIT_STALE_COORDINATOR_PROTOCOL_ERRORS after finding the
 * coordinator again); it throws any other at once.
 */
const SEND_OFFSETS_RETRIABLE = new Set([
  "UNKNOWN_TOPIC_OR_PARTITION",
  "COORDINATOR_LOAD_IN_PROGRESS",
  "COORDINATOR_NOT_AVAILABLE",
  "NOT_COORDINATOR",
]);

function isSendOffsetsRetriable(error: unknown): boolean {
  return error instanceof KafkaError && SEND_OFFSETS_RETRIABLE.has(error.errorName);
}

/** What a transaction and its producer share. */
export interface TransactionState {
  transactionalId: string;
  producerId: bigint;
  producerEpoch: number;
  active: boolean;
  /** `topic:partition` keys already added to the transaction with the coordinator. */
  partitions: Set<string>;
  /** `sendOffsets` added offsets with the coordinator (AddOffsetsToTxn): commit and abort send EndTxn. */
  offsetsAdded: boolean;
  /** Offsets to commit for consumer groups when the transaction commits. */
  offsets: ({
    groupId: string;
    topic: string;
    partition: number;
    offset: bigint;
  } & PendingTxnOffset)[];
  /** Sends not finished yet (commit and abort wait for them). */
  inFlight: Set<Promise<void>>;
  /** A send failed: the transaction can only be aborted. */
  failed: Error | undefined;
}

/** What a transaction needs from its producer. */
export interface TransactionDeps {
  client: ClientContext;
  retrier: Retrier;
  send(
    topics: readonly { topic: string; messages: readonly Message[] }[],
    options: { acks?: number; timeout?: number; compression?: CompressionType },
  ): Promise<RecordMetadata[]>;
  onFenced(error: ClusterError): void;
  /** PRODUCER_FENCED once a newer producer with the same transactional id (or a timeout) fenced this one. */
  fenced(): ClusterError | undefined;
  onAbortAfterFailure(): void;
}

/** kafkajs's `sendOffsets` argument; `consumer` (our extra) names the member, as KIP-447's group metadata. */
export interface SendOffsetsArgs {
  consumerGroupId: string;
  topics: { topic: string; partitions: { partition: number; offset: string }[] }[];
  consumer?: { memberId?: string; generationId?: number };
}

/**
 * One transaction of a transactional producer (kafkajs's `Transaction`): every partition is added to the
 * transaction with the coordinator before its first batch; `commit` and `abort` end it with EndTxn, and
 * the coordinator writes COMMIT or ABORT markers on every partition. Offsets given to `sendOffsets` are
 * stored in their group when the transaction commits and dropped when it aborts (a simplification of
 * Kafka's transactional writes to `__consumer_offsets`).
 */
export class Transaction {
  constructor(
    private readonly state: TransactionState,
    private readonly deps: TransactionDeps,
  ) {}

  /** Produces to one topic inside the transaction. */
  async send(record: ProducerRecord): Promise<RecordMetadata[]> {
    this.checkActive();
    checkSendRecord(record, "transaction.send(record)");
    checkSendOptions(record, "transaction.send(record)");
    return this.deps.send([{ topic: record.topic, messages: record.messages }], record);
  }

  /** Produces to several topics inside the transaction. */
  async sendBatch(batch: ProducerBatch): Promise<RecordMetadata[]> {
    this.checkActive();
    checkSendBatch(batch, "transaction.sendBatch(batch)");
    checkSendOptions(batch, "transaction.sendBatch(batch)");
    return this.deps.send(batch.topicMessages ?? [], batch);
  }

  /**
   * Adds consumer offsets to the transaction: they are committed with it, or dropped if it aborts. As
   * kafkajs's eosManager, AddOffsetsToTxn first: the transaction starts with the coordinator (a fenced
   * producer is refused with PRODUCER_FENCED; commit and abort send EndTxn). Then, as Kafka's
   * TxnOffsetCommit (see `AdminHandler.txnOffsetCommit`), an offset of a topic the principal may not READ
   * or of a partition the cluster does not have is refused and not added; the others of the call are
   * added. As kafkajs's eosManager, the request is sent again after a backoff (the client's `retry`
   * settings) while its first refusal is one kafkajs retries (UNKNOWN_TOPIC_OR_PARTITION: the partition may
   * be created meanwhile); that refusal is thrown once the retries are spent, any other at once, and
   * INVALID_TXN_STATE if the transaction ended meanwhile.
   */
  async sendOffsets(args: SendOffsetsArgs): Promise<void> {
    this.checkActive();
    const { groupId, offsets } = sendOffsetsArgument(args);
    const { client } = this.deps;
    // As kafkajs's eosManager: AddOffsetsToTxn first (once; a fenced producer is refused here), then the
    // TxnOffsetCommit, retried.
    client.cluster.ensureOpen("send offsets to a transaction");
    try {
      client.handler.addOffsetsToTxn(client.request, {
        transactionalId: this.state.transactionalId,
        producerId: this.state.producerId,
        producerEpoch: this.state.producerEpoch,
        groupId,
      });
    } catch (error) {
      this.noteFenced(error);
      throw error;
    }
    this.state.offsetsAdded = true;
    const retrier = new Retrier(client.retry, client.scheduler, client.random);
    let pending = offsets.length;
    await retrier.run(() => {
      client.cluster.ensureOpen("send offsets to a transaction");
      this.checkStillActive(pending);
      const { admitted, refused } = client.handler.txnOffsetCommit(client.request, {
        transactionalId: this.state.transactionalId,
        groupId,
        ...(args.consumer?.memberId === undefined
          ? {}
          : { memberId: args.consumer.memberId, generationId: args.consumer.generationId }),
        offsets,
      });
      this.addOffsets(groupId, admitted);
      pending = refused.length;
      if (refused.length === 0) return;
      const rest =
        admitted.length === 0
          ? "nothing was added"
          : `the other ${admitted.length} offset(s) were added and commit with the transaction`;
      throw refusedOffsetsError(refused, {
        groupId,
        rest,
        verb: "Send",
        where: "transaction.sendOffsets(args): ",
      });
    }, isSendOffsetsRetriable);
  }

  /**
   * Commits: waits for the transaction's sends, then EndTxn(commit), then stores the offsets. Throws
   * PRODUCER_FENCED if a newer producer with this transactional id fenced this one (its InitProducerId
   * aborted this transaction).
   */
  async commit(): Promise<void> {
    this.checkActive();
    await this.drain();
    this.throwIfFenced();
    if (this.state.failed) {
      throw new ClusterError(
        "INVALID_TXN_STATE",
        `transaction of '${this.state.transactionalId}' had a failed send (${this.state.failed.message}); abort it`,
        { cause: this.state.failed },
      );
    }
    const { client } = this.deps;
    if (this.isOngoing()) await this.endTxn(true);
    const byGroup = new Map<string, TransactionState["offsets"]>();
    for (const o of this.state.offsets) byGroup.set(o.groupId, [...(byGroup.get(o.groupId) ?? []), o]);
    // The transaction is committed: it ends whatever storing its offsets does.
    try {
      for (const [groupId, offsets] of byGroup) {
        client.handler.completeTxnOffsetCommit({
          groupId,
          offsets: offsets.map(({ topic, partition, offset, topicId, position }) => ({
            topic,
            partition,
            offset,
            topicId,
            position,
          })),
        });
      }
    } finally {
      this.finish();
    }
  }

  /** Aborts: waits for the transaction's sends, then EndTxn(abort); the offsets are dropped. */
  async abort(): Promise<void> {
    this.checkActive();
    await this.drain();
    this.throwIfFenced();
    if (this.isOngoing()) await this.endTxn(false);
    if (this.state.failed) this.deps.onAbortAfterFailure();
    this.finish();
  }

  /** True until commit or abort completed. */
  isActive(): boolean {
    return this.state.active;
  }

  private async endTxn(commit: boolean): Promise<void> {
    const { client, retrier } = this.deps;
    client.cluster.ensureOpen(`${commit ? "commit" : "abort"} a transaction`);
    try {
      await retrier.run(() =>
        client.handler.endTxn(client.request, {
          transactionalId: this.state.transactionalId,
          producerId: this.state.producerId,
          producerEpoch: this.state.producerEpoch,
          commit,
        }),
      );
    } catch (error) {
      if (this.noteFenced(error)) this.state.active = false;
      throw error;
    }
  }

  /**
   * kafkajs's eosManager's `isOngoing`: partitions or offsets were added with the coordinator, so it has a
   * transaction to end (EndTxn); an empty one ends without it.
   */
  private isOngoing(): boolean {
    return this.state.partitions.size > 0 || this.state.offsetsAdded;
  }

  /**
   * A fencing error (a newer producer with this transactional id, or a timeout, bumped the epoch): the
   * producer keeps it, so its commit, abort and next transaction answer PRODUCER_FENCED. True if it was one.
   */
  private noteFenced(error: unknown): boolean {
    if (
      !(error instanceof KafkaError) ||
      (error.errorName !== "PRODUCER_FENCED" && error.errorName !== "INVALID_PRODUCER_EPOCH")
    )
      return false;
    this.deps.onFenced(
      error instanceof ClusterError ? error : new ClusterError("PRODUCER_FENCED", error.message),
    );
    return true;
  }

  /** A fenced producer's transaction was already aborted by the coordinator: it ends, with the fencing error. */
  private throwIfFenced(): void {
    const fenced = this.deps.fenced();
    if (!fenced) return;
    this.finish();
    throw fenced;
  }

  /** Keeps offsets sent for `groupId`; one sent again for the same partition replaces the earlier one. */
  private addOffsets(
    groupId: string,
    offsets: readonly ({ topic: string; partition: number; offset: bigint } & PendingTxnOffset)[],
  ): void {
    for (const { topic, partition, offset, topicId, position } of offsets) {
      this.state.offsets = this.state.offsets.filter(
        (o) => o.groupId !== groupId || o.topic !== topic || o.partition !== partition,
      );
      this.state.offsets.push({ groupId, topic, partition, offset, topicId, position });
    }
  }

  private async drain(): Promise<void> {
    while (this.state.inFlight.size > 0) await Promise.all([...this.state.inFlight]);
  }

  private finish(): void {
    this.state.active = false;
    this.state.offsets = [];
  }

  /**
   * A retry of `sendOffsets` after the transaction ended (committed or aborted meanwhile): Kafka's
   * TxnOffsetCommit verification answers a client of kafkajs's versions INVALID_TXN_STATE for a transaction
   * that is not ongoing, and kafkajs's eosManager does not retry it. Left to go on, the offsets would be
   * added to no transaction while `sendOffsets` resolved.
   */
  private checkStillActive(pending: number): void {
    if (this.state.active) return;
    throw new ClusterError(
      "INVALID_TXN_STATE",
      `transaction.sendOffsets(args): the transaction of '${this.state.transactionalId}' ended while sendOffsets was retrying ${pending} refused offset(s): they are in no transaction. Send them again in a new one (producer.transaction())`,
    );
  }

  private checkActive(): void {
    if (!this.state.active) {
      throw new ClusterError(
        "INVALID_TXN_STATE",
        "this transaction has ended; begin a new one with producer.transaction()",
      );
    }
  }
}
