import {
  highWatermarksHeldByMinIsr,
  type KafkaCluster,
  type Producer,
  type Transaction,
} from "@cluster-mirror/cluster";
import { SOURCE_TOPIC_DELETED } from "@cluster-mirror/mirror";
import { completeFailovers, type PendingFailover } from "./failover-completion";
import { installBrokerGuards } from "./guards";
import { CommittedPrefix } from "./invariants/committed-prefix";
import { ConfigsKeptWatch } from "./invariants/configs-kept";
import { checkDurableTransition } from "./invariants/durable-commit";
import { LogStartWatch, type MirrorSource } from "./invariants/log-start-follow";
import { batchesByOffset, leaderLog } from "./invariants/logs";
import { readOnlyReason } from "./invariants/mirror-verdict";
import { watchReadOnlyClears } from "./invariants/read-only";
import { checkOrphanedCopy, orphanedIncarnation } from "./invariants/recreated-source";
import { checkPartitionReplicasAgree } from "./invariants/replicas-agree";
import { transactionMarkerOffset } from "./invariants/transactions";
import { TxnMarkerWatch } from "./invariants/txn-markers";
import { UnmirroredFailoverWatch } from "./invariants/unmirrored-failover";
import type { Violation } from "./invariants/violation";
import type { LinkOptions } from "./link";
import { LivenessWatch, MIRRORING_STATES } from "./liveness";
import {
  type AbandonedTxn,
  type CommittedTxn,
  type DeletedIncarnation,
  type EdgeTopicState,
  emptyModel,
  partitionId,
  type SimModel,
} from "./model";
import { type MirrorEdge, mirrorName, type SimNode, SimWorld, type TopologySpec } from "./topology";

/** Settings of a simulation run. */
export interface SimulationOptions {
  /** Brokers per cluster (default 3). */
  brokers?: number;
  links?: LinkOptions;
  /** Topics created on each root at setup: `orders` (2 partitions) and the compacted `profiles` (default). */
  topics?: { name: string; partitions: number; compacted?: boolean }[];
  /**
   * min.insync.replicas of every cluster (default: unset, Kafka's 1): set on each topic the workload
   * creates and as the brokers' default, so `__mirror_state` and the mirror topics (whose copies never take
   * the source's value, spec §7) hold it too. With the workload's acks=all producers, a partition whose ISR
   * shrinks below it holds its high watermark and refuses writes (NOT_ENOUGH_REPLICAS).
   */
  minInsyncReplicas?: number;
}

/** Fault counters of one simulation run. */
export interface SimStats {
  /** Unclean elections actually forced on a source. */
  uncleanElections: number;
  /** Unclean elections asked for but not possible (a replica down, no leader, ...). */
  uncleanSkipped: number;
  controllerFailovers: number;
  slowDisks: number;
  /** Disks filled by `diskFull` (their writes failed until space was freed). */
  fullDisks: number;
  /** Log starts a mirror raised to follow its source (see `LogStartWatch`). */
  logStartFollows: number;
  /** Whole-node restarts (see `restartNode`). */
  nodeRestarts: number;
  /**
   * Partitions found (at the check after each command) with a running leader and an ISR under
   * min.insync.replicas: their high watermark held, acks=all writes refused (only with
   * `SimulationOptions.minInsyncReplicas`).
   */
  underMinIsr: number;
  /**
   * Times a leader kept its high watermark only because its ISR was under min.insync.replicas (every in-sync
   * replica held more), at any moment of the run (`highWatermarksHeldByMinIsr`): a leader that moved it
   * regardless would have committed, and acknowledged, records held by fewer replicas than it requires.
   */
  heldHighWatermarks: number;
  /** Power losses that struck a broker (see `powerLoss`; not every one tears a write). */
  powerLosses: number;
  /** FAILED partitions an operator's `--recover` sent back to work (see `recover`). */
  recoveredPartitions: number;
  /**
   * Failed-over partitions failed again once writable that got back to STOPPED with local data above their
   * barrier (see `failStopped`), and how many of those with a local transaction open through it.
   */
  stoppedFailedAgain: number;
  stoppedFailedAgainInTxn: number;
}

