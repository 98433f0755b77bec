import { writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { MIRROR_STATE_TOPIC } from "@cluster-mirror/mirror";
import { decodeRecords } from "@cluster-mirror/protocol";
import { EngineEnv } from "../suites/engine-env";

/**
 * Profiles the coordinator's load alone, as the `mirror-coordinator` suite times it: mirrors `partitions`
 * partitions once (not profiled), then stops the engine and starts it again `runs` times, each load (from
 * election to ACTIVE) timed, the last one also under the V8 sampling profiler (its profile is written as a
 * JSON array). Prints each load's CPU time and the heap per partition after it, beside the suite's baseline:
 * reading and folding the same `__mirror_state` records into a map.
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
    numReplicaFetchers: Number(process.env.BENCH_FETCHERS ?? 1),
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
    const runs = Number(runsArg ?? 1);
    for (let run = 0; run < runs; run++) {
      const profiled = run === runs - 1;
      env.stopMirroring();
      gc();
      gc();
      const heapBefore = process.memoryUsage().heapUsed;
      if (profiled) await session.post("Profiler.start");
      const cpu = process.cpuUsage();
      const mirroring = env.startMirroring();
      await env.until(mirroring.whenCoordinatorsLoaded(keys.slice(0, 1), 600_000));
      const used = process.cpuUsage(cpu);
      if (profiled) profiles.push((await session.post("Profiler.stop")).profile);
      gc();
      gc();
      const perPartition = (process.memoryUsage().heapUsed - heapBefore) / keys.length;
      const foldStart = process.cpuUsage();
      const latest = new Map<string, Buffer | null>();
      for (const batch of env.leaderReplica(MIRROR_STATE_TOPIC, 0).log.batches()) {
        for (const r of decodeRecords(batch)) latest.set(r.key?.toString("latin1") ?? "", r.value);
      }
      const fold = process.cpuUsage(foldStart);
      console.log(
        `load of ${keys.length}${profiled ? " (profiled)" : ""}: ${((used.user + used.system) / 1000).toFixed(0)} ms CPU, ${perPartition.toFixed(0)} B heap per partition; baseline fold of the records: ${((fold.user + fold.system) / 1000).toFixed(0)} ms CPU`,
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
