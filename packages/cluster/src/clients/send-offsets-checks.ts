import { ClusterError } from "../errors";
import { shownValue } from "../shown-value";
import { offsetArgument, partitionArgument, topicArgument } from "./offset-argument";

const WHERE = "transaction.sendOffsets(args)";

/**
 * The offsets of `transaction.sendOffsets(args)`, all checked before any is added (kafkajs's "Missing
 * consumerGroupId", "Missing offset topics", then each offset as `commitOffsets` checks it). Before, the
 * offsets ahead of a bad one were added and then committed with the transaction although the call had
 * failed, with a bare SyntaxError ("Cannot convert abc to a BigInt"); without a group they were committed
 * for a group named "undefined".
 */
export function sendOffsetsArgument(args: unknown): {
  groupId: string;
  offsets: { topic: string; partition: number; offset: bigint }[];
} {
  const { consumerGroupId, topics } = (args ?? {}) as { consumerGroupId?: unknown; topics?: unknown };
  if (typeof consumerGroupId !== "string" || consumerGroupId === "") {
    throw new ClusterError(
      "INVALID_REQUEST",
      `${WHERE}: Missing consumerGroupId, got ${shownValue(consumerGroupId)}: name the group whose offsets commit with the transaction, as { consumerGroupId: "my-group", topics: [...] }`,
    );
  }
  if (!Array.isArray(topics)) {
    throw new ClusterError(
      "INVALID_REQUEST",
      `${WHERE}: Missing offset topics, got ${shownValue(topics)}: pass topics: [{ topic: "orders", partitions: [{ partition: 0, offset: "42" }] }]`,
    );
  }
  const offsets = topics.flatMap((entry: unknown) => {
    const { topic, partitions } = (entry ?? {}) as { topic?: unknown; partitions?: unknown };
    const name = topicArgument(topic, WHERE);
    if (!Array.isArray(partitions)) {
      throw new ClusterError(
        "INVALID_REQUEST",
        `${WHERE}: the partitions of topic "${name}" must be an array such as [{ partition: 0, offset: "42" }], got ${shownValue(partitions)}`,
      );
    }
    return partitions.map((p: { partition?: unknown; offset?: unknown } | null) => ({
      topic: name,
      partition: partitionArgument(p?.partition, WHERE),
      offset: offsetArgument(p?.offset, WHERE),
    }));
  });
  return { groupId: consumerGroupId, offsets };
}
