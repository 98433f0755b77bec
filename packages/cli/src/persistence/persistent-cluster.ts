import * as fs from "node:fs";
import * as path from "node:path";
import {
  type Clock,
  type CommittedOffset,
  KafkaCluster,
  type Random,
  type Scheduler,
} from "@cluster-mirror/cluster";
import { readClusterId, writeClusterId } from "./cluster-id-file";
import { GROUP_OFFSETS_FILE, readGroupOffsets, writeGroupOffsets } from "./group-offsets-file";
import { METADATA_LOG_FILE, MetadataLogWriter, readMetadataLog } from "./metadata-log-file";

/** Settings of an embedded cluster whose whole state survives a restart on the same data dir. */
export interface PersistentClusterOptions {
  /** Where everything lives: `broker-N/` segment files, `metadata.log`, `group-offsets.json`, `meta.properties`. Omitted: in memory. */
  dataDir?: string;
  brokers: number;
  clock: Clock;
  random: Random;
  scheduler: Scheduler;
  /** fsync every write (default true). */
  fsync?: boolean;
}

/** A running cluster and how to stop it. */
export interface PersistentCluster {
  cluster: KafkaCluster;
  /** Metadata records replayed from disk at start (0 for a new data dir). */
  recoveredRecords: number;
  /** Shuts every broker down cleanly, then closes the files. */
  close(): void;
}

/**
 * Starts an embedded cluster that recovers everything from `dataDir` on restart: the cluster id
 * (`meta.properties`), the controller's metadata (topics, configs, mirrors, leaders, producer-id blocks:
 * `metadata.log`, replayed before any broker starts), committed group offsets (`group-offsets.json`) and
 * the brokers' logs (their segment files; `__mirror_state` is one of them). Without `dataDir` it is an
 * ordinary in-memory cluster.
 */
export function startPersistentCluster(options: PersistentClusterOptions): PersistentCluster {
  const { dataDir, brokers, clock, random, scheduler } = options;
  const fsync = options.fsync ?? true;
  if (!dataDir) {
    const cluster = KafkaCluster.start({ brokers, clock, random, scheduler });
    return { cluster, recoveredRecords: 0, close: () => cluster.close() };
  }
  fs.mkdirSync(dataDir, { recursive: true });
  const clusterId = readClusterId(dataDir);
  const offsetsFile = path.join(dataDir, GROUP_OFFSETS_FILE);
  const offsets = readGroupOffsets(offsetsFile);
  const cluster = new KafkaCluster({
    brokers,
    dataDir,
    fsync,
    clock,
    random,
    scheduler,
    clusterId,
    onGroupOffsetsChanged: (groupId, changed) => {
      offsets.set(groupId, new Map<string, CommittedOffset>(changed));
      writeGroupOffsets(offsetsFile, offsets, fsync);
    },
  });
  if (clusterId === undefined) writeClusterId(dataDir, cluster.clusterId);

  const metadataFile = path.join(dataDir, METADATA_LOG_FILE);
  const records = readMetadataLog(metadataFile);
  if (records.length > 0) cluster.controller.replay(records);
  const writer = new MetadataLogWriter(metadataFile, fsync);
  const unsubscribe = cluster.controller.subscribe((entry) => writer.append(entry), records.length);

  for (const [groupId, groupOffsets] of offsets) cluster.groups.loadOffsets(groupId, groupOffsets);

  for (let id = 0; id < brokers; id++) cluster.startBroker(id);
  return {
    cluster,
    recoveredRecords: records.length,
    close: () => {
      cluster.close();
      unsubscribe();
      writer.close();
    },
  };
}
