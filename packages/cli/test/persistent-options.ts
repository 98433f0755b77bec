import { ManualClock, ManualScheduler, SeededRandom } from "@cluster-mirror/cluster";

/** Options of `startPersistentCluster` for one broker on `dataDir`, on a fresh manual clock (a new process). */
export function persistentOptions(dataDir: string, fsync = false) {
  const clock = new ManualClock(1_700_000_000_000);
  return {
    dataDir,
    brokers: 1,
    clock,
    scheduler: new ManualScheduler(clock),
    random: new SeededRandom(3),
    fsync,
  };
}