/** An open transaction of the workload. */
export interface OpenTxn {
  node: string;
  topic: string;
  transactionalId: string;
  partition: number;
  /** Offset of its data batch. */
  offset: bigint;
  /** Virtual time it began (its timeout counts from about then). */
  beganAt: number;
  producer: Producer;
  txn: Transaction;
}

/**
 * One deterministic simulation: a topology on a seeded scheduler, the model of what was done to it, the
 * steps taken (for replay reports) and the invariant violations found so far. Commands live in
 * `workload.ts`, `operator.ts` and `fault-commands.ts`; checks in `checks.ts`.
 */
export class Simulation {
  readonly world: SimWorld;
  readonly model: SimModel = emptyModel();
  readonly violations: Violation[] = [];
  /** Every step with its virtual time, for failure reports. */
  readonly steps: string[] = [];
  readonly brokers: number;
  readonly edges: MirrorEdge[] = [];
  readonly producers = new Map<string, Producer>();
  /** Counts of injected faults (and fault attempts that could not be forced), for coverage assertions. */
  readonly stats: SimStats = {
    uncleanElections: 0,
    uncleanSkipped: 0,
    controllerFailovers: 0,
    slowDisks: 0,
    fullDisks: 0,
    logStartFollows: 0,
    nodeRestarts: 0,
    underMinIsr: 0,
    heldHighWatermarks: 0,
    powerLosses: 0,
    recoveredPartitions: 0,
    stoppedFailedAgain: 0,
    stoppedFailedAgainInTxn: 0,
  };
  openTxn: OpenTxn | undefined;
  /** Brokers (`node/id`) down after a power loss tore their last write, until they start again (`powerLoss`). */
  readonly tornBrokers = new Set<string>();
  /** The partition the workload's latest produce went to (acknowledged or not), for `powerLoss`. */
  lastWrite: { topic: string; partition: number } | undefined;
  /** The HW-committed prefix of every partition (checked on every step and at every mirror truncation). */
  readonly prefix = new CommittedPrefix();
  /** Failovers whose partitions were not all checked at STOPPED yet (see `completeFailovers`). */
  readonly pendingFailovers: PendingFailover[] = [];
  /** Liveness of operator commands on healthy clusters (see `LivenessWatch`). */
  readonly liveness: LivenessWatch = new LivenessWatch(this);
  /** Called after a leader appended a control batch (see `GuardHooks.afterControlAppend`). */
  readonly controlAppendListeners = new Set<
    (node: string, brokerId: number, topic: string, partition: number) => void
  >();
  /** Called before a mirror truncates a leader's log (see `GuardHooks.beforeTruncate`; `cutFault`). */
  readonly truncateListeners = new Set<
    (node: string, topic: string, partition: number, offset: bigint, full: boolean) => void
  >();
  /** Every log start a mirror raised to follow its source, checked as it moves (see `LogStartWatch`). */
  readonly logStarts = new LogStartWatch();
  /** Copies' topic configs, checked never to lose a value the source still has (see `ConfigsKeptWatch`). */
  readonly configsKept = new ConfigsKeptWatch();
  /** Per cluster: how long committed transactions read as open on their leaders (see `checkTxnMarkers`). */
  private readonly markerWatches = new Map<string, TxnMarkerWatch>();
  /** Per cluster: failovers without mirrored data, across node restarts (see `UnmirroredFailoverWatch`). */
  private readonly unmirroredWatches = new Map<string, UnmirroredFailoverWatch>();
  private readonly reported = new Set<string>();
  /** `highWatermarksHeldByMinIsr` when this run began (see `SimStats.heldHighWatermarks`). */
  private readonly heldBefore = highWatermarksHeldByMinIsr();
  private txnCount = 0;
  private topicCount = 0;

