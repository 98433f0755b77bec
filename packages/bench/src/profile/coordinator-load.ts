import { writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { EngineEnv } from "../suites/engine-env";

/**
 * Profiles the coordinator's load alone, as the `mirror-coordinator` suite times it: mirrors `partitions`
 * partitions once (not profiled), then stops the engine and starts it again `runs` times, each load (from
 * election to ACTIVE) under the V8 sampling profiler, and writes the profiles as a JSON array. Prints each
 * load's CPU time and the heap per partition after it.
 * Usage: `node --expose-gc --import tsx src/profile/coordinator-load.ts <partitions> <runs> <out.cpuprofile>`,
 * then `tsx src/profile/summarise-profile.ts <out.cpuprofile>` for the top functions by self time.
 */
async function main(): Promise<void> {
  const [partitionsArg, runsArg, out] = process.argv.slice(2);
  if (!out) throw new Error("usage: coordinator-load.ts <partitions> <runs> <out.cpuprofile>");
  const partitions = Number(partitionsArg ?? 100_000);
  const perTopic = Math.min(1000, partitions);
  const env = new EngineEnv({
    groups: [{ prefix: "a_", topics: Math.ceil(partitions / perTopic), partitionsPerTopic: perTopic }],
    dataReplicationFactor: 1,
    numStatePartitions: 1,
    numReplicaFetchers: 100,
  });
  const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
  try {
    await env.mirrorAll();
    const keys = env.keys();
    const session = new Session();
    session.connect();
    await session.post("Profiler.enable");
    await session.post("Profiler.setSamplingInterval", { interval: 200 });
    const profiles: unknown[] = [];
    for (let run = 0; run < Number(runsArg ?? 1); run++) {
      env.stopMirroring();
      gc();
      gc();
      const heapBefore = process.memoryUsage().heapUsed;
      await session.post("Profiler.start");
      const cpu = process.cpuUsage();
      const mirroring = env.startMirroring();
      await env.until(mirroring.whenCoordinatorsLoaded(keys.slice(0, 1), 600_000));
      const used = process.cpuUsage(cpu);
      profiles.push((await session.post("Profiler.stop")).profile);
      gc();
      gc();
      const perPartition = (process.memoryUsage().heapUsed - heapBefore) / keys.length;
      console.log(
        `load of ${keys.length}: ${((used.user + used.system) / 1000).toFixed(0)} ms CPU, ${perPartition.toFixed(0)} B heap per partition`,
      );
    }
    writeFileSync(out, JSON.stringify(profiles));
    session.disconnect();
  } finally {
    env.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
