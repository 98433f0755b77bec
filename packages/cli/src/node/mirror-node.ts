import * as crypto from "node:crypto";
import * as path from "node:path";
import {
  type Clock,
  DataDirLock,
  EmbeddedKafka,
  EventLoopScheduler,
  type KafkaCluster,
  type Scheduler,
  SeededRandom,
  SystemClock,
} from "@cluster-mirror/cluster";
import { EmbeddedOrKafkaSourceConnector } from "@cluster-mirror/kafkajs";
import {
  ClusterMirroring,
  EmbeddedSourceRegistry,
  type MirrorWarningKind,
  type RetryBackoffOptions,
} from "@cluster-mirror/mirror";
import { KafkaError } from "@cluster-mirror/protocol";
import { type PersistentCluster, startPersistentCluster } from "../persistence/persistent-cluster";
import { ADMIN_PRINCIPAL, NODE_PRINCIPAL } from "../security/admin-auth";

/** One embedded source cluster to start next to the destination (`--source NAME=BROKERS`). */
export interface SourceSpec {
  name: string;
  brokers: number;
}

/** Settings of a node: the destination cluster, optional embedded sources, time and seeds. */
export interface MirrorNodeOptions {
  /** The destination's name: it answers as `<name>:9092` to clusters that mirror from it (failback). */
  name: string;
  brokers: number;
  /** Root data dir: the destination in it, each source in `sources/<name>`. Omitted: in memory. */
  dataDir?: string;
  sources: readonly SourceSpec[];
  /**
   * Seed of every SeededRandom (cluster ids of new data dirs, topic ids, jitter), for a test or the demo that
   * must repeat itself. Omitted: a random seed per start, so two fresh data dirs never share a cluster id
   * (a restarted cluster keeps its id from meta.properties either way).
   */
  seed?: number;
  /** `mirror.topic.num.partitions` when `__mirror_state` is created (default 50; an existing topic keeps its count). */
  numStatePartitions?: number;
  /** The FAILED retry backoff of every cluster's mirrors (`--failed-retry-max-attempts`); default the engine's. */
  retry?: RetryBackoffOptions;
  fsync?: boolean;
  /** Default: SystemClock (real time). */
  clock?: Clock;
  /** Default: EventLoopScheduler (real time). */
  scheduler?: Scheduler;
  /**
   * Enforce ACLs in every cluster of the node (Kafka's StandardAuthorizer semantics: without a matching
   * ALLOW, only super users may act). The admin token's principal and the node's mirroring engine are the
   * super users. Default false, as a Kafka broker without `authorizer.class.name`.
   */
  enforceAcls?: boolean;
  /** Sync errors and other warnings of the mirroring engine, with their kind where known. */
  warn?: (cluster: string, message: string, kind?: MirrorWarningKind) => void;
}

/** One running cluster of the node. */
export interface NodeCluster {
  name: string;
  /** Address in the embedded source registry, `<name>:9092`. */
  bootstrap: string;
  cluster: KafkaCluster;
  mirroring: ClusterMirroring;
  /** kafkajs-shaped clients of this cluster. */
  kafka: EmbeddedKafka;
  /** Metadata records recovered from disk at start. */
  recoveredRecords: number;
}

/** No cluster of this node has the requested name (HTTP 404). */
export class UnknownClusterError extends KafkaError {
  constructor(name: string, known: readonly string[]) {
    super(
      "UNKNOWN_CLUSTER",
      -1,
      false,
      `This node runs no cluster named '${name}' (it runs: ${known.join(", ")}). Pass one of those to --cluster, or start the node with --source ${name}=3.`,
    );
  }
}

/**
 * A cluster-mirror node: the destination cluster with mirroring, plus embedded source clusters (each with
 * mirroring too, so it can fail back), all registered in one embedded source registry as `<name>:9092`,
 * each persisted under its own data dir so a restart recovers everything.
 */
export class MirrorNode {
  readonly destination: NodeCluster;
  readonly sources: ReadonlyMap<string, NodeCluster>;
  readonly registry = new EmbeddedSourceRegistry();
  readonly clock: Clock;
  readonly scheduler: Scheduler;
  /** The seed this start used (the given one, or the random one drawn for it): logged so a run can repeat. */
  readonly seed: number;
  private readonly persistent: PersistentCluster[] = [];
  private readonly mirrorings: ClusterMirroring[] = [];
  /** Embedded sources by `<name>:9092`, any other `bootstrap.servers` is a real Kafka cluster (kafkajs). */
  private readonly connector: EmbeddedOrKafkaSourceConnector;
  private closed = false;
  /** Aborted when the node begins to stop: long requests in flight end at once (`stopRequests`). */
  private readonly stoppingController = new AbortController();