  private constructor(
    spec: TopologySpec,
    readonly seed: number,
    readonly options: SimulationOptions,
  ) {
    this.brokers = options.brokers ?? spec.brokers ?? 3;
    this.world = new SimWorld(
      { ...spec, brokers: this.brokers },
      seed,
      options.links,
      options.minInsyncReplicas,
    );
    this.world.linkListeners.add((from, to, why) => this.liveness.linkChanged(from, to, why));
    for (const name of spec.clusters) {
      this.watchCluster(name, this.node(name).cluster);
      this.watchMirroring(name);
    }
    this.liveness.install();
  }

  /**
   * Installs the guards and watches of cluster `name` on `cluster` (at construction, and on the new process
   * after a node restart, before its brokers start).
   */
  private watchCluster(name: string, cluster: KafkaCluster): void {
    this.markerWatches.set(
      name,
      new TxnMarkerWatch(name, cluster, () => this.world.clock.now(), this.options.minInsyncReplicas),
    );
    watchReadOnlyClears(name, cluster, (v) => this.report(v));
    installBrokerGuards(name, cluster, {
      readOnlyReason: (_node, topic, partition) =>
        readOnlyReason(cluster, this.node(name).mirroring.coordinators.describe(), topic, partition),
      beforeTruncate: (node, topic, partition, offset, full) => {
        if (full) this.logStarts.restart(cluster, node, topic, partition, offset);
        this.report(this.prefix.onTruncate(node, cluster, topic, partition, offset, full));
        // What the model records of the cut (read on the log before it), only once it is made: a cut
        // refused before it cut anything (no active controller to record it) leaves the log as it was.
        const cut = this.commitsCutBy(cluster, node, topic, partition, offset, full);
        const end = leaderLog(cluster, topic, partition)?.logEndOffset;
        const at = this.world.clock.now();
        for (const listener of [...this.truncateListeners]) listener(node, topic, partition, offset, full);
        return () => {
          for (const c of cut) c.cut = true;
          if (full || end === undefined || offset < end)
            this.model.truncations.push({ node, topic, partition, offset, at });
          for (const f of this.model.failovers) {
            if (f.node !== node || f.topic !== topic || f.partition !== partition) continue;
            if (f.rewrittenFrom === undefined || offset < f.rewrittenFrom) f.rewrittenFrom = offset;
          }
        };
      },
      beforeMirrorAppend: (node, topic, partition) => {
        this.report(this.prefix.beforeMirrorAppend(node, cluster, topic, partition));
        const end = leaderLog(cluster, topic, partition)?.logEndOffset;
        for (const f of this.model.failovers) {
          if (f.node !== node || f.topic !== topic || f.partition !== partition) continue;
          if (f.mirroredAgainFrom === undefined) f.mirroredAgainFrom = end;
        }
      },
      beforeProduce: (_node, topic) => {
        if (!topic.startsWith("__")) completeFailovers(this);
      },
      // A marker is a write too: a transaction the workload left open on a topic that was failing over (its
      // produce refused as READ_ONLY_TOPIC, the partition already added to it) is aborted by this node's
      // coordinator at its timeout, an ABORT marker after the failover's barrier. The failover is checked
      // before it (soak FC_SEED=398 `txn-leader-crash` and `transitions`: the check ran only at the end of
      // the settling, which a node restart's abandoned transaction had stretched past that timeout). Not
      // while a restarted node's new process starts (it is not the node's yet: its markers wait for it).
      beforeControlAppend: (_node, topic) => {
        if (!topic.startsWith("__") && this.node(name).cluster === cluster) completeFailovers(this);
      },
      afterControlAppend: (node, brokerId, topic, partition) => {
        for (const listener of [...this.controlAppendListeners]) listener(node, brokerId, topic, partition);
      },
      afterFollowLogStart: (move) => {
        if (move.logStartAfter > move.logStartBefore) this.stats.logStartFollows++;
        // A middle hop of a chain is the next hop's source: its followed log start bounds that hop's.
        this.logStarts.note(cluster, name, move.topic, move.partition, move.logStartAfter);
        // A copy that follows its source's log start may reach the source's end by it (all it had to copy
        // was deleted there): its high watermark moved without an append.
        this.liveness.onHighWatermark(move.node, move.topic, move.partition);
        this.report(
          this.logStarts.check(
            move,
            readOnlyReason(
              cluster,
              this.node(name).mirroring.coordinators.describe(),
              move.topic,
              move.partition,
            ),
            this.mirrorSourceOf(name, move.topic),
          ),
        );
      },
      afterTruncateFully: (node, topic, partition) => this.liveness.onHighWatermark(node, topic, partition),
      afterDeleteRecords: (node, topic, partition, logStart) =>
        this.logStarts.note(cluster, node, topic, partition, logStart),
      afterHighWatermarkMove: (node, topic, partition, before) => {
        this.report(checkPartitionReplicasAgree(node, cluster, topic, partition, before));
        this.liveness.onHighWatermark(node, topic, partition);
      },
      report: (v) => this.report(v),
    });
  }

