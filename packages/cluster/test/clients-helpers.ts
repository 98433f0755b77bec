import { expect } from "vitest";
import {
  EmbeddedKafka,
  type EmbeddedKafkaConfig,
  type KafkaClusterOptions,
  type ManualScheduler,
} from "../src/index";
import { testCluster } from "./helpers";

/** Lets every pending promise continuation run (one macrotask: the microtask queue drains before it). */
export const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Most tasks one scheduler round may run at one instant of virtual time. More means the cluster is
 * busy-looping on zero-delay tasks (as it once did with an ISR flapping after a follower crashed): a bug,
 * so `drive` fails.
 */
export const BUSY_TASKS = 20_000;

/**
 * Drives a ManualScheduler until `work` settles: runs what is due, lets promise continuations run, and
 * only when nothing was due moves virtual time on by `stepMs`. Fails after `maxMs` of virtual time.
 */
export async function drive<T>(
  scheduler: ManualScheduler,
  work: Promise<T>,
  { stepMs = 10, maxMs = 120_000 }: { stepMs?: number; maxMs?: number } = {},
): Promise<T> {
  let done = false;
  work.then(
    () => {
      done = true;
    },
    () => {
      done = true;
    },
  );
  let elapsed = 0;
  let step = stepMs;
  for (;;) {
    // Due steps run first (replication, markers), so what the work observes has settled.
    const ran = scheduler.run(0, BUSY_TASKS);
    if (ran >= BUSY_TASKS) throw new Error(`the cluster ran ${ran} tasks at one instant: it is busy-looping`);
    await tick();
    if (done) break;
    if (ran > 0 && ran < BUSY_TASKS) {
      step = stepMs;
      continue;
    }
    // Idle (or a cluster busy-looping at one instant): move time on, in growing steps (capped) so long
    // waits (timeouts, backoffs) take few rounds.
    scheduler.run(step, BUSY_TASKS);
    elapsed += step;
    step = Math.min(step * 2, 1000);
    await tick();
    if (elapsed > maxMs) throw new Error(`work did not settle within ${maxMs} ms of virtual time`);
  }
  return work;
}

/** A 3-broker cluster on a manual clock with a client factory and a `run` that drives work to the end. */
export function clientCluster(options: Partial<KafkaClusterOptions> = {}, client: EmbeddedKafkaConfig = {}) {
  const t = testCluster(options);
  const kafka = new EmbeddedKafka(t.cluster, { clientId: "test", ...client });
  const run = <T>(work: Promise<T>, opts?: { stepMs?: number; maxMs?: number }) =>
    drive(t.scheduler, work, opts);
  const as = (config: EmbeddedKafkaConfig) => new EmbeddedKafka(t.cluster, { clientId: "test", ...config });
  return { ...t, kafka, run, as };
}

/** `transaction.sendOffsets` arguments for group "eos", offsets per topic: `{ in: [[0, "4"], [5, "9"]] }`. */
export function eosOffsets(byTopic: Record<string, readonly (readonly [number, string])[]>) {
  return {
    consumerGroupId: "eos",
    topics: Object.entries(byTopic).map(([topic, partitions]) => ({
      topic,
      partitions: partitions.map(([partition, offset]) => ({ partition, offset })),
    })),
  };
}

/** Awaits `work` and checks it fails with the Kafka error `errorName`. */
export async function expectKafkaError(
  work: Promise<unknown> | (() => unknown),
  errorName: string,
): Promise<void> {
  try {
    await (typeof work === "function" ? work() : work);
  } catch (e) {
    expect((e as { errorName?: string }).errorName, String(e)).toBe(errorName);
    return;
  }
  throw new Error(`expected ${errorName}, but it succeeded`);
}

/** Values as strings, for comparing consumed messages. */
export function values(messages: readonly { message: { value: Buffer | null } }[]): (string | null)[] {
  return messages.map((m) => (m.message.value === null ? null : m.message.value.toString()));
}
