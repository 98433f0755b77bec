import { describe, expect, it } from "vitest";
import { topology } from "./helpers";

describe("a cluster whose mirroring was closed, as the source of another cluster's mirror", () => {
  it("still answers its mirrors (the cluster keeps running): another cluster adds its topics", async () => {
    const t = topology(["a", "b"]);
    const a = t.node("a");
    const b = t.node("b");
    await t.run(
      a.kafka.admin().createTopics({ topics: [{ topic: "orders", numPartitions: 1, replicationFactor: 3 }] }),
    );
    // a mirrors b's `payments`: its ListClusterMirrors has something to answer.
    await t.run(
      b.kafka
        .admin()
        .createTopics({ topics: [{ topic: "payments", numPartitions: 1, replicationFactor: 3 }] }),
    );
    await t.run(a.mirroring.admin.createMirror("from-b", { "bootstrap.servers": "b:9092" }));
    await t.run(a.mirroring.admin.addTopics("from-b", "payments"));
    a.mirroring.close();
    // The mirror-loop check of b's add asks a for its mirrors: "the cluster's mirroring was closed" made
    // the add fail as a source that cannot be reached.
    await t.run(b.mirroring.admin.createMirror("dr", { "bootstrap.servers": "a:9092" }));
    const added = await t.run(b.mirroring.admin.addTopics("dr", "orders"));
    expect(added.topics).toEqual(["orders"]);
    await t.run(b.mirroring.whenState("dr", "MIRRORING"));
    // And a loop through a is still refused: a's stored mirror copies b's payments.
    await expect(t.run(b.mirroring.admin.addTopics("dr", "payments"))).rejects.toThrow(
      /the source's mirror 'from-b' already mirrors it from this cluster/,
    );
  });
});
