import {
  type CommittedOffset,
  EmbeddedKafka,
  KafkaCluster,
  ManualClock,
  MemoryDataDir,
  type MetadataRecord,
  type Scheduler,
  SeededRandom,
  type TransactionState,
} from "@cluster-mirror/cluster";
import { ClusterMirroring, EmbeddedSourceConnector, EmbeddedSourceRegistry } from "@cluster-mirror/mirror";
import { Link, LinkedSourceConnector, type LinkOptions } from "./link";
import { SeededScheduler } from "./seeded-scheduler";
import { VirtualTime } from "./virtual-time";

/** A mirror edge: `to` runs a mirror named `mirror` that copies topics from `from`. */
export interface MirrorEdge {
  from: string;
  to: string;
  /** The mirror's name on `to`: `<to>-from-<from>`. */
  mirror: string;
}

/** The shape of a simulated deployment: clusters and who mirrors whom. */
export interface TopologySpec {
  /** Name for reports (`active-passive`, `chain-3`...). */
  name: string;
  clusters: string[];
  /** Initial mirror edges (failback adds reverse edges at run time). */
  edges: { from: string; to: string }[];
  /** Brokers per cluster (default 3). */
  brokers?: number;
}

/** One simulated cluster with mirroring running inside it, registered as a source at `<name>:9092`. */
export interface SimNode {
  name: string;
  bootstrap: string;
  cluster: KafkaCluster;
  mirroring: ClusterMirroring;
  kafka: EmbeddedKafka;
}

/** What a node keeps on its disks across a kill (what `startPersistentCluster` keeps in files). */
interface NodeDisks {
  /** Each broker's data dir, by broker id. */
  dataDirs: MemoryDataDir[];
  /** The last stored committed offsets of each group. */
  groupOffsets: Map<string, Map<string, CommittedOffset>>;
  /** The last stored transaction state (undefined: none stored yet). */
  transactions: TransactionState | undefined;
}

/**
 * Recovers a new process's cluster from what its node stored, before its brokers start, in
 * `startPersistentCluster`'s order: the metadata log, then the group offsets (a topic deleted before the
 * kill whose offsets store did not follow loses them now), then the transaction state.
 */
function recover(cluster: KafkaCluster, records: readonly MetadataRecord[], disks: NodeDisks): void {
  if (records.length > 0) cluster.controller.replay(records);
  for (const [groupId, offsets] of disks.groupOffsets) cluster.groups.loadOffsets(groupId, offsets);
  const replayedNames = new Set(records.flatMap((r) => (r.type === "Topic" ? [r.name] : [])));
  for (const topic of replayedNames) {
    if (cluster.controller.image.topic(topic) === undefined) cluster.groups.onTopicDeleted(topic);
  }
  if (disks.transactions) cluster.loadTransactionState(disks.transactions);
}

/**
 * The world's scheduler as one node's process uses it (its cluster, coordinators, mirror engine). A kill -9
 * ends every timer of the process: a task it queued before the kill never runs (what was due is lost with
 * it, whatever `close()` did about it). A task it schedules after the kill is skipped too and reported
 * (`onAfterKill`): the process was not stopped whole, and what it did then no real node could have done.
 * Same tasks, same order as the world's scheduler: the seeded interleaving is unchanged.
 */
function processScheduler(
  scheduler: Scheduler,
  process: { alive: boolean },
  onAfterKill: () => void,
): Scheduler {
  return {
    schedule: (task, delayMs) => {
      const queuedAlive = process.alive;
      return scheduler.schedule(() => {
        if (process.alive) task();
        else if (!queuedAlive) onAfterKill();
      }, delayMs);
    },
  };
}

/** The mirror name of the edge `from -> to`. */
export function mirrorName(from: string, to: string): string {
  return `${to}-from-${from}`;
}

/**
 * A deployment of embedded clusters on one `ManualClock` and one `SeededScheduler`, each running
 * `ClusterMirroring` and reaching its sources through its own `Link`s. The seed fixes the interleaving,
 * the replica placements, ids and jitters: the same seed gives the same run.
 */
export class SimWorld {
  readonly clock: ManualClock;
  readonly scheduler: SeededScheduler;
  readonly time: VirtualTime;
  readonly registry = new EmbeddedSourceRegistry();
  readonly nodes = new Map<string, SimNode>();
  private readonly links = new Map<string, Link>();
  /** Hear every change of a link's behaviour (see `Link.onChange`), with the link's ends. */
  readonly linkListeners = new Set<(from: string, to: string, why: string) => void>();
  /** Metadata records a broker failed to apply (a bug, or a storage fault inside a leader change). */
  readonly metadataFailures: string[] = [];
  /** Scheduled broker tasks that threw (`broker.task_failed`): reported as violations. */
  readonly taskFailures: string[] = [];
  /** Tasks a killed node's process scheduled after its kill (see `processScheduler`): each names its node. */
  readonly tasksAfterKill: string[] = [];
  /** Hear each transaction state a node stored, right after it is stored (a fault may kill the node there). */
  readonly transactionStoreListeners = new Set<(node: string, state: TransactionState) => void>();

