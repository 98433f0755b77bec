import { type AlterConfigOp, topicConfigDef } from "@cluster-mirror/cluster";
import { isExcludedTopicConfig } from "../admin/mirror-config";

/**
 * The source's dynamic topic configs a mirror topic gets: everything except the exclusion list (spec §7)
 * and configs the destination does not know (a real Kafka source may have newer ones; they are skipped
 * rather than failing the whole topic).
 */
export function mirroredTopicConfigs(
  sourceConfigs: Readonly<Record<string, string>>,
  extraExclude: readonly string[] = [],
): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(sourceConfigs)) {
    if (isExcludedTopicConfig(name, extraExclude) || topicConfigDef(name) === undefined) continue;
    result[name] = value;
  }
  return result;
}

/**
 * The incremental alter that makes a mirror topic's synced configs equal the source's: SET what differs,
 * DELETE what the source no longer sets. Excluded configs (and `mirror.name`) are never touched.
 */
export function topicConfigSyncOps(
  sourceConfigs: Readonly<Record<string, string>>,
  destinationConfigs: ReadonlyMap<string, string>,
  extraExclude: readonly string[] = [],
): AlterConfigOp[] {
  const desired = mirroredTopicConfigs(sourceConfigs, extraExclude);
  const ops: AlterConfigOp[] = [];
  for (const [name, value] of Object.entries(desired).sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (destinationConfigs.get(name) !== value) ops.push({ name, op: "SET", value });
  }
  for (const name of [...destinationConfigs.keys()].sort()) {
    if (isExcludedTopicConfig(name, extraExclude) || name in desired) continue;
    ops.push({ name, op: "DELETE" });
  }
  return ops;
}
