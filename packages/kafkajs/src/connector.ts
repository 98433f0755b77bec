import {
  EmbeddedSourceConnector,
  type EmbeddedSourceRegistry,
  type SourceCluster,
  type SourceConnectOptions,
  type SourceConnector,
} from "@cluster-mirror/mirror";
import { closedSourceError, KafkajsSourceCluster, type KafkajsSourceOptions } from "./kafkajs-source";

/** `SourceConnector` for real Apache Kafka clusters: every mirror's `bootstrap.servers` is a Kafka cluster. */
export class KafkajsSourceConnector implements SourceConnector {
  private readonly open = new Set<KafkajsSourceCluster>();

  constructor(private readonly options: KafkajsSourceOptions = {}) {}

  connect(
    mirrorName: string,
    configs: Readonly<Record<string, string>>,
    options: SourceConnectOptions = {},
  ): SourceCluster {
    const { warn, ...rest } = this.options;
    const source = new KafkajsSourceCluster(mirrorName, configs, options.quiet ? rest : this.options);
    // Sources closed since (a replaced connection, an alter's trial one) are let go: a long-running node
    // connects again at every config change, and kept, each held its address book and leader map for good.
    for (const old of this.open) if (old.isClosed) this.open.delete(old);
    this.open.add(source);
    return source;
  }

  /** Closes the connections of every source this connector opened. */
  async close(): Promise<void> {
    const sources = [...this.open];
    this.open.clear();
    await Promise.allSettled(sources.map((s) => s.close()));
  }
}

/**
 * The connector a node or an application passes to `ClusterMirroring`: a `bootstrap.servers` that names an
 * embedded cluster of the registry reaches that cluster; any other is a real Kafka cluster reached with
 * kafkajs. The choice is made again on every call, so a mirror whose embedded source registers later (a
 * node recovering its clusters one after another) is not stuck with a network connection to a name.
 */
export class EmbeddedOrKafkaSourceConnector implements SourceConnector {
  private readonly embedded: EmbeddedSourceConnector;
  readonly kafka: KafkajsSourceConnector;

  constructor(
    private readonly registry: EmbeddedSourceRegistry,
    options: KafkajsSourceOptions = {},
  ) {
    this.embedded = new EmbeddedSourceConnector(registry);
    this.kafka = new KafkajsSourceConnector(options);
  }

  connect(
    mirrorName: string,
    configs: Readonly<Record<string, string>>,
    options: SourceConnectOptions = {},
  ): SourceCluster {
    const bootstrap = configs["bootstrap.servers"] ?? "";
    let embedded: { cluster: unknown; source: SourceCluster } | undefined;
    let kafka: SourceCluster | undefined;
    let closed = false;
    const current = (): SourceCluster => {
      const found = this.registry.resolve(bootstrap);
      if (found) {
        // An embedded cluster holds no connection: a closed source of one answers as the library's does.
        if (embedded?.cluster !== found.cluster)
          embedded = { cluster: found.cluster, source: this.embedded.connect(mirrorName, configs) };
        return embedded.source;
      }
      // Closed, it reaches a Kafka source no more (reopened, it was a connection with the replaced settings,
      // its old credentials say, that nothing would ever close): a call fails retriable, as one on a closed
      // kafkajs source, and the engine asks the mirror's current connection.
      if (closed) throw closedSourceError(mirrorName);
      kafka ??= this.kafka.connect(mirrorName, configs, options);
      return kafka;
    };
    // Bad settings (bootstrap.servers, security) fail here, at mirror creation, as they would on Kafka.
    if (!this.registry.resolve(bootstrap)) current();
    // A refusal (a closed source) is the call's rejection, not an exception thrown at the caller.
    const ask = <T>(call: (source: SourceCluster) => Promise<T>): Promise<T> => {
      try {
        return call(current());
      } catch (error) {
        return Promise.reject(error);
      }
    };
    return {
      clusterId: () => ask((s) => s.clusterId()),
      describeTopics: (options) => ask((s) => s.describeTopics(options)),
      partitionLeaders: (topics) => ask((s) => s.partitionLeaders(topics)),
      fetch: (request) => ask((s) => s.fetch(request)),
      listOffsets: (topic, partition, timestamp, topicId) =>
        ask((s) => s.listOffsets(topic, partition, timestamp, topicId)),
      endOffsetForEpoch: (topic, partition, epoch, topicId) =>
        ask((s) => s.endOffsetForEpoch(topic, partition, epoch, topicId)),
      listGroupOffsets: (options) => ask((s) => s.listGroupOffsets(options)),
      describeAcls: () => ask((s) => s.describeAcls()),
      lastMirrorEpoch: (topicId, partition) => ask((s) => s.lastMirrorEpoch(topicId, partition)),
      listMirrors: (options) => ask((s) => s.listMirrors(options)),
      // Closed, answered without opening anything: a Kafka source never can fail back.
      canFailBack: () =>
        closed && this.registry.resolve(bootstrap) === undefined
          ? false
          : (current().canFailBack?.() ?? true),
      close: async () => {
        closed = true;
        const opened = kafka;
        kafka = undefined;
        await opened?.close?.();
      },
    };
  }

  /** Closes the connections to real Kafka sources. */
  close(): Promise<void> {
    return this.kafka.close();
  }
}
