import { ClusterError } from "./errors";

/**
 * The `assignments` of a CreatePartitions request, as Kafka's ReplicationControlManager.createPartitions and
 * validateManualPartitionAssignment check them: one replica list per added partition, each as long as the
 * topic's existing partitions' (its replication factor). The brokers in them are checked where any
 * assignment is (registered, distinct).
 */
export function checkAddedPartitionAssignments(
  topic: string,
  firstNew: number,
  additional: number,
  replicationFactor: number,
  assignments: readonly (readonly number[])[],
): void {
  if (!Array.isArray(assignments) || assignments.length !== additional) {
    throw new ClusterError(
      "INVALID_REPLICA_ASSIGNMENT",
      `Attempted to add ${additional} additional partition(s), but only ${Array.isArray(assignments) ? assignments.length : 0} assignment(s) were specified: topic '${topic}' gets partitions ${firstNew} to ${firstNew + additional - 1}, so give one replica list for each, such as [[1, 2]] for one`,
    );
  }
  assignments.forEach((replicas, i) => {
    if (!Array.isArray(replicas) || !replicas.every((b) => Number.isInteger(b))) {
      throw new ClusterError(
        "INVALID_REPLICA_ASSIGNMENT",
        `the assignment of partition ${firstNew + i} of topic '${topic}' must be an array of broker ids, such as [1, 2]; got ${JSON.stringify(replicas)}`,
      );
    }
    if (replicas.length !== replicationFactor) {
      throw new ClusterError(
        "INVALID_REPLICA_ASSIGNMENT",
        `The manual partition assignment includes a partition with ${replicas.length} replica(s), but this is not consistent with previous partitions, which have ${replicationFactor} replica(s): give partition ${firstNew + i} of topic '${topic}' ${replicationFactor} brokers`,
      );
    }
  });
}
