import { afterEach, describe, expect, it, vi } from "vitest";
import { CoordinatorShard } from "../src/coordinator/coordinator-shard";
import { embeddedApiEnv, runUntil, SOURCE_BOOTSTRAP } from "./embedded-api-helpers";

const PARTITIONS = 6;

/** A destination mirroring topic `orders` (PARTITIONS partitions) from the source, every partition MIRRORING. */
async function mirroring() {
  const env = embeddedApiEnv();
  env.source.controller.createTopic({
    name: "orders",
    replicaAssignment: Array.from({ length: PARTITIONS }, () => [0]),
    configs: {},
  });
  await runUntil(env, env.mirroring.admin.createMirror("m1", { "bootstrap.servers": SOURCE_BOOTSTRAP }));
  await runUntil(env, env.mirroring.admin.addTopics("m1", "orders"));
  await runUntil(env, env.mirroring.whenState("m1", "MIRRORING"));
  return env;
}

/** Counts the commands of each type that reach a coordinator shard (the coordinator/shard boundary). */
function countShardCommands(): Map<string, number> {
  const counts = new Map<string, number>();
  const original = CoordinatorShard.prototype.command;
  vi.spyOn(CoordinatorShard.prototype, "command").mockImplementation(function (
    this: CoordinatorShard,
    key,
    c,
  ) {
    counts.set(c.type, (counts.get(c.type) ?? 0) + 1);
    return original.call(this, key, c);
  });
  return counts;
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("a failover sends each partition STOP once", () => {
  it("the admin API and the metadata manager both drive `.removed`, and the shard sees N STOPs for N partitions", async () => {
    const env = await mirroring();
    const counts = countShardCommands();

    await runUntil(env, env.mirroring.admin.removeTopics("m1", "orders"));
    // `removeTopics` resolves once STOPPING is committed for every partition.
    const views = env.mirroring.coordinators.describe("m1");
    expect(views).toHaveLength(PARTITIONS);
    for (const v of views) expect(["STOPPING", "STOPPED"]).toContain(v.state);
    await runUntil(env, env.mirroring.whenState("m1", "STOPPED"));
    // Past the manager's deferred drive of each `.removed` record, and its next periodic refresh.
    await runUntil(env, env.mirroring.refreshNow("m1"));

    expect(counts.get("STOP")).toBe(PARTITIONS);
  });
});
