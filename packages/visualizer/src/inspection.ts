/** The live stream's events: defined by the engine (`@cluster-mirror/mirror`), which the node serves. */
export {
  actorEvent,
  eventEvent,
  type InspectedActorRef,
  type InspectedSnapshot,
  type InspectionEvent,
  mirrorActorId,
  type PartitionContext,
  partitionActorId,
  snapshotEvent,
  stoppedEvent,
} from "@cluster-mirror/mirror";
