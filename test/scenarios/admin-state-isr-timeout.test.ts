import { MirrorCommandTimeoutError, mirrorStatePartitionFor } from "@cluster-mirror/mirror";
import { describe, expect, it } from "vitest";
import { onlyRowOf, ordersOn, topology, untilCaughtUp } from "./helpers";

/**
 * `__mirror_state` taking no write for another reason than a full disk: its ISR under min.insync.replicas,
 * so every append is refused NOT_ENOUGH_REPLICAS (Kafka's Partition.appendRecordsToLeader). The timeout's
 * message says so, not only the leader.
 */
describe("an admin operation while __mirror_state's ISR is under min.insync.replicas", () => {
  it("times out naming the in-sync replicas of the __mirror_state partition waited for", async () => {
    const t = topology(["a", "b"]);
    const [a, b] = [t.node("a"), t.node("b")];
    await ordersOn(t, a, 3);
    await t.run(b.mirroring.admin.createMirror("dr", { "bootstrap.servers": "a:9092" }));
    await t.run(b.mirroring.admin.addTopics("dr", "orders"));
    await untilCaughtUp(t, b, "dr caught up");
    const image = b.cluster.controller.image;
    const [view] = b.mirroring.coordinators.describe("dr");
    const stateCount = image.topic("__mirror_state")!.partitions.length;
    const statePartition = mirrorStatePartitionFor(view!.key, stateCount);
    const meta = image.partition("__mirror_state", statePartition)!;
    const follower = meta.replicas.find((id) => id !== meta.leader)!;
    b.cluster.controller.incrementalAlterConfigs({ type: "topic", name: "__mirror_state" }, [
      { name: "min.insync.replicas", op: "SET", value: "3" },
    ]);
    b.cluster.crashBroker(follower);
    await t.until(
      () => !b.cluster.controller.image.partition("__mirror_state", statePartition)!.isr.includes(follower),
      "the crashed follower out of the ISR",
    );
    const leader = b.cluster.controller.image.partition("__mirror_state", statePartition)!.leader;
    const error = await t
      .run(b.mirroring.admin.pauseTopics("dr", "orders"), 300_000)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MirrorCommandTimeoutError);
    const isr = b.cluster.controller.image.partition("__mirror_state", statePartition)!.isr;
    expect((error as Error).message).toContain(
      `__mirror_state-${statePartition} (leader ${leader}; in-sync replicas ${[...isr].sort((x, y) => x - y).join(", ")} of ${[...meta.replicas].sort((x, y) => x - y).join(", ")}, under min.insync.replicas=3`,
    );
    expect((await onlyRowOf(b)).state).toBe("MIRRORING");
  });
});
