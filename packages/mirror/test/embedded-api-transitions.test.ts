import { describe, expect, it } from "vitest";
import type { PartitionTransition } from "../src/coordinator/transition-listener";
import { embeddedApiEnv, runUntil, SOURCE_BOOTSTRAP } from "./embedded-api-helpers";

/** `topic-partition previous->record on EVENT`, compact for assertions. */
function show(t: PartitionTransition): string {
  return `${t.key.topic}-${t.key.partition} ${t.previous.state}->${t.record.state} on ${t.event.type}`;
}

describe("ClusterMirroring.subscribeTransitions: committed changes, read through XState's inspection", () => {
  it("reports each committed record change with its key, the record before and after, and the event", async () => {
    const warnings: string[] = [];
    const env = embeddedApiEnv({ warn: (m) => warnings.push(m) });
    const { mirroring } = env;
    const seen: PartitionTransition[] = [];
    const stop = mirroring.subscribeTransitions((t) => seen.push(t));
    // A listener that throws is reported, and neither the actors nor the other listeners notice.
    const stopThrowing = mirroring.subscribeTransitions(() => {
      throw new Error("listener bug");
    });
    const topicId = env.source.controller.createTopic({
      name: "orders",
      replicaAssignment: [[0], [0]],
      configs: {},
    });
    await runUntil(env, mirroring.admin.createMirror("m1", { "bootstrap.servers": SOURCE_BOOTSTRAP }));
    await runUntil(env, mirroring.admin.addTopics("m1", "orders"));
    await runUntil(env, mirroring.whenState("m1", "MIRRORING"));
    stopThrowing();

    for (const p of [0, 1]) {
      const mine = seen.filter((t) => t.key.partition === p);
      expect(mine.map(show)).toEqual([
        `orders-${p} UNKNOWN->PREPARING on COMMITTED`,
        `orders-${p} PREPARING->MIRRORING on COMMITTED`,
      ]);
      expect(mine[0]?.key).toEqual({ mirror: "m1", topic: "orders", topicId, partition: p });
      // Each change starts from the record the previous one committed: nothing in between is lost.
      expect(mine[1]?.previous).toBe(mine[0]?.record);
      // The last change is the committed state the coordinator describes.
      const view = mirroring.coordinators.describe("m1").find((v) => v.key.partition === p);
      expect(mine.at(-1)?.record).toMatchObject({ state: view?.state, stateEpoch: view?.stateEpoch });
    }
    expect(
      warnings.filter((w) => w.includes("a transition listener threw: Error: listener bug")),
    ).toHaveLength(4);

    // Once stopped, nothing more arrives.
    stop();
    const count = seen.length;
    await runUntil(env, mirroring.admin.pauseTopics("m1", "orders"));
    await runUntil(env, mirroring.whenState("m1", "PAUSED"));
    expect(seen).toHaveLength(count);
  });

  it("a listener added while the partition actors run gets their next changes from the committed state", async () => {
    const env = embeddedApiEnv();
    const { mirroring } = env;
    env.source.controller.createTopic({ name: "orders", replicaAssignment: [[0]], configs: {} });
    await runUntil(env, mirroring.admin.createMirror("m1", { "bootstrap.servers": SOURCE_BOOTSTRAP }));
    await runUntil(env, mirroring.admin.addTopics("m1", "orders"));
    await runUntil(env, mirroring.whenState("m1", "MIRRORING"));

    const seen: PartitionTransition[] = [];
    mirroring.subscribeTransitions((t) => seen.push(t));
    await runUntil(env, mirroring.admin.pauseTopics("m1", "orders"));
    await runUntil(env, mirroring.whenState("m1", "PAUSED"));
    expect(seen.map(show)).toEqual([
      "orders-0 MIRRORING->PAUSING on COMMITTED",
      "orders-0 PAUSING->PAUSED on COMMITTED",
    ]);
    expect(seen[0]?.previous.stateEpoch).toBe(2);
  });
});
