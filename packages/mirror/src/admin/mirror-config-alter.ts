import { ClusterError } from "@cluster-mirror/cluster";
import { InvalidMirrorConfigError } from "./errors";
import { checkMirrorConfigKeys, KNOWN_MIRROR_CONFIGS, MIRROR_CONFIG_KEYS } from "./mirror-config";

/** A change of a mirror's config, as Kafka's IncrementalAlterConfigs: keys to set, keys to delete. */
export interface MirrorConfigChanges {
  set?: Readonly<Record<string, string>>;
  delete?: readonly string[];
}

/**
 * The configs `stored` becomes with `changes` (AlterClusterMirror), validated as a creation's are:
 * unknown keys and values are refused with InvalidMirrorConfigError naming them. `source.cluster.id` is the
 * mirror's identity, pinned at creation: it can be neither deleted nor set to another cluster's id (a
 * mirror of another cluster is another mirror: create one). `bootstrap.servers` can be changed (the source
 * cluster moved, or got new brokers) but not deleted. A key both set and deleted is refused as ambiguous.
 */
export function alterMirrorConfigs(
  stored: Readonly<Record<string, string>>,
  changes: MirrorConfigChanges,
): Record<string, string> {
  // A wrong shape (null, a string for `delete`) otherwise fails as a TypeError or reads a string letter by
  // letter ("Unknown mirror config 't'").
  const isRecord = (v: unknown) => typeof v === "object" && v !== null && !Array.isArray(v);
  if (!isRecord(changes) || (changes.set !== undefined && !isRecord(changes.set))) {
    throw new ClusterError(
      "INVALID_REQUEST",
      `mirror config changes must be { set?: { key: "value" }, delete?: ["key"] }, got ${JSON.stringify(changes) ?? String(changes)}`,
    );
  }
  if (changes.delete !== undefined && !Array.isArray(changes.delete)) {
    throw new ClusterError(
      "INVALID_REQUEST",
      `mirror config changes: delete must be an array of config names, such as ["${String(changes.delete)}"], got ${JSON.stringify(changes.delete)}`,
    );
  }
  const set = changes.set ?? {};
  const deleted = changes.delete ?? [];
  checkMirrorConfigKeys(set);
  const K = MIRROR_CONFIG_KEYS;
  for (const key of deleted) {
    if (typeof key !== "string" || !KNOWN_MIRROR_CONFIGS.includes(key)) {
      // The same message as an unknown key to set (with its "Did you mean").
      checkMirrorConfigKeys({ [String(key)]: "" });
    }
    if (key in set) {
      throw new InvalidMirrorConfigError(
        key,
        `Mirror config '${key}' is both set and deleted in one change: do one of the two.`,
      );
    }
    if (key === K.BOOTSTRAP_SERVERS) {
      throw new InvalidMirrorConfigError(
        key,
        `${K.BOOTSTRAP_SERVERS} cannot be deleted: a mirror needs its source's address. Set it to the new address instead.`,
      );
    }
    if (key === K.SOURCE_CLUSTER_ID) {
      throw new InvalidMirrorConfigError(
        key,
        `${K.SOURCE_CLUSTER_ID} cannot be deleted: it pins the cluster this mirror copies (${stored[key] ?? "unknown"}).`,
      );
    }
  }
  const pinned = stored[K.SOURCE_CLUSTER_ID];
  const wanted = set[K.SOURCE_CLUSTER_ID];
  if (wanted !== undefined && pinned !== undefined && wanted !== pinned) {
    throw new InvalidMirrorConfigError(
      K.SOURCE_CLUSTER_ID,
      `${K.SOURCE_CLUSTER_ID} is pinned to ${pinned}, the cluster this mirror copies; it cannot become ${wanted}. To mirror another cluster, create another mirror.`,
    );
  }
  const out: Record<string, string> = { ...stored, ...set };
  for (const key of deleted) delete out[key];
  return out;
}
