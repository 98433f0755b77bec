import { ClusterError, closestName, type KafkaCluster, shownValue } from "@cluster-mirror/cluster";
import { KafkaError } from "@cluster-mirror/protocol";
import { InvalidMirrorConfigError } from "../admin/errors";
import { SECURITY_PROTOCOL_CONFIG } from "../admin/mirror-config";
import type { SourceCluster, SourceConnector } from "../ports";
import { EmbeddedSourceCluster, type EmbeddedSourceOptions } from "./embedded-source";

/** A mirror's `bootstrap.servers` names no embedded cluster (Kafka's INVALID_CONFIG, code 40). */
export class UnknownBootstrapError extends KafkaError {
  /** The `bootstrap.servers` value that was tried. */
  readonly bootstrapServers: string;

  constructor(mirrorName: string, bootstrapServers: string) {
    super(
      "INVALID_CONFIG",
      40,
      false,
      `no embedded cluster answers at ${bootstrapServers || "(empty bootstrap.servers)"}; register the source with EmbeddedSourceRegistry.register("${bootstrapServers}", cluster) before creating mirror '${mirrorName}', or fix the mirror's bootstrap.servers`,
    );
    this.bootstrapServers = bootstrapServers;
  }
}

interface Registration {
  cluster: KafkaCluster;
  options: EmbeddedSourceOptions;
}

/**
 * The in-process "network" of embedded clusters: which cluster answers at which bootstrap address
 * (`host:port` or any name). One address names one cluster; a cluster may answer at several.
 */
export class EmbeddedSourceRegistry {
  private readonly byBootstrap = new Map<string, Registration>();

  /** Makes `cluster` answer at `bootstrap` (replacing whatever answered there). */
  register(bootstrap: string, cluster: KafkaCluster, options: EmbeddedSourceOptions = {}): void {
    checkRegistration(bootstrap, cluster, options);
    this.byBootstrap.set(bootstrap.trim(), { cluster, options });
  }

  /** Stops answering at `bootstrap` (the cluster is gone, or unreachable for a test). */
  unregister(bootstrap: string): void {
    this.byBootstrap.delete(bootstrap.trim());
  }

  /** The cluster at one address, if any. */
  lookup(bootstrap: string): KafkaCluster | undefined {
    return this.byBootstrap.get(bootstrap.trim())?.cluster;
  }

  /** The registration for the first address of a comma-separated `bootstrap.servers` that answers. */
  resolve(bootstrapServers: string): { cluster: KafkaCluster; options: EmbeddedSourceOptions } | undefined {
    for (const address of bootstrapServers.split(",")) {
      const found = this.byBootstrap.get(address.trim());
      if (found) return found;
    }
    return undefined;
  }
}

/**
 * `SourceConnector` for embedded sources: resolves a mirror's `bootstrap.servers` in the registry and
 * opens an `EmbeddedSourceCluster` on it. Throws `UnknownBootstrapError` when nothing answers.
 */
export class EmbeddedSourceConnector implements SourceConnector {
  constructor(private readonly registry: EmbeddedSourceRegistry) {}

  connect(mirrorName: string, configs: Readonly<Record<string, string>>): SourceCluster {
    const bootstrap = configs["bootstrap.servers"] ?? "";
    const found = this.registry.resolve(bootstrap);
    if (!found) throw new UnknownBootstrapError(mirrorName, bootstrap);
    const protocol = (configs[SECURITY_PROTOCOL_CONFIG] ?? "PLAINTEXT").trim().toUpperCase();
    if (protocol !== "PLAINTEXT") {
      // An embedded cluster is reached in process: a mirror asking for TLS or SASL would silently run without.
      throw new InvalidMirrorConfigError(
        SECURITY_PROTOCOL_CONFIG,
        `${SECURITY_PROTOCOL_CONFIG}=${configs[SECURITY_PROTOCOL_CONFIG]} is not supported for the embedded source ${bootstrap}: embedded clusters are reached in process, without TLS or SASL. Supported: PLAINTEXT (or point bootstrap.servers at a real Kafka cluster).`,
      );
    }
    return new EmbeddedSourceCluster(found.cluster, found.options);
  }
}

/** The keys of `EmbeddedSourceOptions`. */
const SOURCE_OPTIONS = ["lastMirrorEpoch", "listMirrors", "principal", "copyOnFetch"];

/**
 * What `register` is given, checked before it answers for anyone: the engine itself in place of
 * `mirroring.asSource()` (`register("a:9092", a, onA)`) was taken as a source without its own answers, so
 * it reported an LME of -1 for every partition (a failback onto it cuts from the log start instead of the
 * end of the last mirrored epoch) and no mirrors (a mirror loop through it goes unseen).
 */
function checkRegistration(bootstrap: unknown, cluster: unknown, options: unknown): void {
  const invalid = (what: string) =>
    new ClusterError(
      "INVALID_REQUEST",
      `EmbeddedSourceRegistry.register(bootstrap, cluster, options): ${what}`,
    );
  if (typeof bootstrap !== "string" || bootstrap.trim() === "") {
    throw invalid(
      `bootstrap must be the address mirrors name in bootstrap.servers, such as "a:9092"; got ${shownArgument(bootstrap)}`,
    );
  }
  if (typeof (cluster as { runningBrokers?: unknown } | null)?.runningBrokers !== "function") {
    throw invalid(`cluster must be a KafkaCluster (from KafkaCluster.start), got ${shownArgument(cluster)}`);
  }
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    throw invalid(`options must be an object such as mirroring.asSource(), got ${shownArgument(options)}`);
  }
  if (typeof (options as { asSource?: unknown }).asSource === "function") {
    throw invalid("options is a ClusterMirroring: pass mirroring.asSource(), what it answers as a source");
  }
  for (const key of Object.keys(options)) {
    if (SOURCE_OPTIONS.includes(key)) continue;
    const close = closestName(key, SOURCE_OPTIONS);
    throw invalid(
      `options has no '${key}'${close === undefined ? "." : `; did you mean '${close}'?`} Known: ${SOURCE_OPTIONS.join(", ")} ({ ...mirroring.asSource(), principal } sets both).`,
    );
  }
}

/** A value for an error message: an object by its class (its JSON may be huge, or hold bigints). */
function shownArgument(value: unknown): string {
  if (typeof value !== "object" || value === null) return shownValue(value);
  return `an object of class ${value.constructor?.name ?? "Object"}`;
}
