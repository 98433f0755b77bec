import type { KafkaCluster } from "@cluster-mirror/cluster";
import { mirrorStatePartitionFor } from "../coordinator/mirror-state-partition";
import { MIRROR_STATE_TOPIC } from "../destination/embedded-state-log";
import type { MirrorPartitionKey } from "../ports";
import { answerWithin } from "./deadline";
import { MirrorCommandTimeoutError } from "./errors";

/**
 * Default bound of an admin operation's wait for the mirror coordinators to record its commands
 * (`defaultApiTimeoutMs`): Kafka's admin client's `default.api.timeout.ms`.
 */
export const DEFAULT_API_TIMEOUT_MS = 60_000;

/** What {@link recordedWithin} reports when the time runs out. */
export interface RecordWait {
  readonly destination: KafkaCluster;
  readonly mirror: string;
  /** "add", "remove", "pause", "resume" or "recover". */
  readonly operation: string;
  readonly topics: readonly string[];
  /** The partitions the commands went to: their `__mirror_state` partitions are the ones waited for. */
  readonly keys: readonly MirrorPartitionKey[];
  /** What is already durable, and what finishes the change once the coordinators can write. */
  readonly stillPending: string;
}

/**
 * The bound of an admin operation's commands, from its first command on (Kafka's `Call.deadlineMs`,
 * `KafkaAdminClient.calcDeadlineMs`): every round of commands, and every wait for a moved coordinator to
 * load between rounds, ends by `deadlineMs`.
 */
export interface RecordDeadline {
  /** When the first command was sent, on the destination's clock. */
  readonly startedAtMs: number;
  readonly deadlineMs: number;
}

/** A {@link RecordDeadline} of `timeoutMs` from now on `destination`'s clock. */
export function recordDeadline(destination: KafkaCluster, timeoutMs: number): RecordDeadline {
  const now = destination.clock.now();
  return { startedAtMs: now, deadlineMs: now + timeoutMs };
}

/**
 * `work()` (commands sent to the mirror coordinators, each answered once its record is committed in
 * `__mirror_state`; or the wait for their coordinators to load) if it settles by `deadline`, on the
 * destination's scheduler, else a retriable MirrorCommandTimeoutError saying how long the operation waited
 * since its first command, naming the `__mirror_state` partitions waited for, their leaders, and the brokers
 * among their replicas whose disk is full (every append there fails with KAFKA_STORAGE_ERROR until space is
 * freed, so the commit retries without end). The commands are not withdrawn: they commit once the writes go
 * through, which the error says. Past the deadline already, `work` is not started (Kafka's admin client sends
 * no call past its deadline: `Call.fail`, `handleTimeouts`), and the error comes at once.
 */
export function recordedWithin<T>(
  work: () => Promise<T>,
  deadline: RecordDeadline,
  wait: RecordWait,
): Promise<T> {
  const { clock, scheduler } = wait.destination;
  const timedOut = () => commandTimeout(deadline, wait);
  if (clock.now() > deadline.deadlineMs) return Promise.reject(timedOut());
  return answerWithin(work(), scheduler, deadline.deadlineMs - clock.now(), timedOut);
}

/** The MirrorCommandTimeoutError of an operation that ran out of time now, after waiting since its first command. */
export function commandTimeout(deadline: RecordDeadline, wait: RecordWait): MirrorCommandTimeoutError {
  return new MirrorCommandTimeoutError(
    wait.mirror,
    wait.operation,
    wait.topics,
    wait.destination.clock.now() - deadline.startedAtMs,
    statePartitionsOf(wait.destination, wait.keys),
    wait.stillPending,
  );
}

/** The `__mirror_state` partitions of `keys` as `__mirror_state-N (leader L; full disk on brokers ...)`. */
function statePartitionsOf(destination: KafkaCluster, keys: readonly MirrorPartitionKey[]): string {
  const image = destination.controller.image;
  const count = image.topic(MIRROR_STATE_TOPIC)?.partitions.length ?? 0;
  if (count === 0) return `${MIRROR_STATE_TOPIC} does not exist`;
  const partitions = [...new Set(keys.map((k) => mirrorStatePartitionFor(k, count)))].sort((a, b) => a - b);
  const shown = partitions.slice(0, 5).map((p) => {
    const meta = image.partition(MIRROR_STATE_TOPIC, p);
    const full = (meta?.replicas ?? []).filter((id) => destination.isDiskFull(id)).sort((x, y) => x - y);
    const leader = meta === undefined || meta.leader < 0 ? "no leader" : `leader ${meta.leader}`;
    const disks =
      full.length === 0
        ? ""
        : `; full disk on broker${full.length === 1 ? "" : "s"} ${full.join(", ")}, whose appends fail with KAFKA_STORAGE_ERROR until space is freed`;
    return `${MIRROR_STATE_TOPIC}-${p} (${leader}${underMinIsr(destination, p)}${disks})`;
  });
  const more = partitions.length > 5 ? `, and ${partitions.length - 5} more` : "";
  return `${shown.join(", ")}${more}`;
}

/**
 * `; in-sync replicas ... under min.insync.replicas=N, ...` when `__mirror_state-p`'s ISR is smaller than
 * its min.insync.replicas: its leader refuses every acks=all append with NOT_ENOUGH_REPLICAS (Kafka's
 * Partition.appendRecordsToLeader) until enough replicas are back in sync. Empty otherwise.
 */
function underMinIsr(destination: KafkaCluster, p: number): string {
  const meta = destination.controller.image.partition(MIRROR_STATE_TOPIC, p);
  const minIsr = destination.controller.minInsyncReplicasOf(MIRROR_STATE_TOPIC, p);
  if (meta === undefined || minIsr === undefined || meta.leader < 0 || meta.isr.length >= minIsr) return "";
  const sorted = (ids: readonly number[]) => [...ids].sort((x, y) => x - y).join(", ");
  return `; in-sync replicas ${sorted(meta.isr)} of ${sorted(meta.replicas)}, under min.insync.replicas=${minIsr}, so its appends fail with NOT_ENOUGH_REPLICAS until a replica is back in sync`;
}
