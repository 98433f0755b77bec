import { connectNode, type NodeConnectionFlags } from "../client/node-token";
import type { ConsumedMessage, ProduceResult } from "../node/console-clients";
import { UsageError } from "./cli-errors";
import { intFlag, MAX_TIMEOUT_MS } from "./int-flag";

/** How much longer than `--timeout-ms` the CLI waits for the node's answer to a consume. */
const CONSUME_ANSWER_MARGIN_MS = 60_000;
/** The exit code of a process stopped by SIGINT (128 + 2), as a shell reports it. */
const SIGINT_EXIT_CODE = 130;

/** Flags of `cluster-mirror produce`. */
export interface ProduceFlags extends NodeConnectionFlags {
  cluster?: string;
  topic: string;
  key?: string;
  value?: string;
  count?: string;
  partition?: string;
  transactionalId?: string;
  abort?: boolean;
  leaveOpen?: boolean;
}

/** Flags of `cluster-mirror consume`. */
export interface ConsumeFlags extends NodeConnectionFlags {
  cluster?: string;
  topic: string;
  group?: string;
  fromBeginning?: boolean;
  isolation: string;
  maxMessages?: string;
  timeoutMs: string;
}

/** `cluster-mirror produce`: writes through the node's embedded producer; prints one summary line. */
export async function runProduce(flags: ProduceFlags, out: (text: string) => void): Promise<void> {
  if (flags.value === undefined && flags.count === undefined) {
    throw new UsageError("produce needs --value V or --count N");
  }
  if ((flags.abort || flags.leaveOpen) && flags.transactionalId === undefined) {
    throw new UsageError("--abort and --leave-open need --transactional-id X");
  }
  if (flags.abort && flags.leaveOpen)
    throw new UsageError("--abort and --leave-open cannot be used together");
  const client = connectNode(flags);
  const result = await client.post<ProduceResult>("/v1/produce", {
    cluster: flags.cluster,
    topic: flags.topic,
    key: flags.key,
    value: flags.value,
    count: flags.count === undefined ? undefined : intFlag("--count", flags.count, 1),
    partition: flags.partition === undefined ? undefined : intFlag("--partition", flags.partition, 0),
    transactionalId: flags.transactionalId,
    abort: flags.abort ?? false,
    leaveOpen: flags.leaveOpen ?? false,
  });
  const count = flags.count === undefined ? 1 : Number(flags.count);
  const where = result.records.map((r) => `${r.topic}-${r.partition}@${r.offset}`).join(", ");
  const txn =
    (result.transaction === null ? "" : `, transaction ${flags.transactionalId} ${result.transaction}`) +
    (result.abortedOpenTransaction
      ? `; the transaction an earlier producer left open with this id was aborted`
      : "");
  out(`Produced ${count} message(s) to ${flags.topic} [${where}] (producer id ${result.producerId}${txn})\n`);
}

/** `cluster-mirror consume`: prints each value on its own line, then the count on stderr. */
export async function runConsume(
  flags: ConsumeFlags,
  out: (text: string) => void,
  err: (text: string) => void,
): Promise<void> {
  if (flags.isolation !== "read_committed" && flags.isolation !== "read_uncommitted") {
    throw new UsageError(`--isolation must be read_committed or read_uncommitted, got '${flags.isolation}'`);
  }
  const timeoutMs = intFlag("--timeout-ms", flags.timeoutMs, 0, MAX_TIMEOUT_MS);
  // The node polls for up to --timeout-ms before it answers: the HTTP request waits that long and more.
  const maxMessages =
    flags.maxMessages === undefined ? undefined : intFlag("--max-messages", flags.maxMessages, 1);
  const client = connectNode(flags, Math.min(timeoutMs + CONSUME_ANSWER_MARGIN_MS, MAX_TIMEOUT_MS));
  // Ctrl-C ends the wait, as it ends kafka-console-consumer.sh: with the count on stderr and exit code 130.
  // The node answers with every message at once, so none was printed yet.
  const interrupted = () => {
    err(`Processed a total of 0 messages\n`);
    process.exit(SIGINT_EXIT_CODE);
  };
  process.once("SIGINT", interrupted);
  const { messages } = await client
    .post<{ messages: ConsumedMessage[] }>("/v1/consume", {
      cluster: flags.cluster,
      topic: flags.topic,
      group: flags.group,
      fromBeginning: flags.fromBeginning ?? false,
      isolation: flags.isolation,
      maxMessages,
      timeoutMs,
    })
    .finally(() => process.off("SIGINT", interrupted));
  for (const m of messages) out(`${m.value ?? "null"}\n`);
  err(`Processed a total of ${messages.length} messages\n`);
}

/** Flags of `cluster-mirror create-topic`. */
export interface CreateTopicFlags extends NodeConnectionFlags {
  cluster?: string;
  topic: string;
  partitions: string;
  replicationFactor?: string;
  config: string[];
}

/** `cluster-mirror create-topic`: creates a topic on the destination or a named embedded cluster. */
export async function runCreateTopic(flags: CreateTopicFlags, out: (text: string) => void): Promise<void> {
  const configs: Record<string, string> = {};
  for (const c of flags.config) {
    const eq = c.indexOf("=");
    if (eq <= 0)
      throw new UsageError(`--config '${c}' is not KEY=VALUE (e.g. --config retention.ms=86400000)`);
    configs[c.slice(0, eq)] = c.slice(eq + 1);
  }
  const client = connectNode(flags);
  await client.post("/v1/topics", {
    cluster: flags.cluster,
    topic: flags.topic,
    partitions: intFlag("--partitions", flags.partitions, 1),
    replicationFactor:
      flags.replicationFactor === undefined
        ? undefined
        : intFlag("--replication-factor", flags.replicationFactor, 1),
    configs,
  });
  out(`Created topic ${flags.topic}.\n`);
}
