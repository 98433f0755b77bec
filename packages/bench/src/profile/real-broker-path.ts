import { writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { mirrorOnce, sixteenKiBBatches, startFilledBroker, timed } from "../real-broker-fixture";

/**
 * Profiles the real-broker mirror path (Kafka 3.9.1 over loopback → ClusterMirroring on an embedded
 * destination): fills a topic with 16 KiB batches, then mirrors it PROFILE_ROUNDS times (default 3), sampling
 * every mirror but the first (which warms up the JIT and the broker's page cache).
 * Usage: `[PROFILE_ROUNDS=n] node --import tsx src/profile/real-broker-path.ts <out.cpuprofile> [batches]`.
 */
async function main(): Promise<void> {
  const [out, batchesArg] = process.argv.slice(2);
  if (!out) throw new Error("usage: real-broker-path.ts <out.cpuprofile> [batches]");
  const filled = await startFilledBroker(sixteenKiBBatches(Number(batchesArg ?? 2048)));
  try {
    const session = new Session();
    session.connect();
    await session.post("Profiler.enable");
    await session.post("Profiler.setSamplingInterval", { interval: 200 });
    const profiles: unknown[] = [];
    for (let i = 0; i < Number(process.env.PROFILE_ROUNDS ?? 3); i++) {
      const run = await mirrorOnce(filled, {
        seed: i,
        measure: async (work) => {
          if (i > 0) await session.post("Profiler.start");
          const measured = await timed(work);
          if (i > 0) profiles.push((await session.post("Profiler.stop")).profile);
          return measured;
        },
      });
      const mbps = filled.payloadBytes / 1e6 / (run.ms / 1000);
      console.log(`run ${i}: ${mbps.toFixed(0)} MB/s wall, ${run.cpuMs.toFixed(0)} ms CPU`);
    }
    writeFileSync(out, JSON.stringify(profiles));
    session.disconnect();
  } finally {
    await filled.destroy();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
