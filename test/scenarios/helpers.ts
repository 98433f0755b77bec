import {
  EmbeddedKafka,
  KafkaCluster,
  ManualClock,
  ManualScheduler,
  SeededRandom,
} from "@cluster-mirror/cluster";
import {
  ClusterMirroring,
  EmbeddedSourceConnector,
  EmbeddedSourceRegistry,
  type RetryBackoffOptions,
  type SourceConnector,
} from "@cluster-mirror/mirror";
import { recordBatches } from "@cluster-mirror/protocol";
import { expect } from "vitest";

/** Lets promise continuations run. */
export const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Clusters on one manual clock and scheduler, each with mirroring started and registered as a source under
 * `<name>:9092`. `run(work)` drives virtual time until `work` settles.
 */
export function topology(
  names: string[],
  options: {
    brokers?: number;
    seed?: number;
    statePartitions?: number;
    retry?: RetryBackoffOptions;
    defaultApiTimeoutMs?: number;
    /** Wraps the connector every engine reaches its sources through (a slow source, say). */
    wrapSources?: (connector: SourceConnector, scheduler: ManualScheduler) => SourceConnector;
  } = {},
) {
  const clock = new ManualClock(1_700_000_000_000);
  const scheduler = new ManualScheduler(clock);
  const registry = new EmbeddedSourceRegistry();
  const embedded = new EmbeddedSourceConnector(registry);
  const connector = options.wrapSources?.(embedded, scheduler) ?? embedded;
  const seed = options.seed ?? 1;
  const nodes = new Map(
    names.map((name, i) => {
      const cluster = KafkaCluster.start({
        brokers: options.brokers ?? 3,
        clock,
        scheduler,
        random: new SeededRandom(seed * 100 + i),
      });
      const mirroring = ClusterMirroring.start({
        cluster,
        sources: connector,
        random: new SeededRandom(seed * 100 + 50 + i),
        numStatePartitions: options.statePartitions ?? 4,
        retry: options.retry,
        defaultApiTimeoutMs: options.defaultApiTimeoutMs,
      });
      registry.register(`${name}:9092`, cluster, mirroring.asSource());
      return [
        name,
        { cluster, mirroring, kafka: new EmbeddedKafka(cluster, { clientId: `app-${name}` }) },
      ] as const;
    }),
  );
  const node = (name: string) => {
    const n = nodes.get(name);
    if (!n) throw new Error(`no cluster ${name}`);
    return n;
  };

  /** Drives the scheduler (and promise continuations) until `work` settles or `maxMs` of virtual time pass. */
  async function run<T>(work: Promise<T>, maxMs = 600_000): Promise<T> {
    let done = false;
    work.then(
      () => {
        done = true;
      },
      () => {
        done = true;
      },
    );
    const end = clock.now() + maxMs;
    while (!done) {
      await flush();
      if (done) break;
      if (scheduler.run(0, 50_000) > 0) continue;
      await flush();
      if (done) break;
      if (clock.now() >= end) throw new Error(`work did not settle within ${maxMs} ms of virtual time`);
      scheduler.run(5, 50_000);
    }
    return work;
  }

  /** Runs virtual time forward by `ms`, letting everything due happen. */
  async function advance(ms: number): Promise<void> {
    const end = clock.now() + ms;
    while (clock.now() < end) {
      await flush();
      scheduler.run(Math.min(10, end - clock.now()), 50_000);
    }
    await flush();
    scheduler.run(0, 50_000);
    await flush();
  }

  /** Waits (in virtual time) until `predicate` holds. */
  async function until(
    predicate: () => boolean | Promise<boolean>,
    what: string,
    maxMs = 600_000,
  ): Promise<void> {
    const end = clock.now() + maxMs;
    while (!(await predicate())) {
      if (clock.now() >= end) throw new Error(`timed out waiting for ${what}`);
      await advance(50);
    }
  }

  return { clock, scheduler, registry, node, run, advance, until };
}

/**
 * Clusters `a` and `b`, a topic `orders` on a, and b's mirror `dr` of it (added, not yet awaited): the
 * preamble most scenarios share. Callers wait for the state they need (`whenState`, `whenCaughtUp`).
 */
export async function mirroredOrders(options: { partitions?: number } = {}) {
  const t = topology(["a", "b"]);
  const a = t.node("a");
  const b = t.node("b");
  await t.run(
    a.kafka.admin().createTopics({ topics: [{ topic: "orders", numPartitions: options.partitions ?? 2 }] }),
  );
  await t.advance(200);
  await t.run(b.mirroring.admin.createMirror("dr", { "bootstrap.servers": "a:9092" }));
  await t.run(b.mirroring.admin.addTopics("dr", "orders"));
  return { t, a, b };
}

