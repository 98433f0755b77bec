import { describe, expect, it } from "vitest";
import { topology } from "./helpers";

/**
 * Re-pointing a topic on B from one source to another: B mirrored `t` from A (`dr`) and failed it over; C
 * copies `t` from A too (fan-out, same topic id). The operator deletes `dr` and adds `t` to a new mirror of
 * C at the same time (commands of two mirrors are not queued behind each other). The deletion clears the
 * `mirror.name` of its own topics only: never that of a topic the other mirror took meanwhile, which would
 * leave its partition copying into a topic no mirror owns, that no --remove could fail over.
 */
describe("deleting a mirror while another mirror of the same destination takes its failed-over topic", () => {
  for (const order of ["add first", "delete first"] as const) {
    it(`leaves the topic to the new mirror, which can fail it over (${order})`, async () => {
      const t = topology(["a", "b", "c"]);
      const a = t.node("a");
      const b = t.node("b");
      const c = t.node("c");
      await t.run(
        a.kafka.admin().createTopics({ topics: [{ topic: "t", numPartitions: 1, replicationFactor: 3 }] }),
      );
      await t.advance(200);
      await t.run(c.mirroring.admin.createMirror("fan", { "bootstrap.servers": "a:9092" }));
      await t.run(c.mirroring.admin.addTopics("fan", "t"));
      await t.run(b.mirroring.admin.createMirror("dr", { "bootstrap.servers": "a:9092" }));
      await t.run(b.mirroring.admin.addTopics("dr", "t"));
      await t.run(b.mirroring.whenCaughtUp("dr"));
      await t.run(b.mirroring.admin.removeTopics("dr", "t"));
      await t.run(b.mirroring.whenState("dr", "STOPPED"));
      await t.run(b.mirroring.admin.createMirror("repoint", { "bootstrap.servers": "c:9092" }));

      const add = b.mirroring.admin.addTopics("repoint", "t");
      const del = b.mirroring.admin.deleteMirror("dr");
      const results = await t.run(Promise.allSettled(order === "add first" ? [add, del] : [del, add]));
      expect(results.map((r) => r.status)).toEqual(["fulfilled", "fulfilled"]);
      expect(b.cluster.controller.image.mirrors.has("dr")).toBe(false);
      expect(b.cluster.controller.image.topic("t")?.configs.get("mirror.name")).toBe("repoint");
      await t.run(b.mirroring.whenState("repoint", "MIRRORING"));

      // The new mirror still owns the topic: it fails it over, and the topic takes writes again.
      await t.run(b.mirroring.admin.removeTopics("repoint", "t"));
      await t.run(b.mirroring.whenState("repoint", "STOPPED"));
      const producer = b.kafka.producer({ idempotent: true });
      await t.run(producer.connect());
      await t.run(producer.send({ topic: "t", messages: [{ key: "k", value: "after the failover" }] }));
    });
  }
});
