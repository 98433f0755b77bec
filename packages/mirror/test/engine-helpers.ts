import {
  EmbeddedKafka,
  EventLoopScheduler,
  KafkaCluster,
  SeededRandom,
  SystemClock,
} from "@cluster-mirror/cluster";
import type { AddTopicsOptions } from "../src/admin/mirror-admin";
import { ClusterMirroring } from "../src/cluster-mirroring";
import type { SourceCluster, SourceConnector } from "../src/ports";
import { EmbeddedSourceConnector, EmbeddedSourceRegistry } from "../src/source/embedded-source-registry";

/** One embedded cluster with mirroring, registered as `<name>:9092`. */
export interface EngineCluster {
  name: string;
  bootstrap: string;
  cluster: KafkaCluster;
  mirroring: ClusterMirroring;
  kafka: EmbeddedKafka;
}

/**
 * Two in-memory clusters on the real event loop, each with mirroring (so either can mirror from the
 * other): `source` (1 broker) and `dest` (3 brokers), at the addresses of `registry`. `close()` stops both. `wrapSources` wraps the
 * connector both engines reach their sources through (to make a source hang, say).
 */
export function twoEngineClusters(
  options: { wrapSources?: (connector: SourceConnector) => SourceConnector } = {},
): { source: EngineCluster; dest: EngineCluster; registry: EmbeddedSourceRegistry; close: () => void } {
  const clock = new SystemClock();
  const scheduler = new EventLoopScheduler({ keepAlive: false });
  const registry = new EmbeddedSourceRegistry();
  const embedded = new EmbeddedSourceConnector(registry);
  const connector = options.wrapSources ? options.wrapSources(embedded) : embedded;
  const start = (name: string, brokers: number, seed: number): EngineCluster => {
    const cluster = KafkaCluster.start({ brokers, clock, scheduler, random: new SeededRandom(seed) });
    const mirroring = ClusterMirroring.start({
      cluster,
      sources: connector,
      random: new SeededRandom(seed + 1),
      numStatePartitions: 2,
      warn: () => {},
    });
    const bootstrap = `${name}:9092`;
    registry.register(bootstrap, cluster, mirroring.asSource());
    return { name, bootstrap, cluster, mirroring, kafka: new EmbeddedKafka(cluster, { clientId: name }) };
  };
  const source = start("source", 1, 10);
  const dest = start("dest", 3, 20);
  return {
    source,
    dest,
    registry,
    close: () => {
      for (const c of [dest, source]) {
        c.mirroring.close();
        c.cluster.close();
      }
    },
  };
}

/** Creates `topic` on `c` with `partitions` partitions (replication factor = brokers). */
export async function createTopic(c: EngineCluster, topic: string, partitions: number): Promise<void> {
  await c.kafka.admin().createTopics({
    topics: [{ topic, numPartitions: partitions, replicationFactor: c.cluster.runningBrokers().length }],
  });
}

/** Writes `count` messages to one partition of `topic` on `c` (idempotent producer). */
export async function produce(
  c: EngineCluster,
  topic: string,
  partition: number,
  count: number,
): Promise<void> {
  const producer = c.kafka.producer({ idempotent: true });
  await producer.connect();
  await producer.send({
    topic,
    messages: Array.from({ length: count }, (_, i) => ({ key: `k${i}`, value: `v${i}`, partition })),
  });
  await producer.disconnect();
}

/**
 * `addTopics`, retried while the coordinators of a just-started cluster are still loading (the retriable
 * COORDINATOR_NOT_AVAILABLE right after start; another change makes addTopics wait for the load itself).
 */
export async function addTopicsWhenReady(
  c: EngineCluster,
  mirror: string,
  regex: string,
  options?: AddTopicsOptions,
): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await c.mirroring.admin.addTopics(mirror, regex, options);
      return;
    } catch (error) {
      const retriable = (error as { retriable?: boolean }).retriable === true;
      if (!retriable || attempt >= 100) throw error;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

/**
 * A connector wrapper (for `twoEngineClusters({ wrapSources })`) whose connections to `bootstrap` answer
 * `method` with `impl` (given the real source and the call's arguments); every other call is the real one.
 */
export function overrideSourceMethod<M extends keyof SourceCluster>(
  bootstrap: string,
  method: M,
  impl: (real: SourceCluster, ...args: unknown[]) => unknown,
): (inner: SourceConnector) => SourceConnector {
  return (inner) => ({
    connect: (mirror, configs, options) => {
      const source = inner.connect(mirror, configs, options);
      if (configs["bootstrap.servers"] !== bootstrap) return source;
      return new Proxy(source, {
        get(target, prop, receiver) {
          if (prop !== method) return Reflect.get(target, prop, receiver);
          return (...args: unknown[]) => impl(target, ...args);
        },
      });
    },
  });
}