  /** Watches the committed transitions of `name`'s mirroring (at construction and after a node restart). */
  private watchMirroring(name: string): void {
    const { cluster, mirroring } = this.node(name);
    // Checked the moment each transition commits, not between steps (see `checkDurableTransition`).
    // Issue 11 item 5b: a failover from FAILED over a log without mirrored data writes no barrier. One
    // watch per node: a failover that STOPPING began before a node restart ends after it.
    let unmirrored = this.unmirroredWatches.get(name);
    if (!unmirrored) {
      unmirrored = new UnmirroredFailoverWatch(name, () => this.node(name).cluster);
      this.unmirroredWatches.set(name, unmirrored);
    }
    const watch = unmirrored;
    mirroring.subscribeTransitions((t) => {
      this.report(checkDurableTransition(name, cluster, t));
      this.report(watch.onTransition(t));
    });
  }

  /**
   * Kills the node of cluster `name` and starts a new process on its disks (see `SimWorld.restartNode`),
   * then re-attaches what the simulation held of the old one: guards and watches, the liveness watch, the
   * workload's clients (they connect again), and the consumers of active groups (they join again). An open
   * transaction of the workload there lost its producer: it is abandoned, for the coordinator to abort at
   * its timeout (see `checkAbandonedTxns`), and never counts as committed.
   */
  restartNode(name: string): SimNode {
    const open = this.openTxn?.node === name ? this.openTxn : undefined;
    const abandoned = open && this.abandon(open);
    const node = this.world.restartNode(name, (cluster) => this.watchCluster(name, cluster));
    this.stats.nodeRestarts++;
    if (open) this.openTxn = undefined;
    if (abandoned) this.model.abandonedTxns.push(abandoned);
    this.watchMirroring(name);
    this.liveness.installOn(name);
    this.producers.delete(name);
    for (const g of this.model.activeGroups) {
      if (g.node !== name) continue;
      node.cluster.groups.joinGroup({
        groupId: g.groupId,
        topics: [g.topic],
        sessionTimeoutMs: 1_000_000_000,
      });
    }
    return node;
  }

  /** The open transaction as an abandoned one (its producer id read from its leader's log), if found. */
  private abandon(open: OpenTxn): AbandonedTxn | undefined {
    const log = leaderLog(this.node(open.node).cluster, open.topic, open.partition);
    const b = log ? batchesByOffset(log).get(open.offset) : undefined;
    if (!b) return undefined;
    return {
      node: open.node,
      topic: open.topic,
      partition: open.partition,
      producerId: b.producerId,
      offset: open.offset,
      beganAt: open.beganAt,
      abandonedAt: this.world.clock.now(),
    };
  }

