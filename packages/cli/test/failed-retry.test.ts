import { afterEach, describe, expect, it } from "vitest";
import { MirrorNode } from "../src/node/mirror-node";

const nodes: MirrorNode[] = [];
afterEach(() => {
  for (const n of nodes.splice(0)) n.close();
});

const until = async (what: string, ok: () => Promise<boolean>, ms = 20_000) => {
  const end = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
};

describe("the node's FAILED retry settings (--failed-retry-max-attempts)", () => {
  it("reach every cluster's mirrors: a partition whose source has no leader gives up after the attempts given", async () => {
    const node = MirrorNode.start({
      name: "dr",
      brokers: 1,
      sources: [{ name: "primary", brokers: 2 }],
      numStatePartitions: 1,
      retry: { baseMs: 1, capMs: 5, maxAttempts: 2 },
    });
    nodes.push(node);
    const primary = node.cluster("primary").cluster;
    primary.controller.createTopic({ name: "orders", replicaAssignment: [[1]] });
    const admin = node.destination.mirroring.admin;
    await admin.createMirror("m", { "bootstrap.servers": "primary:9092" });
    // The source topic has no leader: PREPARING cannot ask it for offsets, and fails (retriably).
    primary.stopBroker(1);
    await admin.addTopics("m", "orders");
    const row = async () => (await admin.describe("m")).find((r) => r.topic === "orders");
    // With the engine's default (10 attempts from 1 s up to 300 s) this would take minutes.
    await until("orders-0 FAILED for good after 2 attempts", async () => (await row())?.retryAttempt === -1);
    expect((await row())?.state).toBe("FAILED");

    // The source's broker is back: --recover starts the partition over at once (it never aligned:
    // PREPARING), with the attempts given again.
    primary.startBroker(1);
    const recovered = await admin.recoverTopics("m", "orders");
    expect(recovered.message).toBe("Recovered 1 partition(s) of mirror m: [orders-0]");
    await until("orders-0 MIRRORING after --recover", async () => (await row())?.state === "MIRRORING");
    expect(await row()).toMatchObject({ retryAttempt: 0, errorMessage: null });
  }, 60_000);
});
