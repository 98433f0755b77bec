import { InvalidMirrorStateError, NON_RETRYABLE_ATTEMPT } from "@cluster-mirror/machines";
import { partitionKeyId } from "../coordinator/mirror-state-partition";
import type { MirrorCoordinators, MirrorPartitionKey, MirrorPartitionView } from "../ports";
import type { DesiredMirrorState, MirrorTopic } from "./mirror-topics";

/** A command the metadata manager or the admin API sends to a partition actor. */
export type MirrorCommandType = "START" | "PAUSE" | "RESUME" | "STOP";

/**
 * The command that moves a partition toward what its topic's `mirror.name` asks for, or undefined when
 * none is needed now (already there, on its way, or waiting for an operator). Idempotent by construction:
 * a command whose target state is reached (or being reached) is never sent again.
 *
 * - ACTIVE (`NAME`): no state or STOPPED -> START; PAUSED -> RESUME. FAILED is left to the coordinator's
 *   retries, or to the operator when non-retryable (remove, then add back).
 * - PAUSED (`NAME.paused`): MIRRORING -> PAUSE (PREPARING / EPOCH_FENCING wait until MIRRORING).
 * - REMOVED (`NAME.removed`): any state STOP accepts (PREPARING, MIRRORING, EPOCH_FENCING, PAUSING, PAUSED,
 *   FAILED) -> STOP.
 */
export function commandFor(
  desired: DesiredMirrorState,
  view: MirrorPartitionView | undefined,
): MirrorCommandType | undefined {
  const state = view?.state ?? "UNKNOWN";
  switch (desired) {
    case "ACTIVE":
      if (state === "UNKNOWN" || state === "STOPPED") return "START";
      return state === "PAUSED" ? "RESUME" : undefined;
    case "PAUSED":
      return state === "MIRRORING" ? "PAUSE" : undefined;
    case "REMOVED":
      return STOPPABLE.has(state) ? "STOP" : undefined;
  }
}

/** States in which each command's purpose is already served (reached, or on the way). */
const SERVED: Readonly<Record<MirrorCommandType, ReadonlySet<string>>> = {
  START: new Set(["PREPARING", "MIRRORING", "EPOCH_FENCING"]),
  PAUSE: new Set(["PAUSING", "PAUSED"]),
  RESUME: new Set(["MIRRORING", "EPOCH_FENCING"]),
  STOP: new Set(["STOPPING", "STOPPED"]),
};

function alreadyThere(command: MirrorCommandType, error: unknown): boolean {
  if (!(error instanceof InvalidMirrorStateError)) return false;
  return SERVED[command].has(error.pendingTo ?? error.state);
}

const STOPPABLE = new Set(["PREPARING", "MIRRORING", "EPOCH_FENCING", "PAUSING", "PAUSED", "FAILED"]);

/**
 * Views of a mirror indexed by `topic:partition`. The coordinators keep a record per topic id until the
 * mirror is deleted, so a name can have views of an earlier incarnation of the topic (deleted and created
 * again) too: with `image`, the view of the topic's id there wins, whatever order they come in (else the
 * last one does).
 */
export function viewsByPartition(
  views: readonly MirrorPartitionView[],
  image?: { topic(name: string): { topicId: string } | undefined },
): Map<string, MirrorPartitionView> {
  const out = new Map<string, MirrorPartitionView>();
  for (const v of views) {
    const k = `${v.key.topic}:${v.key.partition}`;
    const held = out.get(k);
    if (held !== undefined && image !== undefined) {
      const current = image.topic(v.key.topic)?.topicId;
      if (held.key.topicId === current && v.key.topicId !== current) continue;
    }
    out.set(k, v);
  }
  return out;
}

/**
 * Whether a mirror topic's partition refuses produces, as the destination's metadata `image` says: its
 * read-only flag, or its `mirror.name` alone when no mirror ever set the flag (for {@link driveTopics}).
 */
export function readOnlyIn(image: {
  partition(topic: string, partition: number): { mirrorReadOnly?: boolean } | undefined;
}): (topic: string, partition: number) => boolean {
  return (topic, partition) => {
    const meta = image.partition(topic, partition);
    return meta !== undefined && meta.mirrorReadOnly !== false;
  };
}

/** The key of one partition of a mirror topic. */
export function partitionKey(topic: MirrorTopic, partition: number): MirrorPartitionKey {
  return { mirror: topic.mirror, topic: topic.name, topicId: topic.topicId, partition };
}

/** What happened when driving partitions: the commands sent, and the ones that failed. */
export interface DriveResult {
  /** `raced`: refused because the partition was already at (or moving to) the command's target. */
  sent: { key: MirrorPartitionKey; command: MirrorCommandType; raced?: true }[];
  failed: { key: MirrorPartitionKey; command: MirrorCommandType; error: unknown }[];
}

/**
 * The drive commands in flight, per coordinators (one engine's admin API and metadata manager share theirs),
 * by `command\0partition id`: the outcome of the one already sent.
 */
const driving = new WeakMap<MirrorCoordinators, Map<string, Promise<unknown>>>();

