/**
 * `@cluster-mirror/sim`: deterministic simulation of mirror topologies. A seeded scheduler on a manual
 * clock, virtual-time drivers, links with latency, timeouts and cuts, fault injection, topology builders,
 * workloads, operator actions and invariant checkers. Every export is documented where it is declared.
 */

export { abandonedDeadline, checkAbandonedTxns } from "./abandoned-txns";
export { checkNow, settleAndCheck } from "./checks";
export { crashOnCommit } from "./crash-on-commit";
export { crashOnReAdd } from "./crash-on-readd";
export { CUT_FAULT_MODES, cutFault, readdCutFault } from "./cut-fault";
export { deleteRecords } from "./delete-records";
export { failStopped } from "./fail-stopped";
export {
  type CatchUpBarrier,
  completeFailoverPartition,
  completeFailovers,
  type PendingFailover,
} from "./failover-completion";
export {
  advance,
  controllerFailover,
  crash,
  crashSoon,
  cutLink,
  diskFull,
  electPreferred,
  fastDisk,
  healLink,
  moveStateLeader,
  powerLoss,
  refuseConfigs,
  restart,
  slowDisk,
  slowReplication,
  txnCommitCrash,
  uncleanElection,
  underMinIsrWrites,
} from "./fault-commands";
export {
  crashBroker,
  crashMirrorStateLeader,
  downBrokers,
  electPreferredLeaders,
  restartAll,
  setControllerAvailable,
  setDiskLatency,
  type UncleanElectionOutcome,
  uncleanLeaderElection,
} from "./faults";
export { flushMicrotasks } from "./flush";
export { type GuardHooks, installBrokerGuards } from "./guards";
export { ALIGNED_STATES, type FailoverAlignment, failoverAlignment } from "./invariants/alignment";
export { CommittedPrefix, type TruncationAllowance } from "./invariants/committed-prefix";
export { checkPromisedWrites } from "./invariants/durability";
export { checkDurableTransition } from "./invariants/durable-commit";
export { checkFailover, checkNoHangingTransaction, type FailoverPoint } from "./invariants/failover";
export { checkGroupOffsets } from "./invariants/group-offsets";
export { checkLeaderEpoch } from "./invariants/leader-epoch";
export { checkNoBarrierOverLocalWrites } from "./invariants/local-writes-kept";
export { batchesByOffset, hexOf, leaderLog } from "./invariants/logs";
export {
  compactHistory,
  type FoldedState,
  foldHistory,
  keyIdOf,
  type MirrorStateEntry,
  type MirrorStateHistory,
  readMirrorStateHistory,
} from "./invariants/mirror-state-history";
export { readOnlyReason } from "./invariants/mirror-verdict";
export { checkOffsetIdentity } from "./invariants/offset-identity";
export { checkPidResetAnswers } from "./invariants/pid-reset";
export { probeReadOnly } from "./invariants/read-only";
export {
  checkOrphanedCopy,
  type OrphanedCopyBounds,
  orphanedIncarnation,
} from "./invariants/recreated-source";
export { checkReplayMatchesLive } from "./invariants/replay";
export { checkCommittedTxns, commitMarkerCommitted, transactionOutcome } from "./invariants/transactions";
export { checkTransitions } from "./invariants/transitions";
export { MARKER_BOUND_MS, TxnMarkerWatch } from "./invariants/txn-markers";
export {
  checkFailoverWithoutMirroredData,
  failoverWithoutMirroredData,
  UnmirroredFailoverWatch,
} from "./invariants/unmirrored-failover";
export { formatViolations, type Violation } from "./invariants/violation";
export { Link, LinkedSourceCluster, LinkedSourceConnector, type LinkOptions } from "./link";
export {
  clusterHealthy,
  expectRequested,
  LIVENESS_BOUND_MS,
  type LivenessRequest,
  LivenessWatch,
  livenessCounts,
  MIRRORING_STATES,
} from "./liveness";
export { loopRace } from "./loop-race";
export {
  type AckedWrite,
  type ActiveGroup,
  type CommittedTxn,
  type DeletedIncarnation,
  type EdgeTopicState,
  emptyModel,
  type FailoverRecord,
  partitionId,
  type SimModel,
  type TopicModel,
} from "./model";
export {
  allowRejoinTruncation,
  FAILOVER_MODES,
  type FailoverMode,
  failback,
  failover,
  failoverTopic,
  pause,
  recover,
  rejoin,
  resume,
} from "./operator";
export { readdRecreate, recreateTopic } from "./recreate-topic";
export {
  type SchedulerClock,
  SeededScheduler,
  type SeededSchedulerOptions,
  type TraceEvent,
} from "./seeded-scheduler";
export { type OpenTxn, type SimStats, Simulation, type SimulationOptions } from "./simulation";
export { crashAfterAck } from "./stale-high-watermark";
export {
  activePassive,
  chain,
  fanIn,
  fanOut,
  type MirrorEdge,
  mirrorName,
  mixed,
  type SimNode,
  SimWorld,
  type TopologySpec,
} from "./topology";
export {
  bounceLeader,
  concurrent,
  corruptReplica,
  loopAdd,
  promoteRace,
  readd,
  readdRemoveRace,
  restartBrokers,
  restartNode,
  txnFence,
} from "./transition-commands";
export { txnCommitKill } from "./txn-commit-kill";
export {
  LIVELOCK_TASKS,
  type RunnableScheduler,
  VirtualLivelockError,
  VirtualTime,
  VirtualTimeoutError,
} from "./virtual-time";
export {
  activateDestinationGroup,
  addPartition,
  addTopic,
  alterSourceConfig,
  groupCommit,
  pick,
  produce,
  produceKeyed,
  rawWrite,
  recordAck,
  txnBegin,
  txnEnd,
  writePromoted,
} from "./workload";
