import {
  EmbeddedSourceConnector,
  type EmbeddedSourceRegistry,
  type SourceCluster,
  type SourceConnectOptions,
  type SourceConnector,
} from "@cluster-mirror/mirror";
import { KafkajsSourceCluster, type KafkajsSourceOptions } from "./kafkajs-source";

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
    const current = (): SourceCluster => {
      const found = this.registry.resolve(bootstrap);
      if (found) {
        if (embedded?.cluster !== found.cluster)
          embedded = { cluster: found.cluster, source: this.embedded.connect(mirrorName, configs) };
        return embedded.source;
      }
      kafka ??= this.kafka.connect(mirrorName, configs, options);
      return kafka;
    };
    // Bad settings (bootstrap.servers, security) fail here, at mirror creation, as they would on Kafka.
    if (!this.registry.resolve(bootstrap)) current();
    return {
      clusterId: () => current().clusterId(),
      describeTopics: (options) => current().describeTopics(options),
      partitionLeaders: (topics) => current().partitionLeaders(topics),
      fetch: (request) => current().fetch(request),
      listOffsets: (topic, partition, timestamp, topicId) =>
        current().listOffsets(topic, partition, timestamp, topicId),
      endOffsetForEpoch: (topic, partition, epoch, topicId) =>
        current().endOffsetForEpoch(topic, partition, epoch, topicId),
      listGroupOffsets: (options) => current().listGroupOffsets(options),
      describeAcls: () => current().describeAcls(),
      lastMirrorEpoch: (topicId, partition) => current().lastMirrorEpoch(topicId, partition),
      listMirrors: (options) => current().listMirrors(options),
      canFailBack: () => current().canFailBack?.() ?? true,
      close: async () => {
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
