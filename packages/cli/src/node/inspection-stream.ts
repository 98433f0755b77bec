import type { Scheduler } from "@cluster-mirror/cluster";
import type { MirrorPartitionView, PartitionTransition } from "@cluster-mirror/mirror";
import {
  actorEvent,
  eventEvent,
  type InspectionEvent,
  type PartitionContext,
  partitionActorId,
  snapshotEvent,
  stoppedEvent,
} from "@cluster-mirror/mirror";
import type { MirrorNode, NodeCluster } from "./mirror-node";

/** How often lag is recomputed while a client listens (lag changes are pushed, unchanged lags are not). */
export const LAG_INTERVAL_MS = 1000;

/** A client of the stream: gets every event; `close` ends it. */
export type InspectionClient = (event: InspectionEvent) => void;

/**
 * The node's push stream of mirror partition transitions, shaped as XState inspection events. It reads the
 * partition actors through XState's inspection (`ClusterMirroring.inspect`, through its committed-changes
 * view `subscribeTransitions`), attached only while a client listens, so an unwatched node builds no
 * inspection events. What it pushes is the COMMITTED state (durable in `__mirror_state`), not the actor's
 * change still waiting for its append: each step of a partition actor whose committed record changed
 * becomes the `@xstate.event` the actor handled (e.g. `COMMITTED`) and the `@xstate.snapshot` it moved to.
 * A new client first gets an `@xstate.actor` per known partition; while anyone listens, lag is recomputed
 * every {@link LAG_INTERVAL_MS} and changes are pushed as snapshots on a `cluster-mirror.lag` event. In the
 * same round a partition that is gone (its mirror deleted: its records tombstoned, its actor stopped, so it
 * makes no transition) is pushed as a snapshot with status `stopped`, and one that appeared without a
 * transition (a coordinator shard loaded after a leader move) as an `@xstate.actor`, so clients show what
 * `kafka-mirrors --describe` lists.
 */
export class InspectionStream {
  private readonly clients = new Set<InspectionClient>();
  /** Stops the inspection of every cluster; set while at least one client listens. */
  private unsubscribes: (() => void)[] | undefined;
  /** Last lag pushed per actor id, so an unchanged lag is not sent again. */
  private readonly lags = new Map<string, number | null>();
  /** What the clients were told of, per actor id: its cluster and last pushed state (while anyone listens). */
  private readonly shown = new Map<
    string,
    { readonly cluster: string; readonly view: MirrorPartitionView }
  >();
  private cancelLag: (() => void) | undefined;
  private closed = false;

  constructor(
    private readonly node: MirrorNode,
    private readonly scheduler: Scheduler = node.scheduler,
  ) {}

  /** Adds a client and sends it the current state of every partition; returns the function removing it. */
  connect(client: InspectionClient, clusterName?: string): () => void {
    if (this.closed) return () => {};
    // The cluster's own name: "" names the destination, as for every other route. An unknown name throws,
    // naming the known ones.
    const only = clusterName === undefined ? undefined : this.node.cluster(clusterName).name;
    const now = this.node.clock.now();
    for (const c of this.node.clusters()) {
      const shown = only === undefined || c.name === only;
      for (const v of c.mirroring.coordinators.describe()) {
        const context = this.contextOf(c.name, v);
        this.shown.set(partitionActorId(context), { cluster: c.name, view: v });
        if (shown) client(actorEvent(v.state, context, now));
      }
    }
    const filtered: InspectionClient = only === undefined ? client : (e) => e.rootId === only && client(e);
    this.clients.add(filtered);
    // Attached after the snapshot above, in the same task: no commit falls between the two.
    if (this.unsubscribes === undefined) {
      this.unsubscribes = this.node
        .clusters()
        .map((c) => c.mirroring.subscribeTransitions((t) => this.onTransition(c, t)));
    }
    if (this.cancelLag === undefined) this.scheduleLag();
    return () => {
      this.clients.delete(filtered);
      if (this.clients.size === 0) this.detach();
    };
  }

  /** Stops following the clusters; clients get nothing more. */
  close(): void {
    this.closed = true;
    this.detach();
    this.cancelLag?.();
    this.cancelLag = undefined;
    this.clients.clear();
  }