/**
 * Topics (`t` by default, one partition, RF 3) on a, mirrored to b by `dr` until caught up, then failed over
 * on b (STOPPED, writable): where the re-add scenarios start.
 */
export async function failedOverOnB(options: { seed?: number; topics?: string[] } = {}) {
  const topics = options.topics ?? ["t"];
  const t = topology(["a", "b"], { seed: options.seed ?? 7 });
  const a = t.node("a");
  const b = t.node("b");
  await t.run(
    a.kafka.admin().createTopics({
      topics: topics.map((topic) => ({ topic, numPartitions: 1, replicationFactor: 3 })),
    }),
  );
  await t.run(b.mirroring.admin.createMirror("dr", { "bootstrap.servers": "a:9092" }));
  for (const topic of topics) await t.run(b.mirroring.admin.addTopics("dr", topic));
  await t.run(b.mirroring.whenCaughtUp("dr"));
  for (const topic of topics) await t.run(b.mirroring.admin.removeTopics("dr", topic));
  await t.run(b.mirroring.whenState("dr", "STOPPED"));
  await t.advance(1000);
  return { t, a, b };
}

export type Topology = ReturnType<typeof topology>;
export type Node = ReturnType<Topology["node"]>;

/** `orders` (1 partition, RF 3) on `a` with `n` records, one batch each, from an idempotent producer. */
export async function ordersOn(t: Topology, a: Node, n: number) {
  await t.run(
    a.kafka.admin().createTopics({ topics: [{ topic: "orders", numPartitions: 1, replicationFactor: 3 }] }),
  );
  const producer = a.kafka.producer({ idempotent: true });
  await t.run(producer.connect());
  for (let i = 0; i < n; i++) {
    await t.run(producer.send({ topic: "orders", messages: [{ key: `k${i}`, value: `v${i}` }], acks: -1 }));
  }
  return producer;
}

/** The one partition of `mirror` on `node`, as describe shows it. */
/** Records `node`'s lifecycle changes of `mirror` as `from->to`. */
export function transitionsOf(node: Node, mirror: string): string[] {
  const seen: string[] = [];
  node.mirroring.subscribeTransitions((x) => {
    if (x.key.mirror === mirror) seen.push(`${x.previous.state}->${x.record.state}`);
  });
  return seen;
}

export async function onlyRowOf(node: Node, mirror = "dr") {
  const [row] = await node.mirroring.admin.describe(mirror);
  if (row === undefined) throw new Error(`no partition in mirror ${mirror}`);
  return row;
}

/**
 * Fails `dr`'s only partition on `node` for good (an operator's FAIL command, not retryable: only a recover
 * brings it back) and checks it is FAILED.
 */
export async function failForGood(t: Topology, node: Node): Promise<void> {
  const [view] = node.mirroring.coordinators.describe("dr");
  await t.run(
    node.mirroring.coordinators.command(view!.key, {
      type: "FAIL",
      message: "an operator's test failure",
      retryable: false,
      random: 0.5,
    }),
  );
  expect((await onlyRowOf(node)).state).toBe("FAILED");
}

/** Waits until the one partition of `mirror` on `node` is MIRRORING with lag 0 (a FAILED one may retry). */
export function untilCaughtUp(t: Topology, node: Node, what: string, mirror = "dr") {
  return t.until(async () => {
    const row = await onlyRowOf(node, mirror);
    return row.state === "MIRRORING" && row.lag === 0n;
  }, what);
}

/** Every batch of a partition on its leader, as hex, by base offset. */
export function leaderBatches(cluster: KafkaCluster, topic: string, partition: number) {
  const leader = cluster.leaderFor(topic, partition);
  const log = leader.replica(topic, partition)!.log;
  return [...log.batches()].map((b) => ({
    offset: b.baseOffset,
    epoch: b.partitionLeaderEpoch,
    hex: b.buffer.toString("hex"),
    batch: b,
  }));
}

/** The batches of `orders-0` on `node`'s leader, as `offset:hex`: equal on two clusters, a byte-exact copy. */
export const ordersBatches = (node: Node) =>
  leaderBatches(node.cluster, "orders", 0).map((x) => `${x.offset}:${x.hex}`);

/** A FAILED retry backoff far longer than a test: only the end of the fault brings a partition back in time. */
export const LONG_RETRY_BACKOFF = { baseMs: 3_600_000, capMs: 3_600_000, maxAttempts: 10 };

/** Raw bytes of a partition's log on its leader, split into batches. */
export function logBytes(cluster: KafkaCluster, topic: string, partition: number): Buffer[] {
  const leader = cluster.leaderFor(topic, partition);
  const log = leader.replica(topic, partition)!.log;
  return [...log.batches()].map((b) => Buffer.from(b.buffer));
}

export { recordBatches };