  /**
   * Checks that no committed transaction reads as open on its partition's leader for long (see
   * `TxnMarkerWatch`); transactions a failback may have replaced and partitions that lost data are skipped.
   */
  checkTxnMarkers(): void {
    const now = this.world.clock.now();
    const commits = this.model.commits.filter(
      (c) => !this.mayBeReplaced(c) && !this.model.diverged.has(partitionId(c.node, c.topic, c.partition)),
    );
    for (const watch of this.markerWatches.values()) this.report(watch.check(commits, now));
  }

  /**
   * Whether a re-add (or failback) of its topic on its node may have replaced a committed transaction: the
   * topic is a mirror there now (its log is to become the source's), or a mirror's cut on the partition since
   * the commit reached its data or its marker (see `commitsCutBy`). A re-add removed again before its
   * truncation excuses nothing: the commit must still read as committed, its marker written once the
   * partition is writable again.
   */
  mayBeReplaced(c: CommittedTxn): boolean {
    if (!c.rejoined) return false;
    const mirrored = this.edges.some((e) => {
      const state = e.to === c.node ? this.edgeState(e, c.topic) : undefined;
      return state !== undefined && state !== "REMOVED";
    });
    return mirrored || c.cut === true;
  }

  /**
   * The commits (already decided) of `node`'s partition that a leader truncation at `offset` is about to
   * reach: their data batch, or their marker (an unplanned failover may have copied the data of a commit
   * and not its marker, and a failback then cuts between the two, at the LME). Marked `cut` once it is made.
   */
  private commitsCutBy(
    cluster: KafkaCluster,
    node: string,
    topic: string,
    partition: number,
    offset: bigint,
    full: boolean,
  ): CommittedTxn[] {
    const log = leaderLog(cluster, topic, partition);
    const out: CommittedTxn[] = [];
    for (const c of this.model.commits) {
      if (c.cut || c.node !== node || c.topic !== topic || c.partition !== partition) continue;
      if (full || c.offset >= offset) out.push(c);
      else if (log) {
        const marker = transactionMarkerOffset(log, c.producerId, c.offset);
        if (marker !== undefined && marker >= offset) out.push(c);
      }
    }
    return out;
  }

  /** The source `node`'s copy of `topic` is mirrored from, by the edge its `mirror.name` names. */
  mirrorSourceOf(node: string, topic: string): MirrorSource | undefined {
    const name = this.node(node).cluster.controller.image.topic(topic)?.configs.get("mirror.name");
    const mirror = name?.replace(/\.(paused|removed)$/, "");
    const edge = this.edges.find((e) => e.to === node && e.mirror === mirror);
    return edge ? { node: edge.from, cluster: this.node(edge.from).cluster } : undefined;
  }

  /**
   * Counts the partitions whose ISR is under min.insync.replicas now (`SimStats.underMinIsr`), and brings
   * `SimStats.heldHighWatermarks` up to date.
   */
  observeUnderMinIsr(): void {
    this.stats.heldHighWatermarks = highWatermarksHeldByMinIsr() - this.heldBefore;
    const minIsr = this.options.minInsyncReplicas;
    if (minIsr === undefined) return;
    for (const name of this.world.spec.clusters) {
      const cluster = this.node(name).cluster;
      for (const t of cluster.controller.image.topicsById.values()) {
        t.partitions.forEach((p, i) => {
          const log = leaderLog(cluster, t.name, i);
          if (log && p.isr.length < Math.min(minIsr, p.replicas.length)) this.stats.underMinIsr++;
        });
      }
    }
  }

  /** Checks the committed prefix of every partition of every cluster (see `CommittedPrefix.observe`). */
  observePrefixes(): void {
    const compacted = (topic: string) => this.model.topics.get(topic)?.compacted ?? false;
    for (const name of this.world.spec.clusters) {
      const { cluster, mirroring } = this.node(name);
      const views = mirroring.coordinators.describe();
      this.report(
        this.prefix.observe(
          name,
          cluster,
          compacted,
          (topic, p) =>
            views
              .filter((v) => v.key.topic === topic && v.key.partition === p)
              .map((v) => ({ mirror: v.key.mirror, state: v.state })),
          (node, topic, p) => leaderLog(this.node(node).cluster, topic, p),
        ),
      );
    }
  }

