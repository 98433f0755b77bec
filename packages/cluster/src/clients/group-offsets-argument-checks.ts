import { ClusterError } from "../errors";
import { shownValue } from "../shown-value";

/**
 * The group of `admin.fetchOffsets`, `setOffsets` and `resetOffsets`, as kafkajs checks it ("Invalid
 * groupId"): without one, the offsets of a group named "undefined" were read, set or reset.
 */
export function groupIdArgument(args: unknown, where: string): string {
  const groupId = (args as { groupId?: unknown } | null | undefined)?.groupId;
  if (typeof groupId !== "string" || groupId === "") {
    throw new ClusterError(
      "INVALID_REQUEST",
      `${where}: Invalid groupId ${shownValue(groupId)}: name the consumer group, as { groupId: "my-group", ... }`,
    );
  }
  return groupId;
}

/** The topics of `admin.fetchOffsets`: kafkajs's "Expected topics array to be set" (a bare TypeError before). */
export function checkFetchOffsetsTopics(topics: unknown): void {
  const refuse = (what: string) => new ClusterError("INVALID_REQUEST", `admin.fetchOffsets(args): ${what}`);
  if (topics === undefined || topics === null) return;
  if (!Array.isArray(topics)) {
    throw refuse(
      `Expected topics array to be set, such as { groupId, topics: ["orders"] }; got ${shownValue(topics)}`,
    );
  }
  topics.forEach((topic: unknown, index) => {
    if (typeof topic !== "string" || topic === "") {
      throw refuse(
        `Invalid topics array, the names must be a valid string: topics[${index}] is ${shownValue(topic)}`,
      );
    }
  });
}

/** The partitions of `admin.setOffsets`: kafkajs's "Invalid partitions" (a bare TypeError before). */
export function checkSetOffsetsPartitions(partitions: unknown): asserts partitions is unknown[] {
  if (!Array.isArray(partitions) || partitions.length === 0) {
    throw new ClusterError(
      "INVALID_REQUEST",
      `admin.setOffsets(args): Invalid partitions ${shownValue(partitions)}: pass partitions: [{ partition: 0, offset: "42" }] ("-2": earliest, "-1": latest)`,
    );
  }
}

/**
 * The groups of `admin.describeGroups` and `deleteGroups`, as kafkajs's deleteGroups checks them ("Invalid
 * groupIds array"): a single name, not in an array, failed with "groupIds.map is not a function".
 */
export function checkGroupIds(groupIds: unknown, where: string): void {
  if (!Array.isArray(groupIds)) {
    throw new ClusterError(
      "INVALID_REQUEST",
      `${where}: Invalid groupIds array ${shownValue(groupIds)}: pass the names in an array, such as ["my-group"]`,
    );
  }
  groupIds.forEach((groupId: unknown, index) => {
    if (typeof groupId !== "string") {
      throw new ClusterError(
        "INVALID_REQUEST",
        `${where}: Invalid groupId name: groupIds[${index}] is ${shownValue(groupId)}, not a string`,
      );
    }
  });
}
