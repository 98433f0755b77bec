/** Types of kafka-broker.mjs (a plain script so it runs with `node` alone). */
/** SASL/PLAIN users of the SASL_PLAINTEXT listener: `admin` (super user) and `mirror` (only its ACLs). */
export const SASL_USERS: { admin: string; mirror: string };

export class BrokerToolMissingError extends Error {}

export function ensureKafkaJars(options?: { log?: (message: string) => void }): Promise<{
  libs: string;
  downloadMs: number;
}>;

export interface KafkaBrokerHandle {
  /** `127.0.0.1:<port>`. */
  readonly bootstrap: string;
  /** `127.0.0.1:<port>` of the SASL_PLAINTEXT listener (SASL/PLAIN users in SASL_USERS). */
  readonly saslBootstrap: string;
  readonly clusterId: string;
  /** `node.id` (1 for a single broker). */
  readonly nodeId: number;
  /** Temp dir: server.properties, log4j.properties, data/. */
  readonly dir: string;
  /** The jar folder (for `java -cp <libs>/*` tools). */
  readonly libs: string;
  /** How long the jar download took in this process (0 when cached). */
  readonly downloadMs: number;
  /** How long the last start took until "Kafka Server started". */
  readonly startMs: number;
  /** The last 20 000 characters the JVM printed. */
  readonly output: string;
  start(): Promise<void>;
  stop(): Promise<void>;
  destroy(): Promise<void>;
}

export function startKafkaBroker(options?: {
  log?: (message: string) => void;
  readyTimeoutMs?: number;
}): Promise<KafkaBrokerHandle>;

/** A KRaft cluster of combined broker+controller nodes (ids 1..count, all voters). */
export function startKafkaCluster(options?: {
  log?: (message: string) => void;
  readyTimeoutMs?: number;
  count?: number;
}): Promise<{
  readonly nodes: KafkaBrokerHandle[];
  /** Every node's PLAINTEXT address, comma-separated. */
  readonly bootstrap: string;
  readonly clusterId: string;
  destroy(): Promise<void>;
}>;