  /**
   * Builds the topology, creates the topics on its roots and every initial mirror, adds the topics along
   * every edge (a chain adds them hop by hop) and waits until every partition mirrors.
   */
  static async create(
    spec: TopologySpec,
    seed: number,
    options: SimulationOptions = {},
  ): Promise<Simulation> {
    const sim = new Simulation(spec, seed, options);
    const incoming = new Set(spec.edges.map((e) => e.to));
    const roots = spec.clusters.filter((c) => !incoming.has(c));
    const topics = options.topics ?? [
      { name: "orders", partitions: 2 },
      { name: "profiles", partitions: 1, compacted: true },
    ];
    for (const root of roots) {
      for (const t of topics) {
        // Fan-in needs distinct names per root.
        const name = roots.length > 1 ? `${root}.${t.name}` : t.name;
        await sim.createTopic(root, name, t.partitions, t.compacted ?? false);
      }
    }
    for (const e of spec.edges) {
      const edge = { ...e, mirror: mirrorName(e.from, e.to) };
      await sim.world.time.run(
        sim.node(e.to).mirroring.admin.createMirror(edge.mirror, { "bootstrap.servers": `${e.from}:9092` }),
      );
      sim.edges.push(edge);
      sim.model.edgeTopics.set(edge.mirror, new Map());
    }
    for (const t of [...sim.model.topics.values()]) await sim.addAlongEdges(t.name);
    await sim.world.time.until(() => sim.allMirroring(), "every mirror partition MIRRORING", 600_000, 100);
    sim.step("setup done");
    return sim;
  }

  /** The node called `name`. */
  node(name: string): SimNode {
    return this.world.node(name);
  }

  /** Records a step (shown when a property fails). */
  step(text: string): void {
    this.steps.push(`t+${this.world.clock.now() - 1_700_000_000_000}ms ${text}`);
  }

  /** Records violations found by a check. */
  report(found: readonly Violation[]): void {
    for (const v of found) {
      const id = `${v.invariant}\0${v.message}`;
      if (this.reported.has(id)) continue;
      this.reported.add(id);
      this.violations.push(v);
    }
  }

  /** Requested state of `topic` on an edge (undefined: never added there). */
  edgeState(edge: MirrorEdge, topic: string): EdgeTopicState | undefined {
    return this.model.edgeTopics.get(edge.mirror)?.get(topic);
  }

  setEdgeState(edge: MirrorEdge, topic: string, state: EdgeTopicState): void {
    let m = this.model.edgeTopics.get(edge.mirror);
    if (!m) {
      m = new Map();
      this.model.edgeTopics.set(edge.mirror, m);
    }
    // A resume keeps the time: a resumed copy is what its fetcher last saw before the pause, so a cut of
    // its source while it was paused is one it has yet to follow (soak `recreated-source` chain
    // FC_SEED=223 x20: c1's re-add emptied the hop while c2's copy was paused).
    const before = m.get(topic);
    if (state === "ACTIVE" && before !== "ACTIVE" && before !== "PAUSED")
      this.model.activeSince.set(`${edge.mirror}\0${topic}`, this.world.clock.now());
    m.set(topic, state);
  }

  /**
   * Re-reads an edge topic's state from the destination's `mirror.name` config (the source of truth the
   * metadata manager drives from): `<mirror>` ACTIVE, `.paused` PAUSED, `.removed` REMOVED. Returns it.
   */
  syncEdgeState(edge: MirrorEdge, topic: string): EdgeTopicState | undefined {
    const name = this.node(edge.to).cluster.controller.image.topic(topic)?.configs.get("mirror.name");
    const state: EdgeTopicState | undefined =
      name === edge.mirror
        ? "ACTIVE"
        : name === `${edge.mirror}.paused`
          ? "PAUSED"
          : name === `${edge.mirror}.removed`
            ? "REMOVED"
            : undefined;
    if (state !== undefined) this.setEdgeState(edge, topic, state);
    return state ?? this.edgeState(edge, topic);
  }

