import { type KafkaCluster, sleep, type Uuid } from "@cluster-mirror/cluster";
import { KafkaError } from "@cluster-mirror/protocol";
import { leaderLog } from "../metadata/destination-logs";
import { type MirrorTopic, mirrorTopics } from "../metadata/mirror-topics";
import type { SourceConnections } from "../metadata/source-connections";
import { viewsByPartition } from "../metadata/state-driver";
import type { MirrorCoordinators } from "../ports";
import { answerWithin } from "./deadline";
import {
  MirrorCommandTimeoutError,
  MirroringClosedError,
  MirrorStateError,
  PromoteCancelledError,
  PromoteTimeoutError,
  SourceUnreachableError,
} from "./errors";
import type { MirrorChanges } from "./mirror-changes";
import { waitForCondition } from "./mirror-changes";
import { exactTopicPattern, selectMirrorTopics, topicList } from "./topic-selection";

/** How much longer than the catch-up's deadline its second ask of the source may take (see there). */
const ASK_AGAIN_SLACK_MS = 1_000;

/** Default bound of each wait of a promote (catch-up, then STOPPED). */
export const DEFAULT_PROMOTE_TIMEOUT_MS = 60_000;

/** Options of `promoteTopics`. */
export interface PromoteOptions {
  /**
   * Bound of the catch-up wait and, from the failover's first change on, of the wait for STOPPED, its STOP
   * commands' records in `__mirror_state` included (default 60 s): this call's own bound replaces
   * `defaultApiTimeoutMs` there, as a Kafka admin call's timeoutMs option does `default.api.timeout.ms`.
   */
  timeoutMs?: number;
  /**
   * Cancels the promote while it catches up or waits for its turn: PromoteCancelledError, nothing failed
   * over. Once the failover has begun it goes on (a failover is not undone), and so does the wait for it.
   */
  signal?: AbortSignal;
}

/** One partition a promote failed over: its destination log end when it reached lag 0. */
export interface PromotedPartition {
  topic: string;
  partition: number;
  /** The destination log end (= the source's high watermark) at which it was failed over. */
  offset: bigint;
}

/** The answer of a promote: the topics failed over (sorted), their partitions, and the message. */
export interface PromoteResult {
  topics: string[];
  partitions: PromotedPartition[];
  message: string;
}

/** A partition short of its target when a promote's wait ended. */
export interface PromoteLaggard {
  topic: string;
  partition: number;
  /** Source high watermark minus destination log end, or null when either is unknown. */
  lag: bigint | null;
  state: string;
}

/** What a promote needs of the admin API. */
export interface PromoteDeps {
  destination: KafkaCluster;
  sources: SourceConnections;
  coordinators: Pick<MirrorCoordinators, "describe">;
  changes: MirrorChanges;
  /**
   * The failover itself (MirrorAdmin.removeTopics), in the mirror's command queue; `beforeRemoval` runs
   * when its turn comes, before anything changes, and may refuse it by throwing. Its STOP commands' records
   * are waited for up to `recordWithinMs` (then a MirrorCommandTimeoutError).
   */
  removeTopics: (
    mirror: string,
    regex: string,
    beforeRemoval: () => void,
    recordWithinMs: number,
  ) => Promise<{ topics: string[] }>;
  /**
   * The final metadata sync once every partition caught up, before the failover: the consumer group offsets
   * the source's consumers committed last (up to the caught-up end) replace what the last periodic sync (up
   * to a refresh interval ago) or this cluster's own consumers (an old primary failing back) left.
   */
  syncBeforeFailover?: (mirror: string) => Promise<unknown>;
  /**
   * The error of an engine that was closed (ClusterMirroring.close(): MirroringClosedError), undefined while
   * it runs. Checked with the cancel signal: a promote in flight then ends at once with it (before the
   * failover, nothing is failed over), rather than waiting out its timeout on an engine that moves no more.
   */
  closed?: () => Error | undefined;
}

/** States from which a caught-up partition may be failed over by a promote. */
const PROMOTABLE = new Set(["MIRRORING", "PAUSED"]);

/**
 * The planned switch (`--promote`): once writers on the source have stopped, waits until every partition
 * of the mirror's topics matching `regex` is MIRRORING (or PAUSED) with its destination log end at the
 * source's live high watermark (asked again once all reached it, so records written meanwhile are waited
 * for too), then fails them over (removeTopics) and waits until every one is STOPPED. Both waits re-check
 * on the engine's change notifications and are bounded by `timeoutMs` on the cluster's scheduler. When the
 * catch-up times out nothing is failed over and PromoteTimeoutError names each partition short of lag 0
 * with its lag, and so does a failover whose turn in the mirror's command queue comes after the deadline;
 * SourceUnreachableError when the source does not answer (a promote needs it: use --remove for an unplanned
 * failover); INVALID_MIRROR_STATE when the source no longer has a copied topic's id (deleted, or created
 * again), whose copy can never catch up.
 */
