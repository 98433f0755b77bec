import { Broker } from "@cluster-mirror/cluster";
import { EngineEnv, MIRROR, type TopicGroup } from "../suites/engine-env";

const counts = new Map<string, number>();
const bump = (k: string) => counts.set(k, (counts.get(k) ?? 0) + 1);
const proto = Broker.prototype as unknown as Record<string, (...a: unknown[]) => unknown>;
for (const name of [
  "replicaFetchOnce",
  "handleReplicaFetch",
  "reconcilePartition",
  "emitLeadership",
  "notifyFollowers",
  "appendControlBatch",
  "setReadOnly",
]) {
  const orig = proto[name]!;
  proto[name] = function (this: unknown, ...args: unknown[]) {
    bump(name);
    return orig.apply(this, args);
  };
}
async function main() {
  const n = Number(process.argv[2] ?? 1000);
  const group: TopicGroup = {
    prefix: "p_",
    topics: Math.ceil(n / 1000),
    partitionsPerTopic: Math.min(n, 1000),
  };
  const env = new EngineEnv({
    groups: [group],
    dataReplicationFactor: 3,
    numStatePartitions: 3,
    numReplicaFetchers: 100,
  });
  await env.mirrorAll();
  await env.fillLogs(group, 10);
  counts.clear();
  const t0 = env.clock.now();
  await env.until(env.mirroring.admin.removeTopics(MIRROR, `${group.prefix}.*`));
  await env.untilAllIn("STOPPED", group, 5);
  console.log("virtual ms", env.clock.now() - t0);
  for (const [k, v] of counts) console.log(k, (v / n).toFixed(2), "per partition");
  env.close();
}
main();
