import { CorruptRecordError } from "@cluster-mirror/protocol";
import type { EpochEntry } from "./leader-epoch-cache";

/** Name of the checkpoint file inside a partition directory, as Kafka names it. */
export const LEADER_EPOCH_CHECKPOINT_FILE = "leader-epoch-checkpoint";

/** Kafka's text format: a version line (0), a count line, then one "epoch startOffset" line per entry. */
export function formatLeaderEpochCheckpoint(entries: readonly EpochEntry[]): string {
  const lines = ["0", String(entries.length), ...entries.map((e) => `${e.epoch} ${e.startOffset}`)];
  return `${lines.join("\n")}\n`;
}

/** Parses Kafka's leader-epoch-checkpoint text; throws `CorruptRecordError` saying what is malformed. */
export function parseLeaderEpochCheckpoint(text: string): EpochEntry[] {
  const lines = text.split("\n").filter((l) => l.trim() !== "");
  if (lines[0]?.trim() !== "0") {
    throw new CorruptRecordError(
      `leader-epoch-checkpoint has version "${lines[0]}"; only version 0 is known`,
    );
  }
  const count = Number(lines[1]);
  if (!Number.isInteger(count) || count < 0 || lines.length !== count + 2) {
    throw new CorruptRecordError(
      `leader-epoch-checkpoint declares ${lines[1]} entries but has ${lines.length - 2}; delete it to rebuild from the log`,
    );
  }
  return lines.slice(2).map((line) => {
    const [epoch, offset, extra] = line.trim().split(/\s+/);
    if (
      epoch === undefined ||
      offset === undefined ||
      extra !== undefined ||
      !/^-?\d+$/.test(epoch) ||
      !/^-?\d+$/.test(offset)
    ) {
      throw new CorruptRecordError(`leader-epoch-checkpoint line "${line}" is not "epoch startOffset"`);
    }
    return { epoch: Number(epoch), startOffset: BigInt(offset) };
  });
}
