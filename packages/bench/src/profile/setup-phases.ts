import { EngineEnv, MIRROR } from "../suites/engine-env";

/**
 * Times each phase of the `mirror-coordinator` suite's setup, then the engine's stop (every coordinator
 * unloading its partition actors) and the clusters' close: CPU time and virtual time per phase, to find
 * which one grows faster than the partition count (it was the stop: XState copies a parent's children for
 * each child it stops). Usage: `node --expose-gc --import tsx src/profile/setup-phases.ts <partitions> [fetchers, default 1]`;
 * add `--cpu-prof` to profile it all.
 */
async function main(): Promise<void> {
  const partitions = Number(process.argv[2] ?? 20_000);
  const perTopic = Math.min(1000, partitions);
  const env = new EngineEnv({
    groups: [{ prefix: "a_", topics: Math.ceil(partitions / perTopic), partitionsPerTopic: perTopic }],
    dataReplicationFactor: 1,
    numStatePartitions: 1,
    numReplicaFetchers: Number(process.argv[3] ?? 1),
  });
  let last = process.cpuUsage();
  let virtual = env.clock.now();
  const phase = (name: string) => {
    const used = process.cpuUsage(last);
    console.log(
      `${name}: ${((used.user + used.system) / 1000).toFixed(0)} ms CPU, ${env.clock.now() - virtual} ms virtual`,
    );
    last = process.cpuUsage();
    virtual = env.clock.now();
  };
  try {
    await env.until(
      env.mirroring.admin.createMirror(MIRROR, {
        "bootstrap.servers": "source:9092",
        "default.replication.factor": "1",
        "mirror.num.replica.fetchers": process.argv[3] ?? "1",
      }),
    );
    phase("createMirror");
    await env.until(env.mirroring.whenCoordinatorsLoaded(env.keys(), 600_000));
    phase("coordinators loaded");
    await env.until(env.mirroring.admin.addTopics(MIRROR, ".*"));
    phase("addTopics");
    await env.untilAllIn("MIRRORING");
    phase("all MIRRORING");
    env.stopMirroring();
    phase("stopMirroring");
  } finally {
    env.close();
    phase("close");
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
