import type { Cancel, Scheduler } from "@cluster-mirror/cluster";
import { KafkaError } from "@cluster-mirror/protocol";
import { InvalidMirrorConfigError } from "../admin/errors";
import type { StateLog } from "../ports";
import type { EncodedStateRecord } from "./state-records";

/** How one record's append ended. */
export type AppendOutcome =
  | { readonly kind: "committed" }
  /** The log refused the coordinator's epoch, or this broker no longer leads: stop writing. */
  | { readonly kind: "fenced"; readonly message: string }
  /**
   * Anything else (not enough replicas, a timeout...): the same record may be appended again.
   * `maybeAppended`: the leader appended it but the in-sync replicas did not acknowledge it in time, so it
   * may commit all the same (REQUEST_TIMED_OUT, NOT_ENOUGH_REPLICAS_AFTER_APPEND).
   */
  | {
      readonly kind: "failed";
      readonly message: string;
      readonly retriable: boolean;
      readonly maybeAppended: boolean;
    };

/** Hears how an append ended; `target` and `tag` are what `write` was given (no closure per record). */
export type AppendCallback<T = unknown> = (outcome: AppendOutcome, target: T, tag: number) => void;

interface Queued {
  readonly record: EncodedStateRecord;
  readonly done: AppendCallback;
  readonly target: unknown;
  readonly tag: number;
}

const COMMITTED: AppendOutcome = Object.freeze({ kind: "committed" });

function callDone(outcome: AppendOutcome, done: unknown): void {
  (done as (outcome: AppendOutcome) => void)(outcome);
}

/** Kafka's errors that mean "another coordinator owns this partition now". */
const FENCED_ERRORS = new Set(["FENCED_LEADER_EPOCH", "NOT_LEADER_OR_FOLLOWER", "BROKER_NOT_AVAILABLE"]);

/**
 * `mirror.coordinator.append.linger.ms = -1`: an adaptive linger, the default (Kafka's coordinators since
 * KAFKA-19826). No timer: the flush runs as the next task on the scheduler, so everything the current step
 * writes (every partition a failover moves, every record one event produces) goes out in one append, and a
 * lone write waits for no clock.
 */
export const ADAPTIVE_APPEND_LINGER_MS = -1;

/** Default `mirror.coordinator.append.linger.ms`: adaptive (see {@link ADAPTIVE_APPEND_LINGER_MS}). */
export const DEFAULT_APPEND_LINGER_MS = ADAPTIVE_APPEND_LINGER_MS;

/**
 * Checks a `mirror.coordinator.append.linger.ms`: -1 (adaptive), 0 (no linger: every record is appended
 * at once, on its own) or a number of milliseconds to wait for more records.
 */
export function checkAppendLingerMs(lingerMs: number): void {
  if (lingerMs === ADAPTIVE_APPEND_LINGER_MS || (Number.isSafeInteger(lingerMs) && lingerMs >= 0)) return;
  throw new InvalidMirrorConfigError(
    "mirror.coordinator.append.linger.ms",
    `mirror.coordinator.append.linger.ms must be -1 (adaptive, the default), 0 (no linger) or a whole number of milliseconds; got ${lingerMs}`,
  );
}

/** Largest batch one append writes (Kafka's default `max.message.bytes` is 1 MiB + overhead). */
export const DEFAULT_MAX_APPEND_BYTES = 1_000_000;

/**
 * The write half of Kafka's `CoordinatorRuntime` for one shard: records from every partition of the shard
 * wait (on the injected scheduler) and go out in one `StateLog.append` with the shard's leader epoch, split
 * only when a batch would pass `maxAppendBytes`. How long they wait is `lingerMs`: -1 until the tasks
 * already queued ran (adaptive, the default), 0 not at all (one append per record), else that many
 * milliseconds. Each record's callback hears how its append ended, in append order; nothing is
 * acknowledged before the append resolved (acks=all).
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
  ) {
    checkAppendLingerMs(lingerMs);
  }

  /** Queues one record; `done` is called once its append settled (never after `close`). */
  write(record: EncodedStateRecord, done: (outcome: AppendOutcome) => void): void {
    this.writeTo(record, callDone, done, 0);
  }

  /**
   * Queues one record; `done(outcome, target, tag)` is called once its append settled (never after
   * `close`). The same as `write` without a closure per record.
   */
  writeTo<T>(record: EncodedStateRecord, done: AppendCallback<T>, target: T, tag: number): void {
    if (this.closed) return;
    this.queue.push({ record, done: done as AppendCallback, target, tag });
    this.queuedBytes += record.key.length + (record.value?.length ?? 0) + 8;
    if (this.lingerMs === 0) this.flush();
    else if (this.linger === undefined)
      this.linger = this.scheduler.schedule(this.flushQueued, Math.max(0, this.lingerMs));
  }

  private readonly flushQueued = (): void => {
    this.linger = undefined;
    this.flush();
  };

  /** Appends everything queued now, in chunks of at most `maxAppendBytes`. */
  flush(): void {
    this.linger?.();
    this.linger = undefined;
    const all = this.queue;
    this.queue = [];
    this.queuedBytes = 0;
    let chunk: Queued[] = [];
    let records: EncodedStateRecord[] = [];
    let bytes = 0;
    for (let i = 0; i < all.length; i++) {
      const q = all[i] as Queued;
      const size = q.record.key.length + (q.record.value?.length ?? 0) + 8;
      if (chunk.length > 0 && bytes + size > this.maxAppendBytes) {
        this.append(chunk, records);
        chunk = [];
        records = [];
        bytes = 0;
      }
      chunk.push(q);
      records.push(q.record);
      bytes += size;
    }
    if (chunk.length > 0) this.append(chunk, records);
  }

  /** Drops everything queued and ignores appends in flight: the shard unloaded. */
  close(): void {
    this.closed = true;
    this.linger?.();
    this.linger = undefined;
    this.queue = [];
  }

  private append(chunk: Queued[], records: EncodedStateRecord[]): void {
    let appended: Promise<void>;
    try {
      appended = this.log.append(records, this.leaderEpoch());
    } catch (error) {
      appended = Promise.reject(error);
    }
    appended.then(
      () => this.settle(chunk, COMMITTED),
      (error: unknown) => this.settle(chunk, outcomeOf(error)),
    );
  }

  private settle(chunk: Queued[], outcome: AppendOutcome): void {
    if (this.closed) return;
    for (let i = 0; i < chunk.length; i++) {
      const q = chunk[i] as Queued;
      q.done(outcome, q.target, q.tag);
    }
  }
}

/** Produce errors after which the records are on the leader's log, unacknowledged: they may still commit. */
const APPENDED_UNACKNOWLEDGED: ReadonlySet<string> = new Set([
  "REQUEST_TIMED_OUT",
  "NOT_ENOUGH_REPLICAS_AFTER_APPEND",
]);

function outcomeOf(error: unknown): AppendOutcome {
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof KafkaError && FENCED_ERRORS.has(error.errorName)) return { kind: "fenced", message };
  const retriable = error instanceof KafkaError ? error.retriable : true;
  const maybeAppended = error instanceof KafkaError && APPENDED_UNACKNOWLEDGED.has(error.errorName);
  return { kind: "failed", message, retriable, maybeAppended };
}