  /** Per cluster: what its node keeps on disk across a kill (see `restartNode`). */
  private readonly disks = new Map<string, NodeDisks>();
  /** Per cluster: how its node reaches its sources (its links outlive its process). */
  private readonly connectors = new Map<string, LinkedSourceConnector>();
  /** Per cluster: its node's process, ended by a kill (see `restartNode`). */
  private readonly processes = new Map<string, { alive: boolean; incarnation: number }>();

  constructor(
    readonly spec: TopologySpec,
    readonly seed: number,
    linkOptions: LinkOptions = {},
    /** Kafka's broker config min.insync.replicas on every cluster (see `SimulationOptions`). */
    readonly minInsyncReplicas?: number,
  ) {
    this.clock = new ManualClock(1_700_000_000_000);
    this.scheduler = new SeededScheduler(this.clock, { seed });
    this.time = new VirtualTime(this.clock, this.scheduler);
    const connector = new EmbeddedSourceConnector(this.registry);
    spec.clusters.forEach((name, i) => {
      const linkRandom = new SeededRandom(seed * 1000 + 500 + i);
      const sources = new LinkedSourceConnector(
        connector,
        (bootstrap) => {
          const from = bootstrap.split(":")[0] ?? bootstrap;
          const key = `${from}->${name}`;
          let link = this.links.get(key);
          if (!link) {
            link = new Link(key, this.scheduler, linkRandom, linkOptions);
            this.watchLink(link, from, name);
            this.links.set(key, link);
          }
          return link;
        },
        (bootstrap) => this.registry.resolve(bootstrap)?.cluster,
      );
      this.connectors.set(name, sources);
      const dataDirs = Array.from({ length: spec.brokers ?? 3 }, () => new MemoryDataDir());
      this.disks.set(name, { dataDirs, groupOffsets: new Map(), transactions: undefined });
      this.startNode(name, 0);
    });
  }

  /**
   * Kills the node of cluster `name` (kill -9 of its process: every broker, the controller, the
   * coordinators and the mirror engine at once) and starts a new process on its disks, as a restarted
   * machine does. What survives is what a node stores (see `startPersistentCluster`): the metadata log,
   * each broker's data dir, the last stored group offsets and transaction state, the cluster id
   * (meta.properties). `prepare` runs on the new cluster after its recovery, before its brokers start (to
   * install watches). Returns the new node, registered at the same address.
   */
  restartNode(name: string, prepare: (cluster: KafkaCluster) => void): SimNode {
    const old = this.node(name);
    const process = this.processes.get(name)!;
    // The instant of the kill: what is stored now is all the new process finds.
    const records = old.cluster.controller.metadataLog().map((e) => e.record);
    // A slow disk stays slow, and a slow network slow, across the restart: they are not the process's.
    const brokers = this.spec.brokers ?? 3;
    const diskLatencies = Array.from({ length: brokers }, (_, b) => old.cluster.diskLatency(b));
    const replicationLatency = old.cluster.replicationLatency();
    process.alive = false;
    // Nothing of the old process may run again. Its controller dies with it: no election reacts to the
    // brokers' deaths below (a broker that outlived another by a moment would lead its partitions). Crashed
    // (no clean shutdown: no checkpoint is written, no leadership handed over), then closed, which finds no
    // broker to stop and only cancels the coordinators' timers; its stores were cut off above, so nothing
    // it does now is kept.
    old.cluster.controller.setAvailable(false);
    for (const b of old.cluster.runningBrokers()) old.cluster.crashBroker(b);
    old.mirroring.close();
    old.cluster.close();
    return this.startNode(name, process.incarnation + 1, {
      clusterId: old.cluster.clusterId,
      records,
      prepare: (cluster) => {
        for (const [b, ms] of diskLatencies.entries()) cluster.setDiskLatency(b, ms);
        cluster.setReplicationLatency(replicationLatency);
        prepare(cluster);
      },
    });
  }

  /** Broker `brokerId`'s disk on the node of `name` (it outlives the node's processes); see `powerLoss`. */
  dataDir(name: string, brokerId: number): MemoryDataDir | undefined {
    return this.disks.get(name)?.dataDirs[brokerId];
  }

  /** How many times the node of `name` was restarted (see `restartNode`). */
  restarts(name: string): number {
    return this.processes.get(name)?.incarnation ?? 0;
  }

