import {
  type AlterConfigOp,
  canonicalTopicConfigValue,
  topicConfigDef,
  validateTopicConfig,
} from "@cluster-mirror/cluster";
import { isExcludedTopicConfig } from "../admin/mirror-config";

/** A source topic config whose value this cluster refuses, and why (the destination's own words). */
export interface RefusedTopicConfig {
  name: string;
  value: string;
  problem: string;
}

/**
 * The source's topic configs (known here, not excluded) whose value this cluster refuses (a newer Kafka may
 * accept values this cluster does not). Kafka validates a resource's configs together, all or nothing, so
 * such a value sent with the others would block every one of them, every refresh: they are left out of
 * creation and of the sync instead, and reported.
 */
export function refusedTopicConfigs(
  sourceConfigs: Readonly<Record<string, string>>,
  extraExclude: readonly string[] = [],
): RefusedTopicConfig[] {
  const refused: RefusedTopicConfig[] = [];
  for (const [name, value] of Object.entries(sourceConfigs)) {
    if (isExcludedTopicConfig(name, extraExclude) || topicConfigDef(name) === undefined) continue;
    const problem = validateTopicConfig(name, value);
    if (problem !== undefined) refused.push({ name, value, problem });
  }
  return refused.sort((a, b) => (a.name < b.name ? -1 : 1));
}

/**
 * The source's dynamic topic configs a mirror topic gets: everything except the exclusion list (spec §7),
 * configs the destination does not know (a real Kafka source may have newer ones; they are skipped rather
 * than failing the whole topic) and values it refuses (`refusedTopicConfigs`).
 */
export function mirroredTopicConfigs(
  sourceConfigs: Readonly<Record<string, string>>,
  extraExclude: readonly string[] = [],
): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(sourceConfigs)) {
    if (isExcludedTopicConfig(name, extraExclude) || topicConfigDef(name) === undefined) continue;
    if (validateTopicConfig(name, value) !== undefined) continue;
    // As this cluster stores and describes it (Kafka's form), so that an unchanged value is not set again.
    result[name] = canonicalTopicConfigValue(name, value);
  }
  return result;
}

/**
 * The incremental alter that makes a mirror topic's synced configs equal the source's: SET what differs,
 * DELETE what the source no longer sets. Excluded configs (and `mirror.name`) are never touched, nor is a
 * config whose source value this cluster refuses: the topic keeps the value it has (the last one synced)
 * rather than falling back to the default, a value the source never had either.
 */
export function topicConfigSyncOps(
  sourceConfigs: Readonly<Record<string, string>>,
  destinationConfigs: ReadonlyMap<string, string>,
  extraExclude: readonly string[] = [],
): AlterConfigOp[] {
  const desired = mirroredTopicConfigs(sourceConfigs, extraExclude);
  const refused = new Set(refusedTopicConfigs(sourceConfigs, extraExclude).map((r) => r.name));
  const ops: AlterConfigOp[] = [];
  for (const [name, value] of Object.entries(desired).sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (destinationConfigs.get(name) !== value) ops.push({ name, op: "SET", value });
  }
  for (const name of [...destinationConfigs.keys()].sort()) {
    if (isExcludedTopicConfig(name, extraExclude) || name in desired || refused.has(name)) continue;
    ops.push({ name, op: "DELETE" });
  }
  return ops;
}
