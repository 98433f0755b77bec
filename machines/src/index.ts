/**
 * @cluster-mirror/machines: the XState v5 machines of the mirror (partition lifecycle, coordinator shard,
 * fetcher), pure definitions with no I/O, plus the spec §4 valid-from table derived from them, JSON graphs
 * and Mermaid text for the visualizer and docs.
 */

export { alignmentLastMirrorEpoch } from "./alignment-epoch";
export {
  applyEvent,
  COMMAND_ACCEPTED_IN,
  COMMAND_TARGETS,
  commandRefusal,
  lifecycleStateOf,
  type MirrorPartitionEffect,
  type MirrorPartitionSimpleEffectType,
  type MirrorPartitionSnapshot,
  type MirrorPartitionStep,
  pendingEffectsOf,
  recoverPartition,
  resolveEffects,
  sendCommand,
  toStateRecord,
} from "./commands";
export {
  type CoordinatorShardContext,
  type CoordinatorShardEffectParams,
  type CoordinatorShardEvent,
  type CoordinatorShardInput,
  coordinatorShardMachine,
  mirrorGroupId,
  type PartitionGroup,
} from "./coordinator-shard.machine";
export { InvalidMirrorStateError } from "./errors";
export {
  classifyFetchResult,
  type FetcherContext,
  type FetcherEvent,
  type FetcherInput,
  type FetchPartitionError,
  type FetchPartitionResult,
  type FetchResultClass,
  fetcherMachine,
  type InFlightFetch,
  RETRIABLE_FETCH_ERRORS,
} from "./fetcher.machine";
export {
  applyFetcherEvent,
  type FetcherEffect,
  type FetcherSnapshot,
  type FetcherState,
  type FetcherStep,
  fetcherStateOf,
  initialFetcherSnapshot,
} from "./fetcher-transition";
export {
  eventName,
  guardName,
  MACHINES,
  type MachineGraph,
  type MachineGraphNode,
  type MachineGraphNodeType,
  type MachineGraphTransition,
  type MachineName,
  machineGraphs,
  toMachineGraph,
} from "./graph";
export { initialContext } from "./initial-context";
export {
  failoverMinLeaderEpoch,
  isLifecycleState,
  LEADER_EPOCH_BUMP_INCREMENT,
  LEADER_EPOCH_BUMP_THRESHOLD,
  LIFECYCLE_STATES,
  type LifecycleState,
  type MirrorPartitionStateRecord,
  NON_RETRYABLE_ATTEMPT,
  type RecoveredPartition,
  UNKNOWN_PARTITION,
} from "./lifecycle";
export { toMermaid } from "./mermaid";
export {
  mirrorPartitionMachine,
  RECOVERY_ROUTES,
  type RecoveryRoute,
  recoveryRoute,
} from "./mirror-partition.machine";
export type {
  AppendPidResetParams,
  AppendStateRecordParams,
  BumpLeaderEpochParams,
  EffectParams,
  MirrorPartitionCommand,
  MirrorPartitionCommitResult,
  MirrorPartitionContext,
  MirrorPartitionEffectResult,
  MirrorPartitionEvent,
  MirrorPartitionFailure,
  MirrorPartitionInput,
  MirrorPartitionObservation,
  PendingCommit,
  RecordLastMirrorEpochParams,
  ScheduleRetryParams,
  TruncateToEpochParams,
} from "./mirror-partition.types";
export {
  MAX_PARTITIONS_PER_GROUP,
  type MirrorPartitionSpawn,
  type MirrorPartitionsEvent,
  type MirrorPartitionsInput,
  mirrorPartitionsMachine,
} from "./mirror-partitions.machine";
export { type MirrorPartitionActor, startMirrorPartitionActor } from "./partition-actor";
export { buildPendingCommit, type CommitCause, causeOf } from "./pending-commit";
export { generateReadme } from "./readme";
export {
  COMMIT_RETRY_BACKOFF,
  DEFAULT_RETRY_BACKOFF,
  type RetryBackoffOptions,
  retryAttemptsExhausted,
  retryBackoffCeilingMs,
  retryBackoffDelayMs,
} from "./retry-backoff";
export {
  applyShardEvent,
  type CoordinatorShardEffect,
  type CoordinatorShardSnapshot,
  type CoordinatorShardState,
  type CoordinatorShardStep,
  initialShardSnapshot,
  shardStateOf,
} from "./shard-transition";
export {
  canTransition,
  deriveValidFrom,
  type LifecycleTransition,
  lifecycleTransitions,
  type ValidFromTable,
  validFrom,
} from "./valid-from";
