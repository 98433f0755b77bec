import { NodeRequestError } from "../client/node-client";
import { connectNode, type NodeConnectionFlags } from "../client/node-token";
import type { ConsumedMessage, ProduceResult } from "../node/console-clients";
import type { ConsumeOutcome } from "../node/console-consumer";
import { OperationError, UsageError } from "./cli-errors";
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

/**
 * `cluster-mirror consume`, as kafka-console-consumer.sh: prints each value on its own line as the node
 * consumes it, then the count on stderr; stops at `--max-messages`, after `--timeout-ms` without a message,
 * or at Ctrl-C, when the node closes the consumer, its group committing the messages printed.
 */
export async function runConsume(
  flags: ConsumeFlags,
  out: (text: string) => void,
  err: (text: string) => void,
): Promise<void> {
  if (flags.isolation !== "read_committed" && flags.isolation !== "read_uncommitted") {
    throw new UsageError(`--isolation must be read_committed or read_uncommitted, got '${flags.isolation}'`);
  }
  const timeoutMs = intFlag("--timeout-ms", flags.timeoutMs, 0, MAX_TIMEOUT_MS);
  const maxMessages =
    flags.maxMessages === undefined ? undefined : intFlag("--max-messages", flags.maxMessages, 1);
  // The node waits up to --timeout-ms for each message: the answer may be silent that long, and more.
  const client = connectNode(flags, Math.min(timeoutMs + CONSUME_ANSWER_MARGIN_MS, MAX_TIMEOUT_MS));
  let printed = 0;
  let consumer: string | undefined;
  let end: ConsumeOutcome | undefined;
  let ended = false;
  // Messages that arrived after Ctrl-C: printed only if the group committed them (see below).
  const afterCtrlC: ConsumedMessage[] = [];
  const cancel = new AbortController();
  // Ctrl-C ends the consume as it ends kafka-console-consumer.sh: the consumer is closed, its group
  // committing what was printed (and nothing after it), the count goes to stderr, the exit code is 130.
  let stopping: Promise<void> | undefined;
  const onSigint = () => {
    stopping ??= stopConsumer(flags, consumer, printed, ended, err).then((nodeEndsAnswer) => {
      if (!nodeEndsAnswer) cancel.abort();
    });
  };
  process.on("SIGINT", onSigint);
  try {
    await client.postLines(
      "/v1/consume",
      {
        cluster: flags.cluster,
        topic: flags.topic,
        group: flags.group,
        fromBeginning: flags.fromBeginning ?? false,
        isolation: flags.isolation,
        maxMessages,
        timeoutMs,
      },
      (line) => {
        const l = line as Partial<{
          consumer: string;
          message: ConsumedMessage;
          messages: ConsumedMessage[];
          end: ConsumeOutcome;
        }>;
        if (l.consumer !== undefined) consumer = l.consumer;
        if (l.end !== undefined) end = l.end;
        if (l.end !== undefined || l.messages !== undefined) ended = true;
        // One message as it is consumed; or every message at once, from a node older than streamed consumes.
        for (const m of l.message === undefined ? (l.messages ?? []) : [l.message]) {
          if (stopping !== undefined) {
            afterCtrlC.push(m);
            continue;
          }
          out(`${m.value ?? "null"}\n`);
          printed++;
        }
      },
      cancel.signal,
    );
  } catch (error) {
    if (stopping === undefined) throw error; // else: the request this process cancelled
  } finally {
    process.off("SIGINT", onSigint);
  }
  if (!ended && stopping === undefined) {
    throw new OperationError(
      `the node ended its answer after ${printed} message(s) without saying the consume ended (it may have stopped); ${flags.group === undefined ? "consume again" : `group ${flags.group} may not have committed them: consume again`}`,
    );
  }
  await stopping;
  // A consume that ended by itself (--max-messages, --timeout-ms) as Ctrl-C landed committed every message it
  // sent, some still on their way: they are printed, as kafka-console-consumer.sh prints every record its
  // group commits.
  for (const m of afterCtrlC.slice(0, Math.max(0, (end?.committed ?? 0) - printed))) {
    out(`${m.value ?? "null"}\n`);
    printed++;
  }
  err(`Processed a total of ${printed} messages\n`);
  if (stopping !== undefined) process.exit(SIGINT_EXIT_CODE);
}

/**
 * Asks the node to stop consume `consumer` after the first `printed` messages and waits until its group
 * committed them; says on stderr if it could not (the messages after the group's offset are read again).
 * True when the node ends its answer by itself (its `end` line says what the group committed): the stop was
 * confirmed, or the consume had ended already.
 */
async function stopConsumer(
  flags: ConsumeFlags,
  consumer: string | undefined,
  printed: number,
  ended: boolean,
  err: (text: string) => void,
): Promise<boolean> {
  if (ended) return true;
  // Before the node named the consume, it sent nothing: leaving ends it, committing nothing.
  if (consumer === undefined) return false;
  try {
    await connectNode(flags).post("/v1/consume/stop", { consumer, printed });
    return true;
  } catch (error) {
    // UNKNOWN_MEMBER_ID: the consume ended by itself before the stop reached it; its answer is on its way.
    if (error instanceof NodeRequestError && error.errorName === "UNKNOWN_MEMBER_ID") return true;
    err(
      `The node did not confirm that it stopped the consume${flags.group === undefined ? "" : ` and that group ${flags.group} committed the ${printed} message(s) printed`}: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    return false;
  }
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
