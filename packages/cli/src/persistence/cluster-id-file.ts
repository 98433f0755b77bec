import * as fs from "node:fs";
import * as path from "node:path";

/** Kafka's per-log-dir identity file; this node keeps the cluster id in it. */
export const META_PROPERTIES_FILE = "meta.properties";

/** The cluster id stored in `dataDir/meta.properties`, or undefined when the data dir is new. */
export function readClusterId(dataDir: string): string | undefined {
  const file = path.join(dataDir, META_PROPERTIES_FILE);
  if (!fs.existsSync(file)) return undefined;
  const line = fs
    .readFileSync(file, "utf8")
    .split("\n")
    .find((l) => l.startsWith("cluster.id="));
  const id = line?.slice("cluster.id=".length).trim();
  if (!id) throw new Error(`${file} has no cluster.id; restore it or start on an empty data dir`);
  return id;
}

/** Stores the cluster id in `dataDir/meta.properties` (Kafka's format: version and cluster.id). */
export function writeClusterId(dataDir: string, clusterId: string): void {
  fs.writeFileSync(path.join(dataDir, META_PROPERTIES_FILE), `version=1\ncluster.id=${clusterId}\n`);
}
