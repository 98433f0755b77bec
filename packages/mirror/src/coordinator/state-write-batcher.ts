import type { Cancel, Scheduler } from "@cluster-mirror/cluster";
import { KafkaError } from "@cluster-mirror/protocol";
import type { StateLog } from "../ports";
import type { EncodedStateRecord } from "./state-records";

/** How one record's append ended. */
export type AppendOutcome =
  | { readonly kind: "committed" }
  /** The log refused the coordinator's epoch, or this broker no longer leads: stop writing. */
  | { readonly kind: "fenced"; readonly message: string }
  /** Anything else (not enough replicas, a timeout...): the same record may be appended again. */
  | { readonly kind: "failed"; readonly message: string; readonly retriable: boolean };

interface Queued {
  readonly record: EncodedStateRecord;
  readonly done: (outcome: AppendOutcome) => void;
}

/** Kafka's errors that mean "another coordinator owns this partition now". */
const FENCED_ERRORS = new Set(["FENCED_LEADER_EPOCH", "NOT_LEADER_OR_FOLLOWER", "BROKER_NOT_AVAILABLE"]);

/** Default `mirror.coordinator.append.linger.ms`. */
export const DEFAULT_APPEND_LINGER_MS = 10;

/** Largest batch one append writes (Kafka's default `max.message.bytes` is 1 MiB + overhead). */
export const DEFAULT_MAX_APPEND_BYTES = 1_000_000;

/**
 * The write half of Kafka's `CoordinatorRuntime` for one shard: records from every partition of the shard
 * wait up to `lingerMs` (on the injected scheduler) and go out in one `StateLog.append` with the shard's
 * leader epoch, split only when a batch would pass `maxAppendBytes`. Each record's callback hears how its
 * append ended, in append order; nothing is acknowledged before the append resolved (acks=all).
 */
export class StateWriteBatcher {
  private queue: Queued[] = [];
  private queuedBytes = 0;
  private linger: Cancel | undefined;
  private closed = false;

  constructor(
    private readonly log: StateLog,
    private readonly leaderEpoch: () => number,
    private readonly scheduler: Scheduler,
    private readonly lingerMs: number = DEFAULT_APPEND_LINGER_MS,
    private readonly maxAppendBytes: number = DEFAULT_MAX_APPEND_BYTES,
  ) {}

  /** Queues one record; `done` is called once its append settled (never after `close`). */
  write(record: EncodedStateRecord, done: (outcome: AppendOutcome) => void): void {
    if (this.closed) return;
    this.queue.push({ record, done });
    this.queuedBytes += record.key.length + (record.value?.length ?? 0) + 8;
    if (this.linger === undefined) this.linger = this.scheduler.schedule(() => this.flush(), this.lingerMs);
  }

  /** Appends everything queued now, in chunks of at most `maxAppendBytes`. */
  flush(): void {
    this.linger?.();
    this.linger = undefined;
    const all = this.queue;
    this.queue = [];
    this.queuedBytes = 0;
    let chunk: Queued[] = [];
    let bytes = 0;
    for (const q of all) {
      const size = q.record.key.length + (q.record.value?.length ?? 0) + 8;
      if (chunk.length > 0 && bytes + size > this.maxAppendBytes) {
        this.append(chunk);
        chunk = [];
        bytes = 0;
      }
      chunk.push(q);
      bytes += size;
    }
    if (chunk.length > 0) this.append(chunk);
  }

  /** Drops everything queued and ignores appends in flight: the shard unloaded. */
  close(): void {
    this.closed = true;
    this.linger?.();
    this.linger = undefined;
    this.queue = [];
  }

  private append(chunk: Queued[]): void {
    let appended: Promise<void>;
    try {
      appended = this.log.append(
        chunk.map((q) => q.record),
        this.leaderEpoch(),
      );
    } catch (error) {
      appended = Promise.reject(error);
    }
    appended.then(
      () => this.settle(chunk, { kind: "committed" }),
      (error: unknown) => this.settle(chunk, outcomeOf(error)),
    );
  }

  private settle(chunk: Queued[], outcome: AppendOutcome): void {
    if (this.closed) return;
    for (const q of chunk) q.done(outcome);
  }
}

function outcomeOf(error: unknown): AppendOutcome {
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof KafkaError && FENCED_ERRORS.has(error.errorName)) return { kind: "fenced", message };
  const retriable = error instanceof KafkaError ? error.retriable : true;
  return { kind: "failed", message, retriable };
}
