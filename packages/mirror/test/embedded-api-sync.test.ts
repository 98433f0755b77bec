import { describe, expect, it } from "vitest";
import { embeddedApiEnv, runUntil, SOURCE_BOOTSTRAP } from "./embedded-api-helpers";

/** A mirror `m1` of source topic `orders`, MIRRORING, with a 10 s metadata refresh interval. */
async function mirroredEnv() {
  const env = embeddedApiEnv();
  env.source.controller.createTopic({ name: "orders", replicaAssignment: [[0]], configs: {} });
  await runUntil(
    env,
    env.mirroring.admin.createMirror("m1", {
      "bootstrap.servers": SOURCE_BOOTSTRAP,
      "mirror.metadata.refresh.interval.ms": "10000",
    }),
  );
  await runUntil(env, env.mirroring.admin.addTopics("m1", "orders"));
  await runUntil(env, env.mirroring.whenState("m1", "MIRRORING"));
  return env;
}

function retentionOf(env: Awaited<ReturnType<typeof mirroredEnv>>): string | undefined {
  return env.destination.controller.image.topic("orders")?.configs.get("retention.ms");
}

function setSourceRetention(env: Awaited<ReturnType<typeof mirroredEnv>>, value: string): void {
  env.source.controller.incrementalAlterConfigs({ type: "topic", name: "orders" }, [
    { name: "retention.ms", op: "SET", value },
  ]);
}

describe("waiting for a mirror's metadata sync", () => {
  it("refreshNow syncs at once and reports what it did", async () => {
    const env = await mirroredEnv();
    setSourceRetention(env, "4242");
    const before = env.clock.now();
    const report = await runUntil(env, env.mirroring.refreshNow("m1"));
    expect(report.leader).toBe(true);
    expect(report.alteredConfigs).toEqual(["orders"]);
    expect(report.errors).toEqual([]);
    expect(retentionOf(env)).toBe("4242");
    // Well before the periodic refresh would have run.
    expect(env.clock.now() - before).toBeLessThan(10_000);
  });

  it("whenSynced resolves with the next periodic sync, which has applied a change made before the call", async () => {
    const env = await mirroredEnv();
    setSourceRetention(env, "777");
    const report = await runUntil(env, env.mirroring.whenSynced("m1"));
    expect(report.leader).toBe(true);
    expect(report.alteredConfigs).toEqual(["orders"]);
    expect(retentionOf(env)).toBe("777");
  });

  it("whenSynced also resolves with a sync refreshNow starts", async () => {
    const env = await mirroredEnv();
    const waited = env.mirroring.whenSynced("m1");
    setSourceRetention(env, "31337");
    const forced = await runUntil(env, env.mirroring.refreshNow("m1"));
    expect(await runUntil(env, waited)).toBe(forced);
  });

  it("whenSynced times out with REQUEST_TIMED_OUT when no sync completes in time", async () => {
    const env = await mirroredEnv();
    const error = await runUntil(env, env.mirroring.whenSynced("m1", { timeoutMs: 1 })).catch(
      (e: unknown) => e as { errorName?: string; message: string },
    );
    expect(error).toMatchObject({ errorName: "REQUEST_TIMED_OUT" });
    expect((error as { message: string }).message).toMatch(/refreshNow\('m1'\)/);
  });

  it("both refuse an unknown mirror with UNKNOWN_MIRROR", async () => {
    const env = await mirroredEnv();
    await expect(env.mirroring.whenSynced("nope")).rejects.toThrow(/Mirror 'nope' does not exist/);
    await expect(env.mirroring.refreshNow("nope")).rejects.toMatchObject({ errorName: "UNKNOWN_MIRROR" });
  });
});