export async function promoteTopics(
  deps: PromoteDeps,
  mirror: string,
  regex: string,
  options: PromoteOptions = {},
): Promise<PromoteResult> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_PROMOTE_TIMEOUT_MS;
  const { destination } = deps;
  const { signal } = options;
  const unlessClosed = () => {
    const closed = deps.closed?.();
    if (closed !== undefined) throw closed;
  };
  const unlessCancelled = () => {
    unlessClosed();
    if (signal?.aborted) throw new PromoteCancelledError(mirror);
  };
  unlessCancelled();
  const topics = selectMirrorTopics(mirror, regex, mirrorTopics(destination.controller.image, mirror), [
    "ACTIVE",
    "PAUSED",
  ]);
  const parts = partitionsOf(topics);
  // One bound for the whole catch-up, the first ask of the source included: a source that hangs (rather
  // than refuses) must not hold the command past it, nor let the failover start after it was reported.
  const deadline = destination.clock.now() + timeoutMs;
  const barrier = await liveHighWatermarks(deps, mirror, parts, timeoutMs);
  const subscribe = (listener: () => void) => {
    const unsubscribeChanges = deps.changes.subscribe(listener);
    // A cancel is a change too: the next check ends the wait (`unlessCancelled`).
    const onAbort = () => deps.changes.notify();
    signal?.addEventListener("abort", onAbort);
    const controller = destination.controller;
    // Metadata changes (leadership, configs) count as changes too; announced through `changes`, so the
    // check runs on the scheduler after the controller's step, not inside its listener call.
    const unsubscribeMetadata = controller.subscribe(
      () => deps.changes.notify(),
      controller.metadataLog().length,
    );
    return () => {
      unsubscribeChanges();
      unsubscribeMetadata();
      signal?.removeEventListener("abort", onAbort);
    };
  };
  // A topic asked to be REMOVED now (or gone from the mirror): another command failed it over.
  const removedNow = (topic: string) => {
    const desired = mirrorTopics(destination.controller.image, mirror).find((t) => t.name === topic)?.desired;
    return desired !== "ACTIVE" && desired !== "PAUSED";
  };
  const laggards = (): PromoteLaggard[] => {
    const views = viewsByPartition(deps.coordinators.describe(mirror), deps.destination.controller.image);
    return parts.flatMap(({ topic, partition }) => {
      const state = views.get(`${topic}:${partition}`)?.state ?? "UNKNOWN";
      const end = leaderLog(destination, topic, partition)?.logEndOffset;
      const hw = barrier.get(`${topic}:${partition}`);
      const lag = end === undefined || hw === undefined ? null : hw > end ? hw - end : 0n;
      return PROMOTABLE.has(state) && lag === 0n ? [] : [{ topic, partition, lag, state }];
    });
  };

  const reached = await waitForCondition<PromoteLaggard[] | PromotedPartition[]>({
    subscribe,
    scheduler: destination.scheduler,
    timeoutMs: Math.max(0, deadline - destination.clock.now()),
    check: async () => {
      unlessCancelled();
      const behind = laggards();
      failIfStuck(mirror, behind, removedNow);
      if (behind.length > 0) return { done: false, why: behind };
      // Everything reached the high watermark asked before: ask again, so a record acknowledged since (a
      // writer that had not stopped) is waited for instead of being left behind on the source.
      // The catch-up's own timer (scheduled first, for the same deadline) ends the wait when time runs out:
      // this bound, a little later, only keeps a hanging ask from outliving it.
      const now = await liveHighWatermarks(
        deps,
        mirror,
        parts,
        Math.max(0, deadline - destination.clock.now()) + ASK_AGAIN_SLACK_MS,
      );
      for (const [k, hw] of now) barrier.set(k, hw);
      unlessCancelled();
      const still = laggards();
      failIfStuck(mirror, still, removedNow);
      if (still.length > 0) return { done: false, why: still };
      return {
        done: true,
        value: parts.map(({ topic, partition }) => ({
          topic,
          partition,
          offset: barrier.get(`${topic}:${partition}`)!,
        })),
      };
    },
    // As they are now, not as the last check saw them; none when the time ran out while the source was
    // asked again (a real cluster answers over the network).
    onTimeout: () => new PromoteTimeoutError(mirror, "CATCH_UP", timeoutMs, laggards()),
  });
  const promoted = reached as PromotedPartition[];
  unlessCancelled();
  const sync = deps.syncBeforeFailover?.(mirror);
  if (sync !== undefined) {
    // Bound by the promote's deadline and cancel signal like the catch-up: a source that hangs (rather than
    // refuses) must not hold the command past its timeout, nor fail the topics over after it was reported.
    let onAbort = () => {};
    const cancelled = new Promise<never>((_resolve, reject) => {
      onAbort = () => reject(new PromoteCancelledError(mirror));
      signal?.addEventListener("abort", onAbort, { once: true });
    });
    try {
      await answerWithin(
        Promise.race([sync, cancelled]),
        destination.scheduler,
        Math.max(0, deadline - destination.clock.now()),
        () => new PromoteTimeoutError(mirror, "CATCH_UP", timeoutMs, [], "SYNC"),
      );
    } finally {
      signal?.removeEventListener("abort", onAbort);
    }
    unlessCancelled();
  }

  /** The partitions of `topics` (of those promoted) not STOPPED yet, with their state. */
  const notStoppedOf = (names: readonly string[]): PromoteLaggard[] => {
    const views = viewsByPartition(deps.coordinators.describe(mirror), deps.destination.controller.image);
    return parts
      .filter(({ topic }) => names.includes(topic))
      .map(({ topic, partition }) => ({
        topic,
        partition,
        lag: null,
        state: views.get(`${topic}:${partition}`)?.state ?? "UNKNOWN",
      }))
      .filter((p) => p.state !== "STOPPED");
  };
  /**
   * The engine closed after the failover of `failedOver` began: not a bare "closed", since those topics are
   * no longer mirrored and their failover goes on when the engine starts again.
   */
  const closedDuringFailover = (failedOver: readonly string[], busy: readonly PromoteLaggard[]) => {
    const list = busy.map((p) => `${p.topic}-${p.partition} (${p.state})`).join(", ");
    return new MirroringClosedError(
      `Promote of mirror '${mirror}' had already failed ${topicList([...failedOver])} over (no longer mirrored), but ${busy.length} partition(s) were not STOPPED yet: ${list}. Their failover goes on when the mirroring starts again; follow it with --describe --mirror ${mirror} before sending writes to this cluster.`,
    );
  };
  // The topics checked, by name: the regex may select more by now (a topic added meanwhile, or through
  // topics.include), and a topic never checked must not be failed over without catching up.
  // The failover waits its turn behind the mirror's other commands (an add waiting on the source, say): one
  // whose turn comes after the deadline does not start. The caller was told the promote timed out by then,
  // and a failover after that, with writers back on the source, would leave their records behind.
  // The STOP phase has one bound, from the failover's first change: the STOP commands' records (on a slow
  // or full `__mirror_state` disk), then the partitions reaching STOPPED.
  let stopDeadline = destination.clock.now() + timeoutMs;
  let removed: Awaited<ReturnType<PromoteDeps["removeTopics"]>>;
  try {
    removed = await deps.removeTopics(
      mirror,
      exactTopicPattern(topics.map((t) => t.name)),
      () => {
        unlessCancelled();
        if (destination.clock.now() > deadline) {
          throw new PromoteTimeoutError(mirror, "CATCH_UP", timeoutMs, [], "QUEUED");
        }
        stopDeadline = destination.clock.now() + timeoutMs;
      },
      timeoutMs,
    );
  } catch (error) {
    // Closed while its STOP commands were on their way: the topics marked REMOVED are failed over all the same.
    const checked = new Set(topics.map((t) => t.name));
    const failedOver = mirrorTopics(destination.controller.image, mirror)
      .filter((t) => t.desired === "REMOVED" && checked.has(t.name))
      .map((t) => t.name);
    // Its STOP commands not recorded in time (`__mirror_state` takes no write): the failover was made and
    // goes on once they are, as after the wait for STOPPED ran out.
    if (error instanceof MirrorCommandTimeoutError && failedOver.length > 0) {
      throw new PromoteTimeoutError(mirror, "STOP", timeoutMs, notStoppedOf(failedOver));
    }
    if (deps.closed?.() === undefined || failedOver.length === 0) throw error;
    throw closedDuringFailover(failedOver, notStoppedOf(failedOver));
  }
  const names = topics.map((t) => t.name).filter((n) => removed.topics.includes(n));
  // From here the failover goes on whatever the signal says, and so does the wait for STOPPED (the subscribe
  // above re-checks on an abort, which changes nothing here).
  const notStopped = (): PromoteLaggard[] => notStoppedOf(names);
  await waitForCondition<PromoteLaggard[] | null>({
    subscribe,
    scheduler: destination.scheduler,
    timeoutMs: Math.max(0, stopDeadline - destination.clock.now()),
    check: async () => {
      const busy = notStopped();
      if (deps.closed?.() !== undefined && busy.length > 0) throw closedDuringFailover(names, busy);
      return busy.length === 0 ? { done: true, value: null } : { done: false, why: busy };
    },
    onTimeout: (last) => new PromoteTimeoutError(mirror, "STOP", timeoutMs, last ?? notStopped()),
  });
  return {
    topics: names,
    partitions: promoted,
    message: `Promoted ${names.length} topic(s) of mirror ${mirror}: ${topicList(names)}; ${promoted.length} partition(s) reached lag 0 against the source's high watermark and are STOPPED (writable)`,
  };
}

