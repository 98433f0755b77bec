import {
  type MirrorPartitionSnapshot,
  type MirrorPartitionStateRecord,
  mirrorPartitionMachine,
} from "@cluster-mirror/machines";
import type { AnyActorRef } from "xstate";
import type { MirrorPartitionKey } from "../ports";
import type { MirrorInspector } from "./inspection-hub";

/**
 * One committed change of a mirror partition: its `__mirror_state` record was replaced (a lifecycle change,
 * a retry count, a leader epoch). Reported once the partition actor applied the commit, so `record` is what
 * `describe` answers from then on.
 */
export interface PartitionTransition {
  readonly key: MirrorPartitionKey;
  /** The event the actor handled when the record changed (`COMMITTED`, ...), as XState's inspection shows it. */
  readonly event: { readonly type: string };
  /** The committed record before the change. */
  readonly previous: MirrorPartitionStateRecord;
  /** The committed record after the change. */
  readonly record: MirrorPartitionStateRecord;
}

/** Called synchronously for every committed change; it must not throw or block (copy what it needs). */
export type TransitionListener = (transition: PartitionTransition) => void;

/**
 * Turns XState's inspection of the coordinator actors into committed changes: of the snapshots a partition
 * actor moves to, those whose `context.record` (the committed `__mirror_state` value, not the change still
 * waiting for its append) differs from the actor's previous one. One mechanism: `subscribeTransitions` and
 * the node's live stream both read the actors through `ClusterMirroring.inspect`.
 *
 * The previous record of an actor is the one it was started with (its `xstate.init` step) or, for an actor
 * already running when the observer attached, the one it holds when its next event is delivered
 * (`@xstate.event` comes before the actor processes that event). `topicName` names a partition's topic from
 * its id (the actor's id carries the id, not the name); a thrown listener goes to `onError`, never into the
 * actor that was inspected.
 */
export function committedTransitions(
  listener: TransitionListener,
  topicName: (topicId: string) => string | undefined,
  onError: (error: unknown) => void = () => {},
): MirrorInspector {
  // Weak: a stopped actor (an unloaded shard, a deleted mirror) takes its entries with it.
  const records = new WeakMap<AnyActorRef, MirrorPartitionStateRecord>();
  const keys = new WeakMap<AnyActorRef, MirrorPartitionKey | null>();
  return (event) => {
    if (event.type !== "@xstate.event" && event.type !== "@xstate.snapshot") return;
    const ref = event.actorRef as AnyActorRef;
    if (event.type === "@xstate.event") {
      if (records.has(ref)) return;
      const before = ref.getSnapshot() as unknown;
      if (isPartitionSnapshot(before)) records.set(ref, before.context.record);
      return;
    }
    const snapshot = event.snapshot as unknown;
    if (!isPartitionSnapshot(snapshot)) return;
    const record = snapshot.context.record;
    const previous = records.get(ref);
    records.set(ref, record);
    if (previous === undefined || previous === record) return;
    let key = keys.get(ref);
    if (key === undefined) {
      key = partitionKeyOf(ref.id, topicName);
      keys.set(ref, key);
    }
    if (key === null) return;
    try {
      listener({ key, event: event.event, previous, record });
    } catch (error) {
      onError(error);
    }
  };
}

/** Whether an inspected snapshot is a mirror partition actor's (shards, groups and fetchers are not). */
function isPartitionSnapshot(s: unknown): s is MirrorPartitionSnapshot {
  return (s as { machine?: { id?: unknown } } | undefined)?.machine?.id === mirrorPartitionMachine.id;
}

/**
 * The key of a partition actor from its id, `MIRROR/TOPIC_ID/PARTITION` (`partitionKeyId`): the partition
 * after the last `/`, the topic id before it (a topic id has no `/`), the mirror before that. A topic no
 * longer in the metadata is named by its id, as a load names it. Null when the id is not a partition's.
 */
function partitionKeyOf(
  id: string,
  topicName: (topicId: string) => string | undefined,
): MirrorPartitionKey | null {
  const last = id.lastIndexOf("/");
  const middle = last > 0 ? id.lastIndexOf("/", last - 1) : -1;
  const partition = Number(id.slice(last + 1));
  if (middle <= 0 || !Number.isInteger(partition)) return null;
  const topicId = id.slice(middle + 1, last);
  return { mirror: id.slice(0, middle), topic: topicName(topicId) ?? topicId, topicId, partition };
}
