import { ClusterError } from "../errors";
import { shownValue } from "../shown-value";

/** The largest offset Kafka's int64 holds. */
const LONG_MAX = 2n ** 63n - 1n;

/**
 * An offset a caller gave (`seek`, `commitOffsets`, `setOffsets`, `deleteTopicRecords`): kafkajs's string of
 * digits (a whole number or a bigint is taken too), as kafkajs checks it ("Invalid offset, expected a long
 * received abc", "Offset must not be a negative number"). `special` are the negative offsets that mean
 * something where it is given ("-2" earliest, "-1" latest). A bad one failed with a bare SyntaxError
 * ("Cannot convert abc to a BigInt") from deep inside the call.
 */
export function offsetArgument(value: unknown, where: string, special: readonly bigint[] = []): bigint {
  let offset: bigint | undefined;
  if (typeof value === "bigint") offset = value;
  else if (typeof value === "number" && Number.isSafeInteger(value)) offset = BigInt(value);
  else if (typeof value === "string" && /^-?\d{1,19}$/.test(value)) offset = BigInt(value);
  if (offset === undefined) {
    throw new ClusterError(
      "INVALID_REQUEST",
      `${where}: Invalid offset, expected a long received ${shownValue(value)}: give the offset as a string of digits, such as "42"`,
    );
  }
  // An offset is Kafka's int64: "9223372036854775808" is no long (kafkajs's Long wraps it negative and
  // refuses it); taken, it was committed as a group's offset no Kafka request can carry.
  if (offset > LONG_MAX) {
    throw new ClusterError(
      "INVALID_REQUEST",
      `${where}: Invalid offset, expected a long received ${shownValue(value)}: an offset is at most ${LONG_MAX} (Kafka's int64)`,
    );
  }
  if (offset < 0n && !special.includes(offset)) {
    const meanings = special.map((s) => `"${s}" (${s === -2n ? "earliest" : "latest"})`).join(" or ");
    throw new ClusterError(
      "INVALID_REQUEST",
      `${where}: Offset must not be a negative number, got ${shownValue(value)}${meanings === "" ? "" : `; the negative offsets meant here are ${meanings}`}`,
    );
  }
  return offset;
}

/** A partition number a caller gave, as kafkajs checks it ("Invalid partition, expected a number"). */
export function partitionArgument(value: unknown, where: string): number {
  if (!Number.isSafeInteger(value) || (value as number) < 0) {
    throw new ClusterError(
      "INVALID_REQUEST",
      `${where}: Invalid partition, expected a number received ${shownValue(value)}: a partition is a whole number, 0 or more`,
    );
  }
  return value as number;
}

/** A topic name a caller gave, as kafkajs checks it ("Invalid topic"). */
export function topicArgument(value: unknown, where: string): string {
  if (typeof value !== "string" || value === "") {
    throw new ClusterError(
      "INVALID_REQUEST",
      `${where}: Invalid topic ${shownValue(value)}: name the topic, as a string such as "orders"`,
    );
  }
  return value;
}