  /**
   * The deleted source topic that the edge's copy of `topic` belongs to, when the source deleted it (and
   * maybe created it again under the name): that copy only fails, and is checked by `checkOrphans`.
   */
  orphaned(edge: MirrorEdge, topic: string): DeletedIncarnation | undefined {
    return (
      orphanedIncarnation(
        this.node(edge.from).cluster,
        this.node(edge.to).cluster,
        topic,
        this.model.incarnations,
      ) ?? this.failedOnDeletion(edge, topic)
    );
  }

  /**
   * The deleted source topic a copy failed for good on (SOURCE_TOPIC_DELETED) when that topic has since
   * come back with its id (a failback onto the source restored it from another copy): the copy stays
   * FAILED with what it held, until the operator removes the topic and adds it again (the engine does not
   * revive a FAILED-for-good partition by itself), so it is still that deleted topic's copy, not one of
   * the restored topic (soak `recreated-source` fan-out FC_SEED=235 x20 and FC_SEED=260 x20).
   */
  private failedOnDeletion(edge: MirrorEdge, topic: string): DeletedIncarnation | undefined {
    const dest = this.node(edge.to);
    const copyId = dest.cluster.controller.image.topic(topic)?.topicId;
    const incarnation = copyId === undefined ? undefined : this.model.incarnations.get(copyId);
    if (!incarnation || this.edgeState(edge, topic) === "REMOVED") return undefined;
    const views = dest.mirroring.coordinators.describe(edge.mirror).filter((v) => v.key.topic === topic);
    const failedForGood = views.every(
      (v) => v.state === "FAILED" && v.retryAttempt === -1 && v.errorMessage === SOURCE_TOPIC_DELETED,
    );
    return views.length > 0 && failedForGood ? incarnation : undefined;
  }

  /** Checks every orphaned copy (see `checkOrphanedCopy`): it holds nothing but its deleted topic's batches. */
  checkOrphans(): void {
    for (const { edge, topic } of this.edgeTopics()) {
      const incarnation = this.orphaned(edge, topic);
      if (!incarnation) continue;
      const failedOver = this.edgeState(edge, topic) === "REMOVED";
      const partitions = this.node(edge.to).cluster.controller.image.topic(topic)?.partitions.length ?? 0;
      for (let p = 0; p < partitions; p++) {
        let localFrom = failedOver ? this.model.stoppedEnds.get(`${edge.mirror}\0${topic}\0${p}`) : undefined;
        // Failed over, the copy may have joined a mirror again since (a failback onto another hop of a
        // chain): from where its log was cut then, it is that source's copy, no longer the deleted topic's
        // (soak `recreated-source` chain FC_SEED=229 x20).
        const f = failedOver
          ? [...this.model.failovers]
              .reverse()
              .find((x) => x.mirror === edge.mirror && x.topic === topic && x.partition === p)
          : undefined;
        if (f?.rewrittenFrom !== undefined && (localFrom === undefined || f.rewrittenFrom < localFrom))
          localFrom = f.rewrittenFrom;
        this.report(
          checkOrphanedCopy(
            `${edge.from}->${edge.to}`,
            this.node(edge.to).cluster,
            incarnation,
            edge.mirror,
            p,
            {
              failedOver,
              ...(localFrom === undefined ? {} : { localFrom }),
            },
          ),
        );
      }
    }
  }

  /** Whether `node` holds `topic` (created there, or added by one of its mirrors). */
  holds(node: string, topic: string): boolean {
    if (this.model.topics.get(topic)?.root === node) return true;
    return this.edges.some((e) => e.to === node && this.edgeState(e, topic) !== undefined);
  }

