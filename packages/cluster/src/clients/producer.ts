import { type CompressionType, KafkaError } from "@cluster-mirror/protocol";
import { ClusterError } from "../errors";
import type { ClientContext } from "./kafka";
import { createDefaultPartitioner, type Partitioner } from "./partitioner";
import { encodeMessages } from "./records";
import { isRetriable, Retrier, type RetryOptions, sleep } from "./retry";
import { checkSendBatch, checkSendOptions, checkSendRecord, checkTopicMessages } from "./send-checks";
import { Transaction, type TransactionState } from "./transaction";
import type { Message, ProducerBatch, ProducerRecord, RecordMetadata } from "./types";

/** kafkajs's producer settings. */
export interface ProducerConfig {
  /** Producer id and per-partition sequences, so a retried batch is written once (default false). */
  idempotent?: boolean;
  /** Makes the producer transactional (implies idempotent). */
  transactionalId?: string;
  /** Produce requests in flight per partition; an idempotent producer uses 1 (default: unlimited). */
  maxInFlightRequests?: number;
  /** The coordinator aborts a transaction open longer than this, ms (default 60000). */
  transactionTimeout?: number;
  retry?: RetryOptions;
  /** kafkajs's `createPartitioner`; defaults to the Java-compatible murmur2 partitioner. */
  createPartitioner?: () => Partitioner;
}

/** A producer id, epoch and the next sequence per partition; replaced as a whole on reset. */
interface ProducerIdState {
  producerId: bigint;
  producerEpoch: number;
  sequences: Map<string, number>;
}

/** Limits requests in flight for one partition. */
class Lane {
  private inFlight = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly limit: number) {}

  async acquire(): Promise<void> {
    if (this.inFlight < this.limit) {
      this.inFlight++;
      return;
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.inFlight--;
  }
}

const MAX_SEQUENCE = 2 ** 31;

/**
 * A kafkajs-shaped producer on the embedded cluster. Each `send` becomes one RecordBatch per partition,
 * encoded once (timestamps from the cluster clock) and produced on the partition's current leader.
 * Retriable errors (no leader, leader moved, timed out, not enough replicas) are retried with kafkajs's
 * backoff on the cluster's scheduler, re-sending a copy of the same bytes, so that for an idempotent
 * producer the broker recognises a batch whose acknowledgement was lost and answers without appending it
 * again. A quota throttle in an answer delays this producer's next request by that long.
 */
export class Producer {
  private readonly retrier: Retrier;
  private readonly partitioner: Partitioner;
  private readonly idempotent: boolean;
  private readonly transactionalId: string | undefined;
  private readonly lanes = new Map<string, Lane>();
  private pid: ProducerIdState | undefined;
  private pidInit: Promise<ProducerIdState> | undefined;
  private connected = false;
  private throttledUntil = 0;
  private activeTxn: TransactionState | undefined;
  private fenced: ClusterError | undefined;

  constructor(
    private readonly client: ClientContext,
    private readonly config: ProducerConfig,
  ) {
    this.retrier = new Retrier(config.retry ?? client.retry, client.scheduler, client.random);
    this.partitioner = (config.createPartitioner ?? createDefaultPartitioner)();
    this.transactionalId = config.transactionalId;
    this.idempotent = (config.idempotent ?? false) || this.transactionalId !== undefined;
  }

  /** Connects (nothing to open in process; producer ids are obtained on first use, as kafkajs does). */
  async connect(): Promise<void> {
    this.client.cluster.ensureOpen("connect a producer");
    this.connected = true;
  }

  /** Disconnects; an open transaction is left to the coordinator's timeout, as when a process dies. */
  async disconnect(): Promise<void> {
    this.connected = false;
  }

  /** True for idempotent (and transactional) producers. */
  isIdempotent(): boolean {
    return this.idempotent;
  }

  /** The producer id and epoch in use, if one was obtained. */
  producerId(): { producerId: bigint; producerEpoch: number } | undefined {
    return this.pid && { producerId: this.pid.producerId, producerEpoch: this.pid.producerEpoch };
  }

  /** The time (cluster clock) before which this producer sends nothing, because a broker throttled it. */
  get throttledUntilMs(): number {
    return this.throttledUntil;
  }

  /** Produces messages to one topic; resolves with one `RecordMetadata` per partition written. */
  async send(record: ProducerRecord): Promise<RecordMetadata[]> {
    if (this.transactionalId !== undefined) {
      throw new ClusterError(
        "INVALID_TXN_STATE",
        `producer '${this.transactionalId}' is transactional: send inside a transaction (await producer.transaction()).send(...)`,
      );
    }
    checkSendRecord(record, "producer.send(record)");
    checkSendOptions(record, "producer.send(record)");
    return this.sendTopics([{ topic: record.topic, messages: record.messages }], record, undefined);
  }

