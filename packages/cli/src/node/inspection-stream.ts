import type { Scheduler } from "@cluster-mirror/cluster";
import type { MirrorPartitionView, PartitionTransition } from "@cluster-mirror/mirror";
import {
  actorEvent,
  eventEvent,
  type InspectionEvent,
  type PartitionContext,
  partitionActorId,
  snapshotEvent,
} from "@cluster-mirror/visualizer";
import type { MirrorNode, NodeCluster } from "./mirror-node";

/** How often lag is recomputed while a client listens (lag changes are pushed, unchanged lags are not). */
export const LAG_INTERVAL_MS = 1000;

/** A client of the stream: gets every event; `close` ends it. */
export type InspectionClient = (event: InspectionEvent) => void;

/**
 * The node's push stream of mirror partition transitions, shaped as XState inspection events: every
 * committed record change (from `ClusterMirroring.subscribeTransitions`) becomes an `@xstate.snapshot`
 * at once; a new client first gets an `@xstate.actor` per known partition; while anyone listens, lag is
 * recomputed every {@link LAG_INTERVAL_MS} and changes are pushed as snapshots on a `cluster-mirror.lag`
 * event.
 */
export class InspectionStream {
  private readonly clients = new Set<InspectionClient>();
  private readonly unsubscribes: (() => void)[] = [];
  /** Last lag pushed per actor id, so an unchanged lag is not sent again. */
  private readonly lags = new Map<string, number | null>();
  private cancelLag: (() => void) | undefined;
  private closed = false;

  constructor(
    private readonly node: MirrorNode,
    private readonly scheduler: Scheduler = node.scheduler,
  ) {
    for (const c of node.clusters()) {
      this.unsubscribes.push(c.mirroring.subscribeTransitions((t) => this.onTransition(c, t)));
    }
  }

  /** Adds a client and sends it the current state of every partition; returns the function removing it. */
  connect(client: InspectionClient, clusterName?: string): () => void {
    const now = this.node.clock.now();
    for (const c of this.clustersOf(clusterName)) {
      for (const v of c.mirroring.coordinators.describe()) {
        const context = this.contextOf(c.name, v);
        client(actorEvent(v.state, context, now));
      }
    }
    const filtered: InspectionClient =
      clusterName === undefined ? client : (e) => e.rootId === clusterName && client(e);
    this.clients.add(filtered);
    if (this.cancelLag === undefined) this.scheduleLag();
    return () => {
      this.clients.delete(filtered);
    };
  }

  /** Stops following the clusters; clients get nothing more. */
  close(): void {
    this.closed = true;
    for (const u of this.unsubscribes.splice(0)) u();
    this.cancelLag?.();
    this.clients.clear();
  }

  private clustersOf(name: string | undefined): NodeCluster[] {
    return name === undefined ? this.node.clusters() : [this.node.cluster(name)];
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
    if (this.clients.size === 0) return;
    const r = t.record;
    const context = this.contextOf(c.name, {
      key: t.key,
      state: r.state,
      stateEpoch: r.stateEpoch,
      leaderEpoch: r.leaderEpoch,
      lastMirrorEpoch: -1,
      errorMessage: r.errorMessage,
      retryAttempt: r.retryAttempt,
      previousState: r.previousState,
    });
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