  /** Whether `node` may write `topic`: it holds it and none of its mirrors copies it in. */
  writable(node: string, topic: string): boolean {
    if (!this.holds(node, topic)) return false;
    return !this.edges.some((e) => {
      const s = e.to === node ? this.edgeState(e, topic) : undefined;
      return s === "ACTIVE" || s === "PAUSED";
    });
  }

  /** (node, topic) pairs that may be written now, in a stable order. */
  writableTargets(): { node: string; topic: string }[] {
    const out: { node: string; topic: string }[] = [];
    for (const node of this.world.spec.clusters) {
      for (const topic of this.model.topics.keys()) if (this.writable(node, topic)) out.push({ node, topic });
    }
    return out;
  }

  /** (edge, topic) pairs with a requested state, in a stable order. */
  edgeTopics(filter?: (state: EdgeTopicState) => boolean): { edge: MirrorEdge; topic: string }[] {
    const out: { edge: MirrorEdge; topic: string }[] = [];
    for (const edge of this.edges) {
      for (const [topic, state] of this.model.edgeTopics.get(edge.mirror) ?? []) {
        if (!filter || filter(state)) out.push({ edge, topic });
      }
    }
    return out;
  }

  /** Creates a topic on a root cluster and records it in the model. */
  async createTopic(root: string, name: string, partitions: number, compacted: boolean): Promise<void> {
    const configs = compacted ? [{ name: "cleanup.policy", value: "compact" }] : [];
    const minIsr = this.options.minInsyncReplicas;
    if (minIsr !== undefined) configs.push({ name: "min.insync.replicas", value: String(minIsr) });
    await this.world.time.run(
      this.node(root)
        .kafka.admin()
        .createTopics({
          topics: [{ topic: name, numPartitions: partitions, replicationFactor: 3, configEntries: configs }],
        }),
    );
    this.model.topics.set(name, { name, root, partitions, compacted });
  }

  /** A fresh topic name. */
  nextTopicName(): string {
    return `t${++this.topicCount}`;
  }

  /** A fresh transactional id. */
  nextTransactionalId(node: string): string {
    return `txn-${node}-${++this.txnCount}`;
  }

  /** Adds `topic` to every edge whose source holds it, hop by hop (chains), unless already added. */
  async addAlongEdges(topic: string): Promise<void> {
    let progress = true;
    while (progress) {
      progress = false;
      for (const edge of this.edges) {
        if (this.edgeState(edge, topic) !== undefined || !this.holds(edge.from, topic)) continue;
        if (this.holds(edge.to, topic)) continue;
        try {
          await this.world.time.run(
            this.node(edge.to).mirroring.admin.addTopics(edge.mirror, topic),
            120_000,
          );
          this.setEdgeState(edge, topic, "ACTIVE");
          this.liveness.expect({
            invariant: "add-mirrors",
            what: `add ${edge.mirror} ${topic}`,
            edge,
            topic,
            targets: MIRRORING_STATES,
            needsSource: true,
            catchUp: true,
          });
          progress = true;
        } catch (error) {
          this.step(`add ${topic} on ${edge.mirror} refused: ${String(error)}`);
        }
      }
    }
  }

  /** The idempotent producer of `node` (created and connected on first use). */
  async producer(node: string): Promise<Producer> {
    let p = this.producers.get(node);
    if (!p) {
      p = this.node(node).kafka.producer({ idempotent: true, retry: { retries: 3, initialRetryTime: 100 } });
      await p.connect();
      this.producers.set(node, p);
    }
    return p;
  }

  /** True when every ACTIVE edge partition is MIRRORING on its destination. */
  allMirroring(): boolean {
    for (const { edge, topic } of this.edgeTopics((s) => s === "ACTIVE")) {
      const rows = this.node(edge.to)
        .mirroring.coordinators.describe(edge.mirror)
        .filter((v) => v.key.topic === topic);
      const partitions = this.node(edge.from).cluster.controller.image.topic(topic)?.partitions.length ?? 0;
      if (rows.length < partitions || !rows.every((r) => r.state === "MIRRORING")) return false;
    }
    return true;
  }
}
