import {
  EmbeddedSourceConnector,
  type EmbeddedSourceRegistry,
  type SourceCluster,
  type SourceConnector,
} from "@cluster-mirror/mirror";
import { KafkajsSourceCluster, type KafkajsSourceOptions } from "./kafkajs-source";

/** `SourceConnector` for real Apache Kafka clusters: every mirror's `bootstrap.servers` is a Kafka cluster. */
export class KafkajsSourceConnector implements SourceConnector {
  private readonly open = new Set<KafkajsSourceCluster>();

  constructor(private readonly options: KafkajsSourceOptions = {}) {}

  connect(mirrorName: string, configs: Readonly<Record<string, string>>): SourceCluster {
    const source = new KafkajsSourceCluster(mirrorName, configs, this.options);
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
 * embedded cluster of the registry opens that cluster; any other is a real Kafka cluster reached with kafkajs.
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

  connect(mirrorName: string, configs: Readonly<Record<string, string>>): SourceCluster {
    if (this.registry.resolve(configs["bootstrap.servers"] ?? ""))
      return this.embedded.connect(mirrorName, configs);
    return this.kafka.connect(mirrorName, configs);
  }

  /** Closes the connections to real Kafka sources. */
  close(): Promise<void> {
    return this.kafka.close();
  }
}
