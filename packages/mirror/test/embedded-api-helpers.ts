import {
  EmbeddedKafka,
  KafkaCluster,
  ManualClock,
  ManualScheduler,
  SeededRandom,
} from "@cluster-mirror/cluster";
import { ClusterMirroring, type ClusterMirroringOptions } from "../src/cluster-mirroring";
import { MIRROR_STATE_TOPIC } from "../src/destination/embedded-state-log";
import { EmbeddedSourceConnector, EmbeddedSourceRegistry } from "../src/source/embedded-source-registry";

export const SOURCE_BOOTSTRAP = "source:9092";

/**
 * A source and a destination cluster on one manual clock and scheduler, with `ClusterMirroring` started on
 * the destination (nothing run yet: its coordinators are still loading) and the source registered.
 */
export function embeddedApiEnv(
  options: Partial<ClusterMirroringOptions> & {
    destinationBrokers?: number;
    /** Runs on the destination before mirroring starts (pre-create topics, stop brokers). */
    beforeStart?: (destination: KafkaCluster) => void;
  } = {},
) {
  const { destinationBrokers, beforeStart, ...mirroringOptions } = options;
  const clock = new ManualClock(1_700_000_000_000);
  const scheduler = new ManualScheduler(clock);
  const source = KafkaCluster.start({
    brokers: 1,
    clock,
    scheduler,
    random: new SeededRandom(1),
    clusterId: "source-cluster-id-00001",
  });
  const destination = KafkaCluster.start({
    brokers: destinationBrokers ?? 1,
    clock,
    scheduler,
    random: new SeededRandom(2),
    clusterId: "destination-cluster-id1",
  });
  const registry = new EmbeddedSourceRegistry();
  registry.register(SOURCE_BOOTSTRAP, source);
  beforeStart?.(destination);
  const mirroring = ClusterMirroring.start({
    cluster: destination,
    sources: new EmbeddedSourceConnector(registry),
    random: new SeededRandom(3),
    numStatePartitions: 4,
    ...mirroringOptions,
  });
  return { clock, scheduler, source, destination, mirroring, registry };
}

const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Awaits `promise` while running the manual scheduler 1 ms at a time (promise continuations run between
 * steps), failing after `maxMs` of virtual time. Returns the promise's outcome.
 */
export async function runUntil<T>(
  env: { clock: ManualClock; scheduler: ManualScheduler },
  promise: Promise<T>,
  maxMs = 120_000,
): Promise<T> {
  let settled = false;
  const watched = promise.finally(() => {
    settled = true;
  });
  watched.catch(() => {});
  const until = env.clock.now() + maxMs;
  while (!settled) {
    await flush();
    if (settled) break;
    if (env.scheduler.run(0) > 0) continue;
    await flush();
    if (settled || env.scheduler.run(0) > 0) continue;
    if (env.clock.now() >= until) throw new Error(`still pending after ${maxMs} ms of virtual time`);
    env.scheduler.run(1);
  }
  return watched;
}

/** Runs the scheduler for `ms` of virtual time (promise continuations in between). */
export async function advance(env: { clock: ManualClock; scheduler: ManualScheduler }, ms: number) {
  const until = env.clock.now() + ms;
  for (;;) {
    await flush();
    if (env.scheduler.run(0) > 0) continue;
    if (env.clock.now() >= until) return;
    env.scheduler.run(1);
  }
}

/** Produces `count` records to `topic` on `cluster` (acks=all) and waits for the acknowledgement. */
export async function produce(
  env: { clock: ManualClock; scheduler: ManualScheduler },
  cluster: KafkaCluster,
  topic: string,
  count: number,
  partition = 0,
): Promise<void> {
  const producer = new EmbeddedKafka(cluster, { clientId: "test-producer" }).producer();
  await runUntil(env, producer.connect());
  await runUntil(
    env,
    producer.send({
      topic,
      messages: Array.from({ length: count }, (_, i) => ({ partition, key: `k${i}`, value: `v${i}` })),
    }),
  );
}

/**
 * Three destination brokers, one `__mirror_state` partition, and mirror `m1` of a one-partition `orders`
 * (2 records, caught up) whose destination leader is not the broker coordinating its state: losing that
 * leader leaves the coordinator running. `replicas`: the leader alone, or all three brokers (leader first).
 */
export async function ordersLedAwayFromCoordinator(replicas: "leader-only" | "all") {
  const env = embeddedApiEnv({ destinationBrokers: 3, numStatePartitions: 1 });
  const { mirroring, destination } = env;
  env.source.controller.createTopic({ name: "orders", replicaAssignment: [[0]], configs: {} });
  await runUntil(env, mirroring.admin.createMirror("m1", { "bootstrap.servers": SOURCE_BOOTSTRAP }));
  const coordinator = destination.controller.image.partition(MIRROR_STATE_TOPIC, 0)!.leader;
  const leader = [0, 1, 2].find((b) => b !== coordinator)!;
  destination.controller.createTopic({
    name: "orders",
    replicaAssignment: [replicas === "all" ? [leader, ...[0, 1, 2].filter((b) => b !== leader)] : [leader]],
    configs: {},
    topicId: env.source.controller.image.topic("orders")!.topicId,
  });
  await runUntil(env, mirroring.admin.addTopics("m1", "orders"));
  await produce(env, env.source, "orders", 2);
  await runUntil(env, mirroring.whenCaughtUp("m1"));
  return { env, leader };
}
