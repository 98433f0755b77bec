import { type Consumer, sleep } from "@cluster-mirror/cluster";
import { BadRequestError } from "./http-errors";
import type { NodeCluster } from "./mirror-node";
import { RequestCutShortError } from "./request-signal";

/** What `cluster-mirror consume` asks for. */
export interface ConsumeRequest {
  topic: string;
  /** Consumer group (offsets are committed); none: a throwaway group that is deleted afterwards. */
  group: string | undefined;
  fromBeginning: boolean;
  isolation: "read_committed" | "read_uncommitted";
  maxMessages: number;
  /**
   * Stop once no message arrived for this long (kafka-console-consumer.sh's `--timeout-ms`: the wait for the
   * next record, restarted by each one), unless `maxMessages` came first.
   */
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

/** How a consume ended: the messages handed out, and how many of them (the first ones) the group committed. */
export interface ConsumeOutcome {
  messages: number;
  /** The first `committed` messages handed out are committed for the group (0 without a group). */
  committed: number;
  /** Ended by {@link ConsoleConsumer.stop} (a Ctrl-C of the CLI), not by `maxMessages` or `timeoutMs`. */
  stopped: boolean;
}

let throwawayGroups = 0;

/**
 * The group consumer behind `cluster-mirror consume`, run as kafka-console-consumer.sh runs its consumer:
 * each message is handed out as it is consumed; it stops at `maxMessages`, after `timeoutMs` without a
 * message, or when {@link stop}ped (its shutdown hook), and then closes the consumer, committing for the
 * group the messages the client printed and no others (Kafka's ConsoleConsumer seeks back over the records
 * it fetched but did not print before `close()` auto-commits).
 */
export class ConsoleConsumer {
  private handedOut: { partition: number; offset: string }[] = [];
  private printed: number | undefined;

  private constructor(
    private readonly target: NodeCluster,
    private readonly req: ConsumeRequest,
    private readonly consumer: Consumer,
    private readonly groupId: string,
  ) {}

  /** Joins the group and subscribes (errors here, an unauthorized group say, come before any message). */
  static async open(target: NodeCluster, req: ConsumeRequest): Promise<ConsoleConsumer> {
    const groupId = req.group ?? `cluster-mirror-console-${++throwawayGroups}`;
    const consumer = target.kafka.consumer({ groupId, isolation: req.isolation });
    const opened = new ConsoleConsumer(target, req, consumer, groupId);
    try {
      await consumer.connect();
      await consumer.subscribe({ topic: req.topic, fromBeginning: req.fromBeginning });
    } catch (error) {
      await opened.close();
      throw error;
    }
    return opened;
  }

  /**
   * Ends the consume as a Ctrl-C ends kafka-console-consumer.sh: `printed`, the number of messages the
   * client printed (the first ones handed out), is what the group commits.
   */
  stop(printed: number): void {
    if (printed > this.handedOut.length) {
      throw new BadRequestError(
        `printed is ${printed}, but only ${this.handedOut.length} message(s) were sent to the client; send the number of messages it printed`,
      );
    }
    this.printed ??= printed;
  }

  /**
   * Polls, handing each message to `deliver` (awaited: a slow client slows the consume) until `maxMessages`,
   * `timeoutMs` without a message, a {@link stop} or the request's signal; then commits and closes.
   */
  async run(deliver: (m: ConsumedMessage) => void | Promise<void>): Promise<ConsumeOutcome> {
    const { req, consumer } = this;
    try {
      const clock = this.target.cluster.clock;
      let deadline = clock.now() + req.timeoutMs;
      while (this.going() && clock.now() < deadline) {
        const polled = await consumer.poll();
        for (const m of polled) {
          if (!this.going()) break;
          const message: ConsumedMessage = {
            partition: m.partition,
            offset: m.message.offset,
            key: m.message.key?.toString() ?? null,
            value: m.message.value?.toString() ?? null,
          };
          this.handedOut.push({ partition: message.partition, offset: message.offset });
          await deliver(message);
        }
        // As ConsoleConsumer's receive(): the wait for the next record starts again after each one.
        if (polled.length > 0) deadline = clock.now() + req.timeoutMs;
        else if (this.going()) await sleep(this.target.cluster.scheduler, 50);
      }
      if (this.printed === undefined && req.signal?.aborted) {
        throw new RequestCutShortError(
          `the consume was cut short (the node is stopping, or the client went away) after ${this.handedOut.length} message(s); no offsets were committed${req.group === undefined ? "" : ` for group ${req.group}`}, so they are read again next time`,
        );
      }
      // Decided here: a stop landing while the group commits (the consume ended by itself) changes neither.
      const stopped = this.printed !== undefined;
      const committed = req.group === undefined ? 0 : (this.printed ?? this.handedOut.length);
      await commitFirst(consumer, this.handedOut.slice(0, committed), req.topic);
      return { messages: this.handedOut.length, committed, stopped };
    } finally {
      await this.close();
    }
  }

  private going(): boolean {
    return (
      this.printed === undefined && this.handedOut.length < this.req.maxMessages && !this.req.signal?.aborted
    );
  }

  private async close(): Promise<void> {
    await this.consumer.disconnect();
    if (this.req.group === undefined)
      await this.target.kafka
        .admin()
        .deleteGroups([this.groupId])
        .catch(() => undefined);
  }
}

/** Commits, per partition, the offset after the last of `messages` (not past what was printed). */
async function commitFirst(
  consumer: Consumer,
  messages: readonly { partition: number; offset: string }[],
  topic: string,
): Promise<void> {
  const next = new Map<number, bigint>();
  for (const m of messages) next.set(m.partition, BigInt(m.offset) + 1n);
  if (next.size === 0) return;
  await consumer.commitOffsets(
    [...next].map(([partition, offset]) => ({ topic, partition, offset: offset.toString() })),
  );
}
