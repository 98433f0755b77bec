import { type Message, type Producer, sleep, type Transaction } from "@cluster-mirror/cluster";
import type { NodeCluster } from "./mirror-node";
import { RequestCutShortError } from "./request-signal";

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

/** What `cluster-mirror consume` asks for. */
export interface ConsumeRequest {
  topic: string;
  /** Consumer group (offsets are committed); none: a throwaway group that is deleted afterwards. */
  group: string | undefined;
  fromBeginning: boolean;
  isolation: "read_committed" | "read_uncommitted";
  maxMessages: number;
  /** Stop after this long without reaching `maxMessages`. */
  timeoutMs: number;
  /**
   * Ends the consume early (the client went away, the node is stopping): NodeStoppingError or nothing to
   * answer, and no offsets committed, so the group reads those messages again next time.
   */
  signal?: AbortSignal;
}

/** One consumed message. */
export interface ConsumedMessage {
  partition: number;
  offset: string;
  key: string | null;
  value: string | null;
}

const idempotentProducers = new WeakMap<NodeCluster, Producer>();
const openTransactions = new Map<string, { producer: Producer; txn: Transaction }>();
let throwawayGroups = 0;

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

/** Consumes through a group consumer, polling until `maxMessages` or `timeoutMs` (on the cluster's clock). */
export async function consume(
  target: NodeCluster,
  req: ConsumeRequest,
): Promise<{ messages: ConsumedMessage[] }> {
  const groupId = req.group ?? `cluster-mirror-console-${++throwawayGroups}`;
  const consumer = target.kafka.consumer({ groupId, isolation: req.isolation });
  await consumer.connect();
  const out: ConsumedMessage[] = [];
  try {
    await consumer.subscribe({ topic: req.topic, fromBeginning: req.fromBeginning });
    const clock = target.cluster.clock;
    const deadline = clock.now() + req.timeoutMs;
    while (out.length < req.maxMessages && clock.now() < deadline && !req.signal?.aborted) {
      const polled = await consumer.poll();
      for (const m of polled) {
        if (out.length >= req.maxMessages) break;
        out.push({
          partition: m.partition,
          offset: m.message.offset,
          key: m.message.key?.toString() ?? null,
          value: m.message.value?.toString() ?? null,
        });
      }
      if (polled.length === 0) await sleep(target.cluster.scheduler, 50);
    }
    if (req.signal?.aborted) {
      throw new RequestCutShortError(
        `the consume was cut short (the node is stopping, or the client went away) after ${out.length} message(s); no offsets were committed${req.group === undefined ? "" : ` for group ${req.group}`}, so they are read again next time`,
      );
    }
    if (req.group !== undefined) await commitConsumed(consumer, out, req.topic);
  } finally {
    await consumer.disconnect();
    if (req.group === undefined)
      await target.kafka
        .admin()
        .deleteGroups([groupId])
        .catch(() => undefined);
  }
  return { messages: out };
}

/** Commits, per partition, the offset after the last message returned (not past what was printed). */
async function commitConsumed(
  consumer: { commitOffsets(o: { topic: string; partition: number; offset: string }[]): Promise<void> },
  messages: readonly ConsumedMessage[],
  topic: string,
): Promise<void> {
  const next = new Map<number, bigint>();
  for (const m of messages) next.set(m.partition, BigInt(m.offset) + 1n);
  if (next.size === 0) return;
  await consumer.commitOffsets(
    [...next].map(([partition, offset]) => ({ topic, partition, offset: offset.toString() })),
  );
}

function recordsOf(
  acks: readonly { topicName: string; partition: number; baseOffset: string }[],
): ProduceResult["records"] {
  return acks.map((a) => ({ topic: a.topicName, partition: a.partition, offset: a.baseOffset }));
}

function pidOf(producer: Producer): string | null {
  return producer.producerId()?.producerId.toString() ?? null;
}
