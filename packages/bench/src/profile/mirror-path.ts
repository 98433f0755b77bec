import { writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { mirrorRun, sourceEnv } from "../embedded-mirror";

/**
 * Profiles the embedded mirror path alone (no set-up, no module loading): fills the source once, then
 * mirrors it `runs` times into fresh destinations under the V8 sampling profiler, and writes the profiles (one per run, as a JSON array).
 * Usage: `node --expose-gc --import tsx src/profile/mirror-path.ts <batchBytes> <copy|zero-copy> <out.cpuprofile>`,
 * then `tsx src/profile/summarise-profile.ts <out.cpuprofile>` for the top functions by self time.
 */
async function main(): Promise<void> {
  const [bytesArg, mode, out] = process.argv.slice(2);
  const batchBytes = Number(bytesArg ?? 16384);
  if (!out || (mode !== "copy" && mode !== "zero-copy")) {
    throw new Error("usage: mirror-path.ts <batchBytes> <copy|zero-copy> <out.cpuprofile>");
  }
  const big = batchBytes >= 16384;
  const env = await sourceEnv({
    batchBytes,
    records: big ? 16 : 1,
    batches: big ? 8192 : 32768,
    rf: 1,
  });
  await mirrorRun(env, 0, mode === "copy"); // warm-up, not profiled
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.setSamplingInterval", { interval: 100 });
  // Only the timed part of each run is sampled (not the forced GC between runs); the profiles are merged.
  const profiles: unknown[] = [];
  const probe = {
    start: async () => {
      await session.post("Profiler.start");
    },
    stop: async () => {
      profiles.push((await session.post("Profiler.stop")).profile);
    },
  };
  for (let i = 1; i <= 5; i++) {
    const r = await mirrorRun(env, i, mode === "copy", probe);
    console.log(
      `${batchBytes} B batches, ${mode}: ${(r.bytes / 1e6 / (r.ms / 1000)).toFixed(0)} MB/s wall, ${(r.bytes / 1e6 / (r.cpuMs / 1000)).toFixed(0)} MB/s per CPU-second (sys ${r.sysMs.toFixed(0)} ms, ${r.pageFaults} page faults)`,
    );
  }
  writeFileSync(out, JSON.stringify(profiles));
  session.disconnect();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