  /**
   * Starts the process of cluster `name` on its disks: incarnation 0 is the first start; later ones recover
   * from `recovered` as `startPersistentCluster` does (metadata replay, group offsets, transaction state).
   */
  private startNode(
    name: string,
    incarnation: number,
    recovered?: {
      clusterId: string;
      records: readonly MetadataRecord[];
      prepare: (cluster: KafkaCluster) => void;
    },
  ): SimNode {
    const i = this.spec.clusters.indexOf(name);
    const disks = this.disks.get(name)!;
    const process = { alive: true, incarnation };
    this.processes.set(name, process);
    // Incarnation 0 keeps the seeds a world without restarts always had.
    const seed = (base: number) => base + 1_000_000 * incarnation;
    const brokers = this.spec.brokers ?? 3;
    const cluster = new KafkaCluster({
      brokers,
      clock: this.clock,
      scheduler: processScheduler(this.scheduler, process, () => this.tasksAfterKill.push(name)),
      random: new SeededRandom(seed(this.seed * 1000 + i)),
      replicaLagTimeMaxMs: 10_000,
      ...(this.minInsyncReplicas !== undefined && { minInsyncReplicas: this.minInsyncReplicas }),
      memoryDataDirs: disks.dataDirs,
      ...(recovered && { clusterId: recovered.clusterId }),
      // The node's stores, written synchronously before the change is answered (as the cli's fsynced files).
      onGroupOffsetsChanged: (groupId, offsets) => {
        if (process.alive) disks.groupOffsets.set(groupId, structuredClone(new Map(offsets)));
      },
      onTransactionStateChanged: (state) => {
        if (!process.alive) return;
        disks.transactions = structuredClone(state);
        for (const listener of [...this.transactionStoreListeners]) listener(name, state);
      },
      logger: {
        warn: (fields, message) => {
          if (fields.event === "metadata.apply_failed") this.metadataFailures.push(`${name}: ${message}`);
          // A broker task that threw (a bug: storage errors are handled inside) runs again, reported.
          if (fields.event === "broker.task_failed") this.taskFailures.push(`${name}: ${message}`);
          console.warn(message);
        },
      },
    });
    if (recovered) recover(cluster, recovered.records, disks);
    recovered?.prepare(cluster);
    for (let id = 0; id < brokers; id++) cluster.startBroker(id);
    const mirroring = ClusterMirroring.start({
      cluster,
      sources: this.connectors.get(name)!,
      random: new SeededRandom(seed(this.seed * 1000 + 100 + i)),
      numStatePartitions: 4,
    });
    const bootstrap = `${name}:9092`;
    // Each cluster is its own deployment and the links between them are networks: fetched bytes are
    // copied, as a socket read copies them. Zero-copy views would let a fault on one cluster's stored
    // bytes (a corrupt replica) change another cluster's copy, which no real deployment can do.
    this.registry.register(bootstrap, cluster, { ...mirroring.asSource(), copyOnFetch: true });
    const node: SimNode = {
      name,
      bootstrap,
      cluster,
      mirroring,
      // The workload's clients are applications, not part of the node's process: their waits outlive it.
      kafka: new EmbeddedKafka(cluster, {
        clientId: `app-${name}`,
        random: new SeededRandom(seed(this.seed + i)),
        scheduler: this.scheduler,
      }),
    };
    this.nodes.set(name, node);
    return node;
  }

  /** The node called `name`. */
  node(name: string): SimNode {
    const n = this.nodes.get(name);
    if (!n) throw new Error(`no cluster '${name}' in topology ${this.spec.name}`);
    return n;
  }

  /** The link that `to`'s mirrors use to reach `from` (created on first use). */
  link(from: string, to: string): Link {
    const key = `${from}->${to}`;
    let link = this.links.get(key);
    if (!link) {
      link = new Link(key, this.scheduler, new SeededRandom(this.seed + key.length));
      this.watchLink(link, from, to);
      this.links.set(key, link);
    }
    return link;
  }

  private watchLink(link: Link, from: string, to: string): void {
    link.onChange = (why) => {
      for (const l of this.linkListeners) l(from, to, why);
    };
  }

  /** Every link created so far. */
  allLinks(): Link[] {
    return [...this.links.values()];
  }
}

/** A -> B. */
export const activePassive = (): TopologySpec => ({
  name: "active-passive",
  clusters: ["a", "b"],
  edges: [{ from: "a", to: "b" }],
});

/** A -> B and A -> C, each destination with its own producer state. */
export const fanOut = (): TopologySpec => ({
  name: "fan-out",
  clusters: ["a", "b", "c"],
  edges: [
    { from: "a", to: "b" },
    { from: "a", to: "c" },
  ],
});

/** A -> C and B -> C, different topics. */
export const fanIn = (): TopologySpec => ({
  name: "fan-in",
  clusters: ["a", "b", "c"],
  edges: [
    { from: "a", to: "c" },
    { from: "b", to: "c" },
  ],
});

/** c0 -> c1 -> ... -> c(n-1): each cluster mirrors its predecessor's mirror topics. */
export function chain(length: number): TopologySpec {
  if (length < 2) throw new RangeError(`a chain needs at least 2 clusters, got ${length}`);
  const clusters = Array.from({ length }, (_, i) => `c${i}`);
  return {
    name: `chain-${length}`,
    clusters,
    edges: clusters.slice(1).map((to, i) => ({ from: clusters[i]!, to })),
  };
}

/** A mix: A -> B -> C (chain) plus A -> D (fan-out) and E -> D (fan-in). */
export const mixed = (): TopologySpec => ({
  name: "mixed",
  clusters: ["a", "b", "c", "d", "e"],
  edges: [
    { from: "a", to: "b" },
    { from: "b", to: "c" },
    { from: "a", to: "d" },
    { from: "e", to: "d" },
  ],
});
