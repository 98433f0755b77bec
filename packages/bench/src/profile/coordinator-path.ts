import { writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { EngineEnv, MIRROR, type TopicGroup } from "../suites/engine-env";

/**
 * Profiles the coordinator's timed parts alone (no set-up): PAUSE then RESUME of every partition through
 * the real `__mirror_state` log, or a failover (remove) at RF 3, under the V8 sampling profiler.
 * Usage: `node --import tsx src/profile/coordinator-path.ts <transitions|failover> <partitions> <out.cpuprofile>`,
 * then `tsx src/profile/summarise-profile.ts <out.cpuprofile>` for the top functions by self time.
 */
async function main(): Promise<void> {
  const [what, n, out] = process.argv.slice(2);
  const partitions = Number(n ?? 10_000);
  if (!out || (what !== "transitions" && what !== "failover")) {
    throw new Error("usage: coordinator-path.ts <transitions|failover> <partitions> <out.cpuprofile>");
  }
  const perTopic = Math.min(1000, partitions);
  const group: TopicGroup = {
    prefix: "p_",
    topics: Math.ceil(partitions / perTopic),
    partitionsPerTopic: perTopic,
  };
  const env = new EngineEnv({
    groups: [group],
    dataReplicationFactor: what === "failover" ? 3 : 1,
    numStatePartitions: what === "failover" ? 3 : 1,
    numReplicaFetchers: Number(process.env.BENCH_FETCHERS ?? 1),
  });
  await env.mirrorAll();
  if (what === "failover") await env.fillLogs(group, 10);
  const keys = env.keys();
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.setSamplingInterval", { interval: 100 });
  const cpu = process.cpuUsage();
  const records = env.stateRecords();
  // COORDINATOR_HEAP_PROFILE=1: sample allocations (collected ones included) instead of CPU.
  const heap = process.env.COORDINATOR_HEAP_PROFILE === "1";
  if (heap) {
    await session.post("HeapProfiler.enable");
    await session.post("HeapProfiler.startSampling", {
      samplingInterval: 4096,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
  } else await session.post("Profiler.start");
  if (what === "transitions") {
    const c = env.mirroring.coordinators;
    await env.until(Promise.all(keys.map((k) => c.command(k, { type: "PAUSE" }))));
    await env.untilAllIn("PAUSED");
    await env.until(Promise.all(keys.map((k) => c.command(k, { type: "RESUME" }))));
    await env.untilAllIn("MIRRORING");
  } else {
    await env.until(env.mirroring.admin.removeTopics(MIRROR, `${group.prefix}.*`));
    await env.untilAllIn("STOPPED", group, 5);
  }
  const profile = heap
    ? (await session.post("HeapProfiler.stopSampling")).profile
    : (await session.post("Profiler.stop")).profile;
  const used = process.cpuUsage(cpu);
  const ms = (used.user + used.system) / 1000;
  const written = Number(env.stateRecords() - records);
  console.log(
    `${what} of ${keys.length}: ${ms.toFixed(0)} ms CPU, ${written} state records, ${((written * 1000) / ms).toFixed(0)}/s`,
  );
  writeFileSync(out, JSON.stringify([profile]));
  session.disconnect();
  env.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
