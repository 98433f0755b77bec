import type { SourceSpec } from "../node/mirror-node";
import { UsageError } from "./cli-errors";

/** Most brokers of one embedded cluster of a node (`--brokers`, `--source NAME=BROKERS`). */
export const MAX_EMBEDDED_BROKERS = 16;

/**
 * Parses `--source NAME=BROKERS` values (BROKERS: the embedded source's broker count, default 3 when
 * `=BROKERS` is left out). UsageError on a bad name or count.
 */
export function parseSources(values: readonly string[]): SourceSpec[] {
  return values.map((value) => {
    const [name = "", brokers = "3", ...rest] = value.split("=");
    const n = Number(brokers);
    if (
      !/^[a-zA-Z0-9._-]+$/.test(name) ||
      rest.length > 0 ||
      !Number.isInteger(n) ||
      n < 1 ||
      n > MAX_EMBEDDED_BROKERS
    ) {
      throw new UsageError(
        `--source '${value}' is not NAME=BROKERS (e.g. --source primary=3: an embedded source cluster 'primary' with 3 brokers, reachable as primary:9092)`,
      );
    }
    return { name, brokers: n };
  });
}
