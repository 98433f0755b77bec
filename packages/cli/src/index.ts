export { parseBootstrap } from "./client/bootstrap";
export { NodeClient, NodeRequestError, NodeUnreachableError } from "./client/node-client";
export { OperationError, UsageError } from "./commands/cli-errors";
export { clusterMirrorMain, clusterMirrorProgram } from "./commands/cluster-mirror";
export { kafkaMirrorsMain, kafkaMirrorsProgram } from "./commands/kafka-mirrors";
export { type DemoOptions, runDemo } from "./demo/demo";
export { buildAdminServer, buildMetricsServer } from "./node/http-server";
export {
  MirrorNode,
  type MirrorNodeOptions,
  type NodeCluster,
  type SourceSpec,
  UnknownClusterError,
} from "./node/mirror-node";
export { type NodeRuntime, type NodeRuntimeOptions, startNodeRuntime } from "./node/node-runtime";
export { readClusterId, writeClusterId } from "./persistence/cluster-id-file";
export { readGroupOffsets, writeGroupOffsets } from "./persistence/group-offsets-file";
export {
  decodeMetadataEntry,
  encodeMetadataEntry,
  METADATA_LOG_FILE,
  MetadataLogWriter,
  readMetadataLog,
} from "./persistence/metadata-log-file";
export {
  type PersistentCluster,
  type PersistentClusterOptions,
  startPersistentCluster,
} from "./persistence/persistent-cluster";
export {
  readTransactionState,
  TRANSACTION_STATE_FILE,
  writeTransactionState,
} from "./persistence/transaction-state-file";
