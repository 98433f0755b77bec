import * as fs from "node:fs";
import * as path from "node:path";
import {
  type Clock,
  type CommittedOffset,
  DataDirLock,
  KafkaCluster,
  type Random,
  type Scheduler,
} from "@cluster-mirror/cluster";
import { readClusterId, writeClusterId } from "./cluster-id-file";
import { GROUP_OFFSETS_FILE, readGroupOffsets, writeGroupOffsets } from "./group-offsets-file";
import { METADATA_LOG_FILE, MetadataLogWriter, readMetadataLog } from "./metadata-log-file";
import {
  readTransactionState,
  TRANSACTION_STATE_FILE,
  writeTransactionState,
} from "./transaction-state-file";

/** Settings of an embedded cluster whose whole state survives a restart on the same data dir. */
export interface PersistentClusterOptions {
  /** Where everything lives: `broker-N/` segment files, `metadata.log`, `group-offsets.json`, `transactions.json`, `meta.properties`. Omitted: in memory. */
  dataDir?: string;
  brokers: number;
  clock: Clock;
  random: Random;
  scheduler: Scheduler;
  /** fsync every write (default true). */
  fsync?: boolean;
  /** The lock of `dataDir` if the caller already took it; otherwise it is taken before the dir is read. */
  dataDirLock?: DataDirLock;
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
 * `metadata.log`, replayed before any broker starts), committed group offsets (`group-offsets.json`), the
 * transactions' state and held markers (`transactions.json`) and
 * the brokers' logs (their segment files; `__mirror_state` is one of them). Without `dataDir` it is an
 * ordinary in-memory cluster. The data dir is locked first and until `close()`: if another node holds it,
 * this throws DataDirLockedError and changes nothing in the dir.
 */
export function startPersistentCluster(options: PersistentClusterOptions): PersistentCluster {
  const { dataDir, brokers, clock, random, scheduler } = options;
  if (!dataDir) {
    const cluster = KafkaCluster.start({ brokers, clock, random, scheduler });
    return { cluster, recoveredRecords: 0, close: () => cluster.close() };
  }
  const lock = options.dataDirLock ?? DataDirLock.acquire(dataDir);
  try {
    return startOnDisk(options, dataDir, lock);
  } catch (error) {
    lock.release();
    throw error;
  }
}

function startOnDisk(
  options: PersistentClusterOptions,
  dataDir: string,
  lock: DataDirLock,
): PersistentCluster {
  const { brokers, clock, random, scheduler } = options;
  const fsync = options.fsync ?? true;
  fs.mkdirSync(dataDir, { recursive: true });
  const clusterId = readClusterId(dataDir);
  const offsetsFile = path.join(dataDir, GROUP_OFFSETS_FILE);
  const offsets = readGroupOffsets(offsetsFile);
  const transactionsFile = path.join(dataDir, TRANSACTION_STATE_FILE);
  const transactions = readTransactionState(transactionsFile);
  const cluster = new KafkaCluster({
    brokers,
    dataDir,
    dataDirLock: lock,
    fsync,
    clock,
    random,
    scheduler,
    clusterId,
    onGroupOffsetsChanged: (groupId, changed) => {
      offsets.set(groupId, new Map<string, CommittedOffset>(changed));
      writeGroupOffsets(offsetsFile, offsets, fsync);
    },
    onTransactionStateChanged: (state) => writeTransactionState(transactionsFile, state, fsync),
  });
  try {
    if (clusterId === undefined) writeClusterId(dataDir, cluster.clusterId);
    const metadataFile = path.join(dataDir, METADATA_LOG_FILE);
    const records = readMetadataLog(metadataFile);
    if (records.length > 0) cluster.controller.replay(records);
    const writer = new MetadataLogWriter(metadataFile, fsync);
    // Every later record batch is on disk (fsynced) before the controller applies or answers it.
    cluster.controller.setJournal((batch) => writer.appendBatch(batch));
    const close = () => {
      cluster.close();
      cluster.controller.setJournal(undefined);
      writer.close();
    };
    try {
      for (const [groupId, groupOffsets] of offsets) cluster.groups.loadOffsets(groupId, groupOffsets);
      // The replay's RemoveTopic records found no offsets to delete (they load after it): a topic deleted
      // before the restart whose offsets file write did not follow (a crash, a full disk) still has them.
      // Forgotten now (and the file rewritten), unless a topic of that name exists again.
      const replayedNames = new Set(records.flatMap((r) => (r.type === "Topic" ? [r.name] : [])));
      for (const name of replayedNames) {
        if (cluster.controller.image.topic(name) === undefined) cluster.groups.onTopicDeleted(name);
      }
      // After the replay (whose truncation records would drop held markers stored after them), before the
      // brokers start: decided transactions write their markers once leaders are there.
      cluster.loadTransactionState(transactions);
      for (let id = 0; id < brokers; id++) cluster.startBroker(id);
    } catch (error) {
      close();
      throw error;
    }
    return { cluster, recoveredRecords: records.length, close };
  } catch (error) {
    cluster.close(); // stops what started and releases the lock; idempotent
    throw error;
  }
}
