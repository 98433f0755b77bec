import { describe, expect, it } from "vitest";
import { advance, embeddedApiEnv, runUntil, SOURCE_BOOTSTRAP } from "./embedded-api-helpers";

describe("removeTopics while the coordinators cannot load", () => {
  it("is refused with COORDINATOR_NOT_AVAILABLE before mirror.name is set, and goes through once they load", async () => {
    const env = embeddedApiEnv({
      coordinatorLoadTimeoutMs: 5_000,
      destinationBrokers: 2,
      // Every `__mirror_state` partition lives on broker 1 alone: stopping it leaves them without a leader
      // (as an ISR shrunk to a leader that then crashed), and no coordinator can load.
      beforeStart: (destination) =>
        destination.controller.createTopic({
          name: "__mirror_state",
          replicaAssignment: [[1], [1], [1], [1]],
          configs: {},
        }),
    });
    const { destination, mirroring, source } = env;
    source.controller.createTopic({ name: "orders", replicaAssignment: [[0]], configs: {} });
    await runUntil(env, mirroring.admin.createMirror("m1", { "bootstrap.servers": SOURCE_BOOTSTRAP }));
    await runUntil(env, mirroring.admin.addTopics("m1", "orders"));
    await runUntil(env, mirroring.whenState("m1", "MIRRORING"));
    const mirrorName = () => destination.controller.image.topic("orders")?.configs.get("mirror.name");
    expect(mirrorName()).toBe("m1");

    destination.stopBroker(1);
    await advance(env, 100);
    const error = await runUntil(env, mirroring.admin.removeTopics("m1", "orders")).then(
      () => undefined,
      (e: unknown) => e as { errorName?: string; retriable?: boolean; message: string },
    );
    expect(error?.errorName).toBe("COORDINATOR_NOT_AVAILABLE");
    expect(error?.retriable).toBe(true);
    // A refusal changes nothing: the topic still mirrors (it was `m1.removed`, failed over later).
    expect(mirrorName()).toBe("m1");

    destination.startBroker(1);
    const removed = await runUntil(env, mirroring.admin.removeTopics("m1", "orders"));
    expect(removed.topics).toEqual(["orders"]);
    expect(mirrorName()).toBe("m1.removed");
    await runUntil(env, mirroring.whenState("m1", "STOPPED"));
  });
});
