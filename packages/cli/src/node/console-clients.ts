import type { Message, Producer, Transaction } from "@cluster-mirror/cluster";
import { ConsoleConsumer, type ConsumedMessage, type ConsumeRequest } from "./console-consumer";
import type { NodeCluster } from "./mirror-node";

export type { ConsumedMessage, ConsumeRequest } from "./console-consumer";

/** What `cluster-mirror produce` asks for. */
export interface ProduceRequest {
  topic: string;
  key: string | undefined;
  /** The value (with `count` > 1, each message gets `-<i>` appended); default `message`. */
  value: string | undefined;
  count: number;
  partition: number | undefined;
  /** Send inside a transaction with this id (committed unless `abort` or `leaveOpen`). */
  transactionalId: string | undefined;
  abort: boolean;
  /** Leave the transaction open (the node keeps the producer; failover aborts it on a mirror). */
  leaveOpen: boolean;
}

/** What a produce did: the acknowledged messages and the transaction's outcome. */
export interface ProduceResult {
  /** One entry per acknowledged batch: its partition and base offset. */
  records: { topic: string; partition: number; offset: string }[];
  transaction: "committed" | "aborted" | "open" | null;
  producerId: string | null;
  /**
   * An earlier produce with this transactional id had left its transaction open: this producer's
   * InitProducerId fenced it and aborted that transaction (its records are never read as committed).
   */
  abortedOpenTransaction?: boolean;
}

const idempotentProducers = new WeakMap<NodeCluster, Producer>();
const openTransactions = new Map<string, { producer: Producer; txn: Transaction }>();

/** Produces through the cluster's embedded producer (idempotent, or transactional with an id). */
export async function produce(target: NodeCluster, req: ProduceRequest): Promise<ProduceResult> {
  const messages: Message[] = Array.from({ length: req.count }, (_, i) => ({
    key: req.key ?? null,
    value: req.count === 1 ? (req.value ?? "message") : `${req.value ?? "message"}-${i}`,
    ...(req.partition === undefined ? {} : { partition: req.partition }),
  }));
  if (req.transactionalId === undefined) {
    let producer = idempotentProducers.get(target);
    if (!producer) {
      producer = target.kafka.producer({ idempotent: true });
      await producer.connect();
      idempotentProducers.set(target, producer);
    }
    const acks = await producer.send({ topic: req.topic, messages, acks: -1 });
    return { records: recordsOf(acks), transaction: null, producerId: pidOf(producer) };
  }
  // Each produce is a new producer instance, as a new process with the same transactional.id would be: its
  // InitProducerId fences the producer an earlier `--leave-open` kept here and aborts that transaction.
  // (Joining the open transaction instead would commit the earlier producer's records with this one's.)
  const txnKey = `${target.name}\u0000${req.transactionalId}`;
  const earlier = openTransactions.get(txnKey);
  openTransactions.delete(txnKey);
  const abortedOpenTransaction =
    target.cluster.transactions.describeTransaction(req.transactionalId)?.state === "Ongoing";
  const producer = target.kafka.producer({
    transactionalId: req.transactionalId,
    // An open transaction waits for the operator (or a failover) instead of the 60 s default.
    transactionTimeout: req.leaveOpen ? 900_000 : 60_000,
  });
  await producer.connect();
  const open = { producer, txn: await producer.transaction() };
  if (earlier) await earlier.producer.disconnect(); // fenced: it can do nothing any more
  const acks = await open.txn.send({ topic: req.topic, messages });
  if (req.leaveOpen) {
    openTransactions.set(txnKey, open);
    return {
      records: recordsOf(acks),
      transaction: "open",
      producerId: pidOf(open.producer),
      abortedOpenTransaction,
    };
  }
  if (req.abort) await open.txn.abort();
  else await open.txn.commit();
  const result: ProduceResult = {
    records: recordsOf(acks),
    transaction: req.abort ? "aborted" : "committed",
    producerId: pidOf(open.producer),
    abortedOpenTransaction,
  };
  await open.producer.disconnect();
  return result;
}

/**
 * Consumes through a group consumer until `maxMessages` or `timeoutMs` without a message (on the cluster's
 * clock), and answers every message at once (`POST /v1/consume` without `Accept: application/x-ndjson`).
 */
export async function consume(
  target: NodeCluster,
  req: ConsumeRequest,
): Promise<{ messages: ConsumedMessage[] }> {
  const messages: ConsumedMessage[] = [];
  await (await ConsoleConsumer.open(target, req)).run((m) => {
    messages.push(m);
  });
  return { messages };
}

function recordsOf(
  acks: readonly { topicName: string; partition: number; baseOffset: string }[],
): ProduceResult["records"] {
  return acks.map((a) => ({ topic: a.topicName, partition: a.partition, offset: a.baseOffset }));
}

function pidOf(producer: Producer): string | null {
  return producer.producerId()?.producerId.toString() ?? null;
}
