import type { CompressionType } from "@cluster-mirror/protocol";
import { KafkaError } from "@cluster-mirror/protocol";
import { ClusterError } from "../errors";
import { missingPartition } from "../missing-partition";
import type { ClientContext } from "./kafka";
import type { Retrier } from "./retry";
import { checkSendBatch, checkSendOptions, checkSendRecord } from "./send-checks";
import { sendOffsetsArgument } from "./send-offsets-checks";
import type { Message, ProducerBatch, ProducerRecord, RecordMetadata } from "./types";

/** What a transaction and its producer share. */
export interface TransactionState {
  transactionalId: string;
  producerId: bigint;
  producerEpoch: number;
  active: boolean;
  /** `topic:partition` keys already added to the transaction with the coordinator. */
  partitions: Set<string>;
  /** Offsets to commit for consumer groups when the transaction commits. */
  offsets: {
    groupId: string;
    memberId?: string;
    generationId?: number;
    topic: string;
    partition: number;
    offset: bigint;
  }[];
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
   * Kafka's TxnOffsetCommit (KafkaApis.handleTxnOffsetCommitRequest), an offset of a partition the cluster
   * does not have is refused (UNKNOWN_TOPIC_OR_PARTITION, thrown after kafkajs's retries) and not added; the
   * others of the call are added.
   */
  async sendOffsets(args: SendOffsetsArgs): Promise<void> {
    this.checkActive();
    const { groupId, offsets } = sendOffsetsArgument(args);
    const { consumer } = args;
    const image = this.deps.client.cluster.controller.image;
    const unknown = offsets.filter((o) => missingPartition(image, o.topic, o.partition) !== undefined);
    const known = offsets.filter((o) => !unknown.includes(o));
    for (const { topic, partition, offset } of known) {
      this.state.offsets.push({
        groupId,
        ...(consumer?.memberId === undefined ? {} : { memberId: consumer.memberId }),
        ...(consumer?.generationId === undefined ? {} : { generationId: consumer.generationId }),
        topic,
        partition,
        offset,
      });
    }
    const first = unknown[0];
    if (first) {
      const rest =
        known.length === 0
          ? "nothing was added"
          : `the other ${known.length} offset(s) were added and commit with the transaction`;
      throw new ClusterError(
        "UNKNOWN_TOPIC_OR_PARTITION",
        `transaction.sendOffsets(args): ${missingPartition(image, first.topic, first.partition)}: group '${groupId}' gets no offset for it (${unknown.length} offset(s) of partitions the cluster does not have; ${rest}). Send offsets of existing partitions only`,
      );
    }
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
    if (this.state.partitions.size > 0) await this.endTxn(true);
    const byGroup = new Map<string, TransactionState["offsets"]>();
    for (const o of this.state.offsets) byGroup.set(o.groupId, [...(byGroup.get(o.groupId) ?? []), o]);
    for (const [groupId, offsets] of byGroup) {
      const first = offsets[0]!;
      client.handler.txnOffsetCommit(client.request, {
        transactionalId: this.state.transactionalId,
        groupId,
        ...(first.memberId === undefined
          ? {}
          : { memberId: first.memberId, generationId: first.generationId }),
        offsets: offsets.map((o) => ({ topic: o.topic, partition: o.partition, offset: o.offset })),
      });
    }
    this.finish();
  }

  /** Aborts: waits for the transaction's sends, then EndTxn(abort); the offsets are dropped. */
  async abort(): Promise<void> {
    this.checkActive();
    await this.drain();
    this.throwIfFenced();
    if (this.state.partitions.size > 0) await this.endTxn(false);
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
      if (
        error instanceof KafkaError &&
        (error.errorName === "PRODUCER_FENCED" || error.errorName === "INVALID_PRODUCER_EPOCH")
      ) {
        const fenced =
          error instanceof ClusterError ? error : new ClusterError("PRODUCER_FENCED", error.message);
        this.deps.onFenced(fenced);
        this.state.active = false;
      }
      throw error;
    }
  }

  /** A fenced producer's transaction was already aborted by the coordinator: it ends, with the fencing error. */
  private throwIfFenced(): void {
    const fenced = this.deps.fenced();
    if (!fenced) return;
    this.finish();
    throw fenced;
  }

  private async drain(): Promise<void> {
    while (this.state.inFlight.size > 0) await Promise.all([...this.state.inFlight]);
  }

  private finish(): void {
    this.state.active = false;
    this.state.offsets = [];
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