/**
 * Sends each partition of `topics` the command {@link commandFor} picks. The commands are all sent before
 * any is awaited, so the coordinator batches their records into a few `__mirror_state` appends: awaited one
 * by one, each waited for its own append (a linger each), and a failover of 10,000 partitions took 10,000
 * lingers. A refused one (a state change raced us) is reported in `failed` and never stops the others;
 * `sent` and `failed` keep the partitions' order.
 *
 * A partition another drive already sent the same command (still in flight) is not sent it again: this
 * drive shares that command's outcome. The admin API and the metadata manager both drive a topic after its
 * `mirror.name` changes, and in a failover the second STOP could only be refused (pendingTo STOPPING, an
 * error built with its stack) and read as {@link alreadyThere}: 3-6% of a failover's CPU. Shared, the
 * outcome means the same to both: resolved once the change is committed, or the one real refusal.
 *
 * A partition of a removed topic that needs no command (STOPPED, or no state: its START never came) but
 * that `readOnly` says refuses produces is made writable by its coordinator, if nothing is waiting there
 * (`clearReadOnlyIfStopped`): a re-add removed again before its START.
 */
export async function driveTopics(
  coordinators: MirrorCoordinators,
  topics: readonly MirrorTopic[],
  views: ReadonlyMap<string, MirrorPartitionView>,
  readOnly?: (topic: string, partition: number) => boolean,
): Promise<DriveResult> {
  let inFlight = driving.get(coordinators);
  if (inFlight === undefined) {
    inFlight = new Map();
    driving.set(coordinators, inFlight);
  }
  const commands: { key: MirrorPartitionKey; command: MirrorCommandType; outcome: Promise<unknown> }[] = [];
  for (const topic of topics) {
    for (let p = 0; p < topic.partitionCount; p++) {
      const view = views.get(`${topic.name}:${p}`);
      let command = commandFor(topic.desired, view);
      if (!command) {
        if (
          topic.desired === "REMOVED" &&
          (view === undefined || view.state === "STOPPED") &&
          readOnly?.(topic.name, p) &&
          coordinators.clearReadOnlyIfStopped?.(partitionKey(topic, p)) === true
        )
          command = "STOP"; // a START waits there: the STOP follows it (see clearReadOnlyIfStopped)
        else continue;
      }
      const key = partitionKey(topic, p);
      commands.push({ key, command, outcome: sendOnce(coordinators, inFlight, key, command) });
    }
  }
  const result: DriveResult = { sent: [], failed: [] };
  for (const { key, command, outcome } of commands) {
    const error = await outcome;
    // The admin API and the metadata manager both drive partitions after a `mirror.name` change; a
    // command refused because the partition is already at (or moving to) its target raced the other.
    if (error === undefined) result.sent.push({ key, command });
    else if (alreadyThere(command, error)) result.sent.push({ key, command, raced: true });
    else result.failed.push({ key, command, error });
  }
  return result;
}

/** The outcome of `command` to `key`: the one in flight in `inFlight` if any, else a new one, kept there until it settles. */
function sendOnce(
  coordinators: MirrorCoordinators,
  inFlight: Map<string, Promise<unknown>>,
  key: MirrorPartitionKey,
  command: MirrorCommandType,
): Promise<unknown> {
  const id = `${command}\u0000${partitionKeyId(key)}`;
  const running = inFlight.get(id);
  if (running !== undefined) return running;
  const outcome = settle(() => coordinators.command(key, { type: command }));
  inFlight.set(id, outcome);
  // `settle` never rejects; the entry goes once the outcome is known, so a later drive sends afresh.
  void outcome.then(() => inFlight.delete(id));
  return outcome;
}

/** Runs `send` and resolves with its error (undefined when it succeeded); never rejects. */
function settle(send: () => Promise<void>): Promise<unknown> {
  try {
    return send().then(
      () => undefined,
      (error: unknown) => error ?? new Error("the command was refused without a reason"),
    );
  } catch (error) {
    return Promise.resolve(error ?? new Error("the command was refused without a reason"));
  }
}

/**
 * Fails partitions non-retryably (source cluster id changed, source topic deleted), skipping those already
 * failed non-retryably and those failing over or failed over (STOPPING, STOPPED): their data is no longer
 * the source's concern. The commands are sent together (one batch of records, as in `driveTopics`).
 * Returns how many commands were accepted; refusals are collected, not thrown.
 */
export async function failPartitions(
  coordinators: MirrorCoordinators,
  keys: readonly MirrorPartitionKey[],
  views: ReadonlyMap<string, MirrorPartitionView>,
  message: string,
): Promise<{ failed: number; errors: unknown[] }> {
  const outcomes: Promise<unknown>[] = [];
  for (const key of keys) {
    const view = views.get(`${key.topic}:${key.partition}`);
    if (view && (view.state === "STOPPING" || view.state === "STOPPED")) continue;
    if (view?.state === "FAILED" && view.retryAttempt === NON_RETRYABLE_ATTEMPT) continue;
    outcomes.push(settle(() => coordinators.command(key, { type: "FAIL", message, retryable: false })));
  }
  let failed = 0;
  const errors: unknown[] = [];
  for (const error of await Promise.all(outcomes)) {
    if (error === undefined) failed++;
    else errors.push(error);
  }
  return { failed, errors };
}

/**
 * NOT_COORDINATOR / COORDINATOR_NOT_AVAILABLE / COORDINATOR_LOAD_IN_PROGRESS: the partition's coordinator
 * is not loaded (yet), or unloaded while the command was on its way; the command may be sent again once
 * it is.
 */
export function isCoordinatorLoading(error: unknown): boolean {
  const name = (error as { errorName?: unknown } | null)?.errorName;
  return (
    name === "NOT_COORDINATOR" ||
    name === "COORDINATOR_NOT_AVAILABLE" ||
    name === "COORDINATOR_LOAD_IN_PROGRESS"
  );
}

/** True for the refusals that only mean "a state change raced us" (not worth an error metric). */
export function isStateRace(error: unknown): boolean {
  return error instanceof InvalidMirrorStateError;
}
