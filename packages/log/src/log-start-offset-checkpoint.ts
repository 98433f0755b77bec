import { CorruptRecordError } from "@cluster-mirror/protocol";

/** Name of the log start offset checkpoint file, as Kafka names it. */
export const LOG_START_OFFSET_CHECKPOINT_FILE = "log-start-offset-checkpoint";

/** One entry of an offset checkpoint file: a partition and its offset. */
export interface OffsetCheckpointEntry {
  topic: string;
  partition: number;
  offset: bigint;
}

/**
 * Kafka's offset checkpoint text format (the one of `log-start-offset-checkpoint`,
 * `replication-offset-checkpoint`...): a version line (0), a count line, then one "topic partition offset"
 * line per entry.
 */
export function formatOffsetCheckpoint(entries: readonly OffsetCheckpointEntry[]): string {
  for (const e of entries) {
    if (/\s/.test(e.topic) || e.topic === "") {
      throw new RangeError(`topic "${e.topic}" cannot be written to an offset checkpoint (empty or blank)`);
    }
  }
  const lines = ["0", String(entries.length), ...entries.map((e) => `${e.topic} ${e.partition} ${e.offset}`)];
  return `${lines.join("\n")}\n`;
}

/** Parses Kafka's offset checkpoint text; throws `CorruptRecordError` saying what is malformed. */
export function parseOffsetCheckpoint(text: string, name = "offset checkpoint"): OffsetCheckpointEntry[] {
  const lines = text.split("\n").filter((l) => l.trim() !== "");
  if (lines[0]?.trim() !== "0") {
    throw new CorruptRecordError(`${name} has version "${lines[0]}"; only version 0 is known`);
  }
  const count = Number(lines[1]);
  if (!Number.isInteger(count) || count < 0 || lines.length !== count + 2) {
    throw new CorruptRecordError(
      `${name} declares ${lines[1]} entries but has ${lines.length - 2}; delete it to fall back to the first segment`,
    );
  }
  return lines.slice(2).map((line) => {
    const [topic, partition, offset, extra] = line.trim().split(/\s+/);
    if (
      topic === undefined ||
      partition === undefined ||
      offset === undefined ||
      extra !== undefined ||
      !/^-?\d+$/.test(partition) ||
      !/^-?\d+$/.test(offset)
    ) {
      throw new CorruptRecordError(`${name} line "${line}" is not "topic partition offset"`);
    }
    return { topic, partition: Number(partition), offset: BigInt(offset) };
  });
}
