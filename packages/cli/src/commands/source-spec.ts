import type { SourceSpec } from "../node/mirror-node";
import { UsageError } from "./cli-errors";
import { intFlag } from "./int-flag";

/** Most brokers of one embedded cluster of a node (`--brokers`, `--source NAME=BROKERS`). */
export const MAX_EMBEDDED_BROKERS = 16;

/**
 * What is wrong with `name` as the name of one of a node's embedded clusters (`--name`, `--source NAME`),
 * or undefined when nothing is. A cluster is reached as `NAME:9092` and a source keeps its data in
 * `DATA_DIR/sources/NAME`, so a name is 1 or more of [a-zA-Z0-9._-] (as topic and mirror names), not `.`
 * or `..`.
 */
export function clusterNameProblem(name: string): string | undefined {
  if (name === "") return "it is empty";
  if (name === "." || name === "..") return "'.' and '..' are reserved";
  const bad = [...new Set(name.replace(/[a-zA-Z0-9._-]/g, ""))];
  if (bad.length > 0) {
    return `it contains ${bad.map((c) => `'${c}'`).join(", ")}; use only ASCII letters, digits, '.', '_' and '-'`;
  }
  return undefined;
}

/** `--name`, checked as every cluster name of the node is ({@link clusterNameProblem}). */
export function parseClusterName(value: string): string {
  const problem = clusterNameProblem(value);
  if (problem !== undefined) {
    throw new UsageError(
      `--name '${value}' is not a cluster name: ${problem} (e.g. --name destination; other clusters reach it as NAME:9092)`,
    );
  }
  return value;
}

/**
 * Parses `--source NAME=BROKERS` values (BROKERS: the embedded source's broker count, default 3 when
 * `=BROKERS` is left out). UsageError naming what is wrong: the shape, the name or the count.
 */
export function parseSources(values: readonly string[]): SourceSpec[] {
  return values.map((value) => {
    const [name = "", brokers = "3", ...rest] = value.split("=");
    if (rest.length > 0) {
      throw new UsageError(
        `--source '${value}' is not NAME=BROKERS: it has more than one '=' (e.g. --source primary=3: an embedded source cluster 'primary' with 3 brokers, reachable as primary:9092)`,
      );
    }
    const problem = clusterNameProblem(name);
    if (problem !== undefined) {
      throw new UsageError(
        `--source '${value}': '${name}' is not a cluster name: ${problem} (e.g. --source primary=3: an embedded source cluster 'primary' with 3 brokers, reachable as primary:9092)`,
      );
    }
    const n = intFlag(`--source '${value}': BROKERS`, brokers, 1, MAX_EMBEDDED_BROKERS);
    return { name, brokers: n };
  });
}