  /** Produces messages to several topics. */
  async sendBatch(batch: ProducerBatch): Promise<RecordMetadata[]> {
    if (this.transactionalId !== undefined) {
      throw new ClusterError(
        "INVALID_TXN_STATE",
        `producer '${this.transactionalId}' is transactional: use transaction.sendBatch(...)`,
      );
    }
    checkSendBatch(batch, "producer.sendBatch(batch)");
    checkSendOptions(batch, "producer.sendBatch(batch)");
    return this.sendTopics(batch.topicMessages ?? [], batch, undefined);
  }

  /**
   * Begins a transaction. The first call initialises the transactional id with the coordinator, which
   * bumps its epoch and so fences any older producer with the same id (and aborts its open transaction).
   */
  async transaction(): Promise<Transaction> {
    this.client.cluster.ensureOpen("begin a transaction");
    const transactionalId = this.transactionalId;
    if (transactionalId === undefined) {
      throw new ClusterError("INVALID_TXN_STATE", "transactions need a producer with a transactionalId");
    }
    this.checkUsable();
    if (this.activeTxn?.active) {
      throw new ClusterError(
        "INVALID_TXN_STATE",
        "there is already an ongoing transaction for this producer; commit or abort it before beginning another",
      );
    }
    const pid = await this.producerIdState();
    const state: TransactionState = {
      transactionalId,
      producerId: pid.producerId,
      producerEpoch: pid.producerEpoch,
      active: true,
      partitions: new Set(),
      offsetsAdded: false,
      offsets: [],
      inFlight: new Set(),
      failed: undefined,
    };
    this.activeTxn = state;
    return new Transaction(state, {
      client: this.client,
      retrier: this.retrier,
      send: (topics, options) => this.sendTopics(topics, options, state),
      onFenced: (error) => {
        this.fenced = error;
      },
      fenced: () => this.fenced,
      onAbortAfterFailure: () => {
        // The failed batch may be in the log: a new epoch (InitProducerId again) restarts sequences at 0.
        this.pid = undefined;
      },
    });
  }

  /** The produce path shared by `send`, `sendBatch` and transactions. */
  private async sendTopics(
    topics: readonly { topic: string; messages: readonly Message[] }[],
    options: { acks?: number; timeout?: number; compression?: CompressionType },
    txn: TransactionState | undefined,
  ): Promise<RecordMetadata[]> {
    this.client.cluster.ensureOpen("produce");
    this.checkUsable();
    const acks = options.acks ?? -1;
    if (this.idempotent && acks !== -1) {
      throw new ClusterError(
        "INVALID_REQUIRED_ACKS",
        `an idempotent producer needs acks=-1 (all), got ${acks}: anything less gives up its exactly-once guarantee`,
      );
    }
    for (const { topic, messages } of topics) checkTopicMessages(topic, messages);
    const groups = new Map<string, { topic: string; partition: number; messages: Message[] }>();
    for (const { topic, messages } of topics) {
      if (messages.length === 0) continue;
      const meta = await this.retrier.run(() => this.partitionMetadata(topic));
      for (const message of messages) {
        const partition = this.partitioner({ topic, partitionMetadata: meta, message });
        if (!Number.isInteger(partition) || partition < 0 || partition >= meta.length) {
          throw new ClusterError(
            "UNKNOWN_TOPIC_OR_PARTITION",
            `topic '${topic}' has ${meta.length} partitions; partition ${partition} does not exist`,
          );
        }
        const k = `${topic}:${partition}`;
        let group = groups.get(k);
        if (!group) {
          group = { topic, partition, messages: [] };
          groups.set(k, group);
        }
        group.messages.push(message);
      }
    }
    const work = [...groups.values()].map((g) =>
      this.producePartition(g.topic, g.partition, g.messages, acks, options, txn),
    );
    if (txn) for (const w of work) trackInFlight(txn, w);
    return Promise.all(work);
  }