/**
 * Ends a catch-up that cannot succeed at once, rather than at its deadline: a partition another command
 * failed over meanwhile (STOPPING, STOPPED) is no longer a copy that can catch up. INVALID_MIRROR_STATE,
 * nothing failed over by this promote. (A PAUSED partition short of the source is waited for: a resume may
 * come before the deadline.)
 */
function failIfStuck(
  mirror: string,
  behind: readonly PromoteLaggard[],
  removedNow: (topic: string) => boolean,
): void {
  // Only where the topic is asked to be REMOVED now: ACTIVE with STOPPED partitions is a re-add not yet
  // started (or a recreated topic's old view), which catches up.
  const removed = behind.filter(
    (p) => (p.state === "STOPPING" || p.state === "STOPPED") && removedNow(p.topic),
  );
  if (removed.length === 0) return;
  const list = removed.map((p) => `${p.topic}-${p.partition} (${p.state})`).join(", ");
  throw new MirrorStateError(
    mirror,
    `Promote of mirror '${mirror}' cannot reach lag 0: ${removed.length} partition(s) were failed over by another command meanwhile (--remove): ${list}. Nothing was failed over by this promote; follow those with --describe --mirror ${mirror}, and promote the rest again if needed.`,
  );
}

function partitionsOf(topics: readonly MirrorTopic[]): { topic: string; topicId: Uuid; partition: number }[] {
  return topics.flatMap((t) =>
    Array.from({ length: t.partitionCount }, (_, p) => ({ topic: t.name, topicId: t.topicId, partition: p })),
  );
}