  private constructor(options: MirrorNodeOptions) {
    this.clock = options.clock ?? new SystemClock();
    this.scheduler = options.scheduler ?? new EventLoopScheduler();
    const connector = new EmbeddedOrKafkaSourceConnector(this.registry, {
      // Only for a mirror that exists: the source a `--create` probes and then gives up on would log its
      // connection error here too, under a mirror that was never created (the create's error says it).
      warn: (message, mirror) => {
        if (this.clusters().some((c) => c.cluster.controller.image.mirrors.has(mirror)))
          options.warn?.(options.name, message, "source_connection");
      },
    });
    this.connector = connector;
    // The node's entry, not the engine, draws the seed: the engine only ever sees a SeededRandom.
    const seed = options.seed ?? crypto.randomInt(0, 2 ** 31);
    this.seed = seed;
    // The root dir is locked before anything in it (the sources' dirs included) is read or written, so a
    // second node on it fails here and changes nothing; the destination's cluster releases it on close.
    const rootLock = options.dataDir === undefined ? undefined : DataDirLock.acquire(options.dataDir);
    const start = (
      name: string,
      brokers: number,
      dataDir: string | undefined,
      index: number,
      dataDirLock?: DataDirLock,
    ) => {
      const pc = startPersistentCluster({
        dataDir,
        dataDirLock,
        brokers,
        clock: this.clock,
        scheduler: this.scheduler,
        random: new SeededRandom(seed * 1000 + index),
        fsync: options.fsync,
      });
      this.persistent.push(pc);
      if (options.enforceAcls)
        pc.cluster.authorizer.configure({ enabled: true, superUsers: [ADMIN_PRINCIPAL, NODE_PRINCIPAL] });
      const mirroring = ClusterMirroring.start({
        cluster: pc.cluster,
        sources: connector,
        random: new SeededRandom(seed * 1000 + 500 + index),
        numStatePartitions: options.numStatePartitions,
        ...(options.retry ? { retry: options.retry } : {}),
        warn: (message, kind) => options.warn?.(name, message, kind),
      });
      this.mirrorings.push(mirroring);
      const bootstrap = `${name}:9092`;
      // Mirrors of this node fetching from this cluster present the node's own (super user) principal.
      this.registry.register(bootstrap, pc.cluster, { ...mirroring.asSource(), principal: NODE_PRINCIPAL });
      const node: NodeCluster = {
        name,
        bootstrap,
        cluster: pc.cluster,
        mirroring,
        kafka: new EmbeddedKafka(pc.cluster, { clientId: `cluster-mirror-${name}` }),
        recoveredRecords: pc.recoveredRecords,
      };
      return node;
    };
    try {
      const sources = new Map<string, NodeCluster>();
      for (const [i, s] of options.sources.entries()) {
        const dir = options.dataDir ? path.join(options.dataDir, "sources", s.name) : undefined;
        sources.set(s.name, start(s.name, s.brokers, dir, i + 1));
      }
      this.sources = sources;
      this.destination = start(options.name, options.brokers, options.dataDir, 0, rootLock);
    } catch (error) {
      // Stop what started (its timers would keep the process alive) and release every lock taken.
      for (const m of this.mirrorings) m.close();
      for (const pc of [...this.persistent].reverse()) pc.close();
      rootLock?.release();
      void this.connector.close();
      throw error;
    }
  }

  /** Starts the sources, then the destination (recovering each from its data dir). */
  static start(options: MirrorNodeOptions): MirrorNode {
    const names = [options.name, ...options.sources.map((s) => s.name)];
    const dup = names.find((n, i) => names.indexOf(n) !== i);
    if (dup !== undefined)
      throw new Error(`cluster name '${dup}' is used twice; give each cluster its own name`);
    return new MirrorNode(options);
  }

  /** Every cluster, destination first. */
  clusters(): NodeCluster[] {
    return [this.destination, ...this.sources.values()];
  }

  /** The named cluster (the destination when `name` is undefined or empty). */
  cluster(name?: string): NodeCluster {
    if (name === undefined || name === "" || name === this.destination.name) return this.destination;
    const found = this.sources.get(name);
    if (!found)
      throw new UnknownClusterError(
        name,
        this.clusters().map((c) => c.name),
      );
    return found;
  }

  /** Fires when the node begins to stop: long requests (promote, consume, wait) end instead of holding it. */
  get stopping(): AbortSignal {
    return this.stoppingController.signal;
  }

  /** Ends the long requests in flight (`stopping`): the first step of a stop, before the servers close. */
  stopRequests(): void {
    this.stoppingController.abort();
  }

  /** Stops mirroring and shuts every broker down cleanly (destination first); idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.stopRequests();
    for (const c of this.clusters()) c.mirroring.close();
    for (const pc of [...this.persistent].reverse()) pc.close();
    void this.connector.close();
  }
}
