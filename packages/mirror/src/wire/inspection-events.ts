/** The node's live stream of partition transitions, shaped as XState inspection events (served to the visualizer). */
/**
 * The push stream's events, shaped like XState's inspection events (`@xstate.actor`, `@xstate.snapshot`,
 * `@xstate.event`) so a tool that speaks Stately's inspection protocol can attach: actors are identified by
 * `sessionId`, nested by `parentId` under `rootId`. Partitions are actors under their mirror, mirrors under
 * their cluster. Plain JSON (offsets and lags as numbers or null).
 */

/** The lifecycle record fields the stream carries in a snapshot's context. */
export interface PartitionContext {
  readonly cluster: string;
  readonly mirror: string;
  readonly topic: string;
  readonly topicId: string;
  readonly partition: number;
  readonly stateEpoch: number;
  readonly leaderEpoch: number;
  readonly retryAttempt: number;
  readonly errorMessage: string | null;
  readonly previousState: string | null;
  /** Source high watermark minus destination log end, when known. */
  readonly lag: number | null;
}

/** A snapshot as XState's inspector shows it: the state value, the context, and the actor's status. */
export interface InspectedSnapshot {
  readonly value: string;
  readonly context: PartitionContext;
  readonly status: "active" | "done" | "stopped";
}

/** `{id, sessionId}` of an actor, the serializable part of XState's `actorRef`. */
export interface InspectedActorRef {
  readonly id: string;
  readonly sessionId: string;
}

interface InspectionBase {
  readonly actorRef: InspectedActorRef;
  readonly sessionId: string;
  readonly rootId: string;
  readonly parentId: string | null;
  /** Milliseconds since the epoch, from the node's clock. */
  readonly createdAt: number;
  readonly _version: "1.0.0";
}

/** An actor appeared (sent for every known partition when a client connects). */
export interface InspectionActorEvent extends InspectionBase {
  readonly type: "@xstate.actor";
  readonly snapshot: InspectedSnapshot;
}

/** An actor's snapshot changed (a committed transition, or a new lag). */
export interface InspectionSnapshotEvent extends InspectionBase {
  readonly type: "@xstate.snapshot";
  /** The event the actor handled (`{type:"COMMITTED"}`, `{type:"STOP"}`, `{type:"cluster-mirror.lag"}`). */
  readonly event: { readonly type: string };
  readonly snapshot: InspectedSnapshot;
}

/** An event was delivered to an actor (the commit's cause, so the sequence view shows it). */
export interface InspectionEventEvent extends InspectionBase {
  readonly type: "@xstate.event";
  readonly event: { readonly type: string };
  readonly sourceRef: InspectedActorRef | null;
}

/** One event of the push stream. */
export type InspectionEvent = InspectionActorEvent | InspectionSnapshotEvent | InspectionEventEvent;

/** The actor id of a mirror partition: `cluster/mirror/topic-partition`. */
export function partitionActorId(
  c: Pick<PartitionContext, "cluster" | "mirror" | "topic" | "partition">,
): string {
  return `${c.cluster}/${c.mirror}/${c.topic}-${c.partition}`;
}

/** The actor id of a mirror (the parent of its partitions): `cluster/mirror`. */
export function mirrorActorId(cluster: string, mirror: string): string {
  return `${cluster}/${mirror}`;
}

function base(context: PartitionContext, createdAt: number): InspectionBase {
  const id = partitionActorId(context);
  return {
    actorRef: { id, sessionId: id },
    sessionId: id,
    rootId: context.cluster,
    parentId: mirrorActorId(context.cluster, context.mirror),
    createdAt,
    _version: "1.0.0",
  };
}

/** `@xstate.actor` for a partition in `state`. */
export function actorEvent(
  state: string,
  context: PartitionContext,
  createdAt: number,
): InspectionActorEvent {
  return { type: "@xstate.actor", ...base(context, createdAt), snapshot: snapshotOf(state, context) };
}

/** `@xstate.snapshot` for a partition that entered `state` on `event`. */
export function snapshotEvent(
  state: string,
  context: PartitionContext,
  event: { type: string },
  createdAt: number,
): InspectionSnapshotEvent {
  return {
    type: "@xstate.snapshot",
    ...base(context, createdAt),
    event,
    snapshot: snapshotOf(state, context),
  };
}

/**
 * `@xstate.snapshot` with status `stopped` for a partition that is gone (its mirror deleted, its records
 * tombstoned): as XState's inspector reports an actor that stopped, so a viewer drops it.
 */
export function stoppedEvent(
  state: string,
  context: PartitionContext,
  createdAt: number,
): InspectionSnapshotEvent {
  return {
    type: "@xstate.snapshot",
    ...base(context, createdAt),
    event: { type: "xstate.stop" },
    snapshot: { value: state, context, status: "stopped" },
  };
}

/** `@xstate.event` for the event a partition handled (its source is outside the actor system: null). */
export function eventEvent(
  context: PartitionContext,
  event: { type: string },
  createdAt: number,
): InspectionEventEvent {
  return { type: "@xstate.event", ...base(context, createdAt), event, sourceRef: null };
}

function snapshotOf(state: string, context: PartitionContext): InspectedSnapshot {
  return { value: state, context, status: "active" };
}