  private async producePartition(
    topic: string,
    partition: number,
    messages: readonly Message[],
    acks: number,
    options: { timeout?: number; compression?: CompressionType },
    txn: TransactionState | undefined,
  ): Promise<RecordMetadata> {
    const k = `${topic}:${partition}`;
    let lane = this.lanes.get(k);
    if (!lane) {
      lane = new Lane(this.idempotent ? 1 : (this.config.maxInFlightRequests ?? Number.POSITIVE_INFINITY));
      this.lanes.set(k, lane);
    }
    await lane.acquire();
    let sequenced: ProducerIdState | undefined;
    try {
      if (txn) {
        if (txn.failed) throw txn.failed;
        if (!txn.partitions.has(k)) {
          await this.retrier.run(() =>
            this.client.handler.addPartitionsToTxn(this.client.request, {
              transactionalId: txn.transactionalId,
              producerId: txn.producerId,
              producerEpoch: txn.producerEpoch,
              partitions: [{ topic, partition }],
            }),
          );
          txn.partitions.add(k);
        }
      }
      const pid = this.idempotent ? await this.producerIdState() : undefined;
      const baseSequence = pid ? (pid.sequences.get(k) ?? 0) : undefined;
      sequenced = pid;
      const bytes = encodeMessages(
        messages,
        this.client.cluster.clock.now(),
        pid
          ? {
              producerId: txn ? txn.producerId : pid.producerId,
              producerEpoch: txn ? txn.producerEpoch : pid.producerEpoch,
              baseSequence,
              isTransactional: txn !== undefined,
            }
          : {},
        options.compression ?? 0,
      );
      const response = await this.retrier.run(async () => {
        await this.waitThrottle();
        const leader = this.client.cluster.leaderFor(topic, partition);
        // A copy each time: the broker rewrites baseOffset and the leader epoch in place.
        return leader.produce({
          ...this.client.request,
          topic,
          partition,
          batch: Buffer.from(bytes),
          acks,
          timeoutMs: options.timeout ?? 30_000,
          ...(txn ? { transactionalId: txn.transactionalId } : {}),
        });
      });
      if (pid && baseSequence !== undefined) {
        pid.sequences.set(k, (baseSequence + messages.length) % MAX_SEQUENCE);
      }
      if (response.throttleTimeMs > 0) {
        const until = this.client.cluster.clock.now() + response.throttleTimeMs;
        if (until > this.throttledUntil) this.throttledUntil = until;
      }
      return {
        topicName: topic,
        partition,
        errorCode: 0,
        baseOffset: String(response.baseOffset),
        logAppendTime: String(response.logAppendTimeMs),
        logStartOffset: String(response.logStartOffset),
        throttleTimeMs: response.throttleTimeMs,
      };
    } catch (error) {
      this.onSendFailure(error, sequenced, txn);
      throw error;
    } finally {
      lane.release();
    }
  }

  /**
   * After a failed produce the batch's fate may be unknown (it may have been appended before the answer was
   * lost). A transactional producer must abort the transaction; an idempotent one starts over with a new
   * producer id (KIP-360's reset, simplified), so later batches are not refused as out of order.
   */
  private onSendFailure(
    error: unknown,
    sequenced: ProducerIdState | undefined,
    txn: TransactionState | undefined,
  ): void {
    const name = error instanceof KafkaError ? error.errorName : "";
    if (name === "PRODUCER_FENCED" || name === "INVALID_PRODUCER_EPOCH") {
      // As Kafka's transactional producer: a fenced epoch is fatal; commit, abort and new transactions
      // answer PRODUCER_FENCED from now on.
      if (txn) {
        this.fenced = new ClusterError(
          "PRODUCER_FENCED",
          error instanceof Error ? error.message : String(error),
          { cause: error },
        );
      }
    }
    if (txn) {
      txn.failed ??= error instanceof Error ? error : new ClusterError("INVALID_TXN_STATE", String(error));
      return;
    }
    const ambiguous =
      isRetriable(error) || name === "OUT_OF_ORDER_SEQUENCE_NUMBER" || name === "UNKNOWN_PRODUCER_ID";
    if (sequenced && ambiguous && this.pid === sequenced) {
      this.pid = undefined;
      this.pidInit = undefined;
    }
  }

  private async producerIdState(): Promise<ProducerIdState> {
    if (this.pid) return this.pid;
    this.pidInit ??= this.retrier
      .run(() =>
        this.client.handler.initProducerId(
          this.client.request,
          this.transactionalId === undefined
            ? {}
            : {
                transactionalId: this.transactionalId,
                transactionTimeoutMs: this.config.transactionTimeout ?? 60_000,
              },
        ),
      )
      .then((r) => {
        const state: ProducerIdState = { ...r, sequences: new Map() };
        this.pid = state;
        return state;
      })
      .finally(() => {
        this.pidInit = undefined;
      });
    return this.pidInit;
  }

  private partitionMetadata(topic: string): { partitionId: number; leader: number }[] {
    const t = this.client.cluster.controller.image.topic(topic);
    if (!t) {
      throw new ClusterError(
        "UNKNOWN_TOPIC_OR_PARTITION",
        `topic '${topic}' does not exist; create it first (this cluster does not auto-create topics)`,
      );
    }
    return t.partitions.map((p) => ({ partitionId: p.partition, leader: p.leader }));
  }

  private async waitThrottle(): Promise<void> {
    const wait = this.throttledUntil - this.client.cluster.clock.now();
    if (wait > 0) await sleep(this.client.scheduler, wait);
  }

  private checkUsable(): void {
    if (!this.connected) {
      throw new ClusterError("INVALID_REQUEST", "the producer is disconnected; call connect() first");
    }
    if (this.fenced) throw this.fenced;
  }
}

function trackInFlight(txn: TransactionState, work: Promise<unknown>): void {
  const settled = work.then(
    () => {},
    () => {},
  );
  txn.inFlight.add(settled);
  void settled.then(() => txn.inFlight.delete(settled));
}
