import { describe, expect, it } from "vitest";
import { mirroredOrders } from "./helpers";

describe("topic commands of one mirror run one at a time", () => {
  it("a pause racing a remove never marks the failed-over topic paused", async () => {
    const { t, b } = await mirroredOrders();
    await t.run(b.mirroring.whenState("dr", "MIRRORING"));

    // Issued together, pause first: on main before the queue, the pause checked MIRRORING, waited for the
    // coordinators, and then overwrote the remove's `.removed` with `.paused` on a topic that went STOPPED.
    const pause = b.mirroring.admin.pauseTopics("dr", "orders");
    const remove = b.mirroring.admin.removeTopics("dr", "orders");
    const [paused, removed] = await t.run(Promise.allSettled([pause, remove]));
    expect(paused.status).toBe("fulfilled");
    expect(removed.status).toBe("fulfilled");
    await t.run(b.mirroring.whenState("dr", "STOPPED"));
    expect(b.cluster.controller.image.topic("orders")?.configs.get("mirror.name")).toBe("dr.removed");

    // The other order: the remove goes first, so the pause finds no topic to pause and changes nothing.
    const { t: t2, b: b2 } = await mirroredOrders();
    await t2.run(b2.mirroring.whenState("dr", "MIRRORING"));
    const removeFirst = b2.mirroring.admin.removeTopics("dr", "orders");
    const pauseAfter = b2.mirroring.admin.pauseTopics("dr", "orders");
    const [r2, p2] = await t2.run(Promise.allSettled([removeFirst, pauseAfter]));
    expect(r2.status).toBe("fulfilled");
    expect(p2.status).toBe("rejected");
    await t2.run(b2.mirroring.whenState("dr", "STOPPED"));
    expect(b2.cluster.controller.image.topic("orders")?.configs.get("mirror.name")).toBe("dr.removed");
  });
});
