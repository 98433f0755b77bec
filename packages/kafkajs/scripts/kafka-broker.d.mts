/** Types of kafka-broker.mjs (a plain script so it runs with `node` alone). */
/** SASL users (PLAIN and SCRAM-SHA-256/512) of the SASL listeners: `admin` (super user) and `mirror` (only its ACLs). */
export const SASL_USERS: { admin: string; mirror: string };

export class BrokerToolMissingError extends Error {}

/** The Apache Kafka version the tests run: 3.9.1 unless the `KAFKA_VERSION` environment variable names another. */
export const KAFKA_VERSION: string;

/** The password of every key and trust store of {@link TlsMaterial} (test material only). */
export const TLS_STORE_PASSWORD: string;

/** Self-signed TLS material made with keytool (paths). */
export interface TlsMaterial {
  /** The brokers' PKCS12 key store (EC key, SAN IP:127.0.0.1, DNS:localhost). */
  readonly brokerKeystore: string;
  /** The MTLS listener's PKCS12 trust store: trusts the client certificate. */
  readonly brokerTruststore: string;
  /** The brokers' certificate as PEM: the trust store a client needs. */
  readonly caPem: string;
  /** The client's PKCS12 key store (CN=mirror), trusted by the MTLS listener. */
  readonly clientKeystore: string;
  /** An unrelated self-signed certificate as PEM: trusting only it, a client refuses the brokers. */
  readonly otherCaPem: string;
  readonly password: string;
}

export function createTlsMaterial(dir: string): Promise<TlsMaterial>;

export function ensureKafkaJars(options?: { log?: (message: string) => void }): Promise<{
  libs: string;
  downloadMs: number;
}>;

export interface KafkaBrokerHandle {
  /** `127.0.0.1:<port>`. */
  readonly bootstrap: string;
  /** `127.0.0.1:<port>` of the SASL_PLAINTEXT listener (SASL/PLAIN users in SASL_USERS). */
  readonly saslBootstrap: string;
  /** `127.0.0.1:<port>` of the SSL listener (server certificate in `tls.caPem`, no client certificate). */
  readonly sslBootstrap: string;
  /** `127.0.0.1:<port>` of the MTLS listener (SSL, a client certificate required: `tls.clientKeystore`). */
  readonly mtlsBootstrap: string;
  /** `127.0.0.1:<port>` of the SASL_SSL listener (SASL/PLAIN users in SASL_USERS, over TLS). */
  readonly saslSslBootstrap: string;
  /** The TLS material of the SSL listeners, in this node's dir. */
  readonly tls: TlsMaterial;
  readonly clusterId: string;
  /** `node.id` (1 for a single broker). */
  readonly nodeId: number;
  /** Temp dir: server.properties, log4j.properties, data/, tls/. */
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
  /** Kills the JVM (SIGKILL): a crash, with no controlled shutdown; resolves once it exited. */
  kill(): Promise<void>;
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