  /** Whether the stream observes the clusters' actors now (it does only while a client listens). */
  get observing(): boolean {
    return this.unsubscribes !== undefined;
  }

  private detach(): void {
    for (const u of this.unsubscribes ?? []) u();
    this.unsubscribes = undefined;
    this.shown.clear();
  }

  private contextOf(cluster: string, v: MirrorPartitionView): PartitionContext {
    const context = {
      cluster,
      mirror: v.key.mirror,
      topic: v.key.topic,
      topicId: v.key.topicId,
      partition: v.key.partition,
      stateEpoch: v.stateEpoch,
      leaderEpoch: v.leaderEpoch,
      retryAttempt: v.retryAttempt,
      errorMessage: v.errorMessage,
      previousState: v.previousState,
      lag: null,
    };
    return { ...context, lag: this.lags.get(partitionActorId(context)) ?? null };
  }

  private onTransition(c: NodeCluster, t: PartitionTransition): void {
    const r = t.record;
    const view: MirrorPartitionView = {
      key: t.key,
      state: r.state,
      stateEpoch: r.stateEpoch,
      leaderEpoch: r.leaderEpoch,
      lastMirrorEpoch: -1,
      errorMessage: r.errorMessage,
      retryAttempt: r.retryAttempt,
      previousState: r.previousState,
    };
    const context = this.contextOf(c.name, view);
    this.shown.set(partitionActorId(context), { cluster: c.name, view });
    const now = this.node.clock.now();
    // As XState's inspector sees an actor step: the event delivered, then the snapshot it produced.
    this.send(eventEvent(context, { type: t.event.type }, now));
    this.send(snapshotEvent(r.state, context, { type: t.event.type }, now));
  }

  private send(event: InspectionEvent): void {
    for (const client of this.clients) client(event);
  }

  private scheduleLag(): void {
    this.cancelLag = this.scheduler.schedule(() => {
      this.cancelLag = undefined;
      if (this.closed || this.clients.size === 0) return;
      void this.pushLags().finally(() => {
        if (!this.closed && this.clients.size > 0 && this.cancelLag === undefined) this.scheduleLag();
      });
    }, LAG_INTERVAL_MS);
  }

  /**
   * Pushes the partitions of `cluster` that appeared or went away without a transition (see the class doc).
   * Gone means neither a coordinator holds it (`views`) nor `kafka-mirrors --describe` lists it (`listed`:
   * a mirror topic's partition whose coordinator shard is still loading stays, as describe shows it).
   */
  private reconcile(
    cluster: string,
    views: ReadonlyMap<string, MirrorPartitionView>,
    listed: ReadonlySet<string>,
  ): void {
    const now = this.node.clock.now();
    for (const [id, shown] of this.shown) {
      if (shown.cluster !== cluster || views.has(id) || listed.has(id)) continue;
      this.shown.delete(id);
      this.lags.delete(id);
      this.send(stoppedEvent(shown.view.state, this.contextOf(cluster, shown.view), now));
    }
    for (const [id, view] of views) {
      if (this.shown.has(id)) continue;
      this.shown.set(id, { cluster, view });
      this.send(actorEvent(view.state, this.contextOf(cluster, view), now));
    }
  }

  private async pushLags(): Promise<void> {
    for (const c of this.node.clusters()) {
      let rows: Awaited<ReturnType<typeof c.mirroring.admin.describe>>;
      try {
        rows = await c.mirroring.admin.describe();
      } catch {
        continue; // coordinators loading: the next round asks again
      }
      const views = new Map(
        c.mirroring.coordinators
          .describe()
          .map((v) => [partitionActorId({ cluster: c.name, ...v.key }), v] as const),
      );
      this.reconcile(
        c.name,
        views,
        new Set(rows.map((row) => partitionActorId({ cluster: c.name, ...row }))),
      );
      for (const row of rows) {
        const id = partitionActorId({ cluster: c.name, ...row });
        const lag = row.lag === null ? null : Number(row.lag);
        if (this.lags.has(id) && this.lags.get(id) === lag) continue;
        this.lags.set(id, lag);
        const view = views.get(id);
        if (view === undefined) continue;
        this.send(
          snapshotEvent(
            view.state,
            this.contextOf(c.name, view),
            { type: "cluster-mirror.lag" },
            this.node.clock.now(),
          ),
        );
      }
    }
  }
}
