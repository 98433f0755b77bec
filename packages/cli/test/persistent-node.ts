import { EmbeddedKafka, type KafkaCluster, type ManualScheduler } from "@cluster-mirror/cluster";
import { type PersistentCluster, startPersistentCluster } from "../src/persistence/persistent-cluster";
import { persistentOptions } from "./persistent-options";

const open: PersistentCluster[] = [];

/** Closes every cluster `startPersistentNode` started that is still open (for `afterEach`). */
export function closePersistentNodes(): void {
  for (const pc of open.splice(0)) if (!pc.cluster.isClosed) pc.close();
}

/**
 * A node's persistent cluster on `dir` (a fresh process each call: a new manual clock), with a client, and
 * ways to drive its clock: `run` until a promise settles, `advance` by some virtual time. `adjust` changes
 * the options first (more brokers, a clock moved on).
 */
export function startPersistentNode(
  dir: string,
  adjust: (options: ReturnType<typeof persistentOptions>) => ReturnType<typeof persistentOptions> = (o) => o,
) {
  const options = adjust(persistentOptions(dir));
  const pc = startPersistentCluster(options);
  open.push(pc);
  const kafka = new EmbeddedKafka(pc.cluster, { clientId: "app" });
  const { scheduler } = options;
  return {
    pc,
    cluster: pc.cluster,
    kafka,
    options,
    run: <T>(work: Promise<T>) => drive(scheduler, work),
    advance: (ms: number) => advance(scheduler, ms),
  };
}

/** Runs due tasks and promise continuations, moving virtual time on while idle, until `work` settles. */
async function drive<T>(scheduler: ManualScheduler, work: Promise<T>): Promise<T> {
  let done = false;
  const settled = work.finally(() => {
    done = true;
  });
  settled.catch(() => {});
  for (let elapsed = 0; !done; ) {
    const ran = scheduler.run(0, 10_000);
    await new Promise<void>((resolve) => setImmediate(resolve));
    if (done || ran > 0) continue;
    elapsed += 10;
    if (elapsed > 120_000) throw new Error("work did not settle within 120 s of virtual time");
    scheduler.run(10, 10_000);
  }
  return work;
}

/** Moves virtual time on by `ms`, running what falls due. */
async function advance(scheduler: ManualScheduler, ms: number): Promise<void> {
  for (let t = 0; t < ms; t += 1000) {
    scheduler.run(1000, 10_000);
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

/** The log of partition 0 of `topic` on its leader. */
export function leaderLog(cluster: KafkaCluster, topic: string) {
  return cluster.leaderFor(topic, 0).replica(topic, 0)!.log;
}