/**
 * The source's high watermark of each partition now (ListOffsets latest), by `topic:partition`; a source
 * that has not answered within `withinMs` is unreachable for this promote (nothing was failed over).
 */
async function liveHighWatermarks(
  deps: Pick<PromoteDeps, "destination" | "sources">,
  mirror: string,
  parts: readonly { topic: string; topicId: Uuid; partition: number }[],
  withinMs: number,
): Promise<Map<string, bigint>> {
  const configs = deps.destination.controller.image.mirrors.get(mirror) ?? {};
  const bootstrap = configs["bootstrap.servers"] ?? "";
  const { clock, scheduler } = deps.destination;
  const giveUpAt = clock.now() + withinMs;
  try {
    const source = deps.sources.get(mirror, configs);
    /**
     * The source's high watermark, asked again while its leader answers OFFSET_NOT_AVAILABLE: a new leader
     * whose followers have not fetched from it yet has a HW below what its predecessor committed, and a
     * catch-up to that would promise less than the source acknowledged (KIP-207).
     */
    const highWatermark = async (p: (typeof parts)[number]): Promise<bigint> => {
      for (;;) {
        try {
          return await source.listOffsets(p.topic, p.partition, -1n, p.topicId);
        } catch (error) {
          const notYet = error instanceof KafkaError && error.errorName === "OFFSET_NOT_AVAILABLE";
          if (!notYet || clock.now() >= giveUpAt) throw error;
          await sleep(scheduler, 20);
        }
      }
    };
    const hws = await answerWithin(
      // By topic id: the high watermark of a source topic created again under the name is another topic's,
      // which the copy can never catch up with (it would read as lag 0 while it lacks that topic's records).
      Promise.all(
        parts.map((p) =>
          highWatermark(p).catch((error: unknown) => {
            if (error instanceof KafkaError && error.errorName === "UNKNOWN_TOPIC_ID") {
              throw new MirrorStateError(
                mirror,
                `The source no longer has the topic '${p.topic}' mirror '${mirror}' copies (id ${p.topicId}): it was deleted, or deleted and created again with another id, so the copy cannot catch up with it. Nothing was failed over. To make the copy writable as it is, fail it over with --remove.`,
              );
            }
            throw error;
          }),
        ),
      ),
      deps.destination.scheduler,
      withinMs,
      () =>
        new Error(
          `it did not answer ListOffsets for ${parts.length} partition(s) within the promote's ${withinMs} ms (timeoutMs, --timeout-ms); nothing was failed over (a promote needs the source's high watermarks: to fail over without them, use --remove)`,
        ),
    );
    return new Map(parts.map((p, i) => [`${p.topic}:${p.partition}`, hws[i]!]));
  } catch (error) {
    if (error instanceof MirrorStateError) throw error;
    throw new SourceUnreachableError(mirror, bootstrap, error);
  }
}
