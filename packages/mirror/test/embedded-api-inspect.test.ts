import { lifecycleStateOf, type MirrorPartitionSnapshot } from "@cluster-mirror/machines";
import { describe, expect, it } from "vitest";
import type { AnyActorRef, InspectionEvent } from "xstate";
import { embeddedApiEnv, runUntil, SOURCE_BOOTSTRAP } from "./embedded-api-helpers";

type SnapshotEvent = Extract<InspectionEvent, { type: "@xstate.snapshot" }>;

/** The id of the actor an inspection event is about. */
function idOf(e: InspectionEvent): string {
  return (e.actorRef as AnyActorRef).id;
}

/** The committed lifecycle state of a partition actor's snapshot (the record's while a change commits). */
function lifecycleOf(e: SnapshotEvent): string {
  return lifecycleStateOf(e.snapshot as MirrorPartitionSnapshot);
}

describe("ClusterMirroring.inspect: XState's inspection of the coordinator actors", () => {
  it("shows each partition as an actor spawned under its mirror's group and its shard, moving to MIRRORING", async () => {
    const env = embeddedApiEnv();
    const { mirroring } = env;
    const events: InspectionEvent[] = [];
    const stop = mirroring.inspect((e) => events.push(e));
    const topicId = env.source.controller.createTopic({
      name: "orders",
      replicaAssignment: [[0], [0]],
      configs: {},
    });
    await runUntil(env, mirroring.admin.createMirror("m1", { "bootstrap.servers": SOURCE_BOOTSTRAP }));
    await runUntil(env, mirroring.admin.addTopics("m1", "orders"));
    await runUntil(env, mirroring.whenState("m1", "MIRRORING"));

    /** The last snapshot's children of each actor matching `which`. */
    const lastSnapshots = (which: (ref: AnyActorRef) => boolean) => {
      const last = new Map<AnyActorRef, Record<string, AnyActorRef>>();
      for (const e of events) {
        if (e.type !== "@xstate.snapshot" || !which(e.actorRef as AnyActorRef)) continue;
        const children = (e.snapshot as { children?: Record<string, AnyActorRef> }).children ?? {};
        last.set(e.actorRef as AnyActorRef, children);
      }
      return [...last];
    };
    const ids = [0, 1].map((p) => `m1/${topicId}/${p}`);
    for (const id of ids) {
      // Spawned by the group of mirror m1, itself a child of a __mirror_state shard.
      const created = events.find(
        (e): e is Extract<InspectionEvent, { type: "@xstate.actor" }> =>
          e.type === "@xstate.actor" && idOf(e) === id,
      );
      expect(created, `no @xstate.actor event for ${id}`).toBeDefined();
      // A child of the group of mirror m1 (one per shard that owns m1's partitions), itself a child of a
      // __mirror_state shard.
      const group = lastSnapshots((ref) => ref.id.startsWith("mirror:m1#")).find(([, c]) => id in c)?.[0];
      expect(group, `no group of m1 spawned ${id}`).toBeDefined();
      const shard = lastSnapshots((ref) => ref.id.startsWith("__mirror_state-")).find(([, c]) =>
        Object.values(c).includes(group as AnyActorRef),
      );
      expect(shard, "no shard spawned the group").toBeDefined();
      // Its committed changes, as snapshots: UNKNOWN -> PREPARING -> MIRRORING.
      const states = events
        .filter((e): e is SnapshotEvent => e.type === "@xstate.snapshot" && idOf(e) === id)
        .map(lifecycleOf);
      const distinct = states.filter((s, i) => i === 0 || s !== states[i - 1]);
      expect(distinct).toEqual(["UNKNOWN", "PREPARING", "MIRRORING"]);
      // The events that drove it include the commit results.
      const received = events
        .filter((e) => e.type === "@xstate.event" && idOf(e) === id)
        .map((e) => (e as { event: { type: string } }).event.type);
      expect(received).toContain("COMMITTED");
    }

    // Once stopped, nothing more arrives.
    stop();
    const seen = events.length;
    await runUntil(env, mirroring.admin.pauseTopics("m1", "orders"));
    await runUntil(env, mirroring.whenState("m1", "PAUSED"));
    expect(events.length).toBe(seen);
  });
});
