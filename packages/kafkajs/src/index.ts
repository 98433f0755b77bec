/**
 * `@cluster-mirror/kafkajs`: a real Apache Kafka cluster as a mirror source. `KafkajsSourceCluster` implements
 * the engine's `SourceCluster` port over kafkajs 2.2.4's connections with raw Fetch v12 (batches arrive as the
 * broker stored them); the connectors plug it into `ClusterMirroring`.
 */
export { EmbeddedOrKafkaSourceConnector, KafkajsSourceConnector } from "./connector";
export { SourceAuthenticationError, SourceBrokerUnavailableError } from "./errors";
export { KafkajsSourceCluster, type KafkajsSourceOptions, parseBootstrap } from "./kafkajs-source";
export { READ_COMMITTED, READ_UNCOMMITTED } from "./requests";
export { kafkajsSecurity, UnsupportedSourceSecurityError } from "./security";
