import { EmbeddedKafka, KafkaCluster, ManualClock, SeededRandom } from "@cluster-mirror/cluster";
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

  constructor(
    readonly spec: TopologySpec,
    readonly seed: number,
    linkOptions: LinkOptions = {},
  ) {
    this.clock = new ManualClock(1_700_000_000_000);
    this.scheduler = new SeededScheduler(this.clock, { seed });
    this.time = new VirtualTime(this.clock, this.scheduler);
    const connector = new EmbeddedSourceConnector(this.registry);
    spec.clusters.forEach((name, i) => {
      const cluster = KafkaCluster.start({
        brokers: spec.brokers ?? 3,
        clock: this.clock,
        scheduler: this.scheduler,
        random: new SeededRandom(seed * 1000 + i),
        replicaLagTimeMaxMs: 10_000,
        logger: {
          warn: (fields, message) => {
            if (fields.event === "metadata.apply_failed") this.metadataFailures.push(`${name}: ${message}`);
            // A broker task that threw (a bug: storage errors are handled inside) runs again, reported.
            if (fields.event === "broker.task_failed") this.taskFailures.push(`${name}: ${message}`);
            console.warn(message);
          },
        },
      });
      const linkRandom = new SeededRandom(seed * 1000 + 500 + i);
      const sources = new LinkedSourceConnector(connector, (bootstrap) => {
        const from = bootstrap.split(":")[0] ?? bootstrap;
        const key = `${from}->${name}`;
        let link = this.links.get(key);
        if (!link) {
          link = new Link(key, this.scheduler, linkRandom, linkOptions);
          this.watchLink(link, from, name);
          this.links.set(key, link);
        }
        return link;
      });
      const mirroring = ClusterMirroring.start({
        cluster,
        sources,
        random: new SeededRandom(seed * 1000 + 100 + i),
        numStatePartitions: 4,
      });
      const bootstrap = `${name}:9092`;
      // Each cluster is its own deployment and the links between them are networks: fetched bytes are
      // copied, as a socket read copies them. Zero-copy views would let a fault on one cluster's stored
      // bytes (a corrupt replica) change another cluster's copy, which no real deployment can do.
      this.registry.register(bootstrap, cluster, { ...mirroring.asSource(), copyOnFetch: true });
      this.nodes.set(name, {
        name,
        bootstrap,
        cluster,
        mirroring,
        kafka: new EmbeddedKafka(cluster, { clientId: `app-${name}`, random: new SeededRandom(seed + i) }),
      });
    });
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
