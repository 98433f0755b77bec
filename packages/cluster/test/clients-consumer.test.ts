import { describe, expect, it } from "vitest";
import type { EachBatchPayload, EachMessagePayload } from "../src/index";
import { clientCluster, values } from "./clients-helpers";

async function setup(partitions = 1, rf = 3) {
  const t = clientCluster();
  const admin = t.kafka.admin();
  await t.run(
    admin.createTopics({ topics: [{ topic: "t", numPartitions: partitions, replicationFactor: rf }] }),
  );
  const producer = t.kafka.producer({ idempotent: true });
  await producer.connect();
  const produce = (vals: string[], partition?: number) =>
    t.run(
      producer.send({
        topic: "t",
        messages: vals.map((value) => ({ value, ...(partition === undefined ? {} : { partition }) })),
      }),
    );
  return { ...t, admin, producer, produce };
}

describe("consumer groups", () => {
  it("rebalances partitions over members as they join and leave", async () => {
    const t = await setup(4);
    const a = t.kafka.consumer({ groupId: "g" });
    const b = t.kafka.consumer({ groupId: "g" });
    for (const c of [a, b]) {
      await c.connect();
      await c.subscribe({ topic: "t" });
    }
    await t.run(a.poll());
    expect(a.assignment().map((tp) => tp.partition)).toEqual([0, 1, 2, 3]);
    await t.run(b.poll());
    await t.run(a.poll()); // a learns the new generation at its heartbeat
    const pa = a.assignment().map((tp) => tp.partition);
    const pb = b.assignment().map((tp) => tp.partition);
    expect([...pa, ...pb].sort()).toEqual([0, 1, 2, 3]);
    expect(pa.length).toBe(2);
    expect(a.membership()!.generationId).toBe(b.membership()!.generationId);
    await t.run(b.disconnect());
    await t.run(a.poll());
    expect(a.assignment()).toHaveLength(4);
  });

  it("commits offsets with the leader epoch of the last record, and resumes from them", async () => {
    const t = await setup();
    await t.produce(["a", "b"]);
    t.cluster.crashBroker(t.cluster.leaderFor("t", 0).brokerId);
    t.settle();
    await t.produce(["c"]);
    const newEpoch = t.cluster.controller.image.partition("t", 0)!.leaderEpoch;
    expect(newEpoch).toBe(1);
    const c1 = t.kafka.consumer({ groupId: "g" });
    await c1.connect();
    await c1.subscribe({ topic: "t", fromBeginning: true });
    expect(values(await t.run(c1.poll()))).toEqual(["a", "b", "c"]);
    await t.run(c1.commitOffsets());
    const committed = t.cluster.groups.fetchOffsets("g").get("t:0")!;
    expect([committed.offset, committed.leaderEpoch]).toEqual([3n, 1]);
    await t.run(c1.disconnect());
    await t.produce(["d"]);
    const c2 = t.kafka.consumer({ groupId: "g" });
    await c2.connect();
    await c2.subscribe({ topic: "t" }); // fromBeginning false: but committed offsets win
    expect(values(await t.run(c2.poll()))).toEqual(["d"]);
    // A fresh group without fromBeginning starts at the end.
    const c3 = t.kafka.consumer({ groupId: "other" });
    await c3.connect();
    await c3.subscribe({ topic: "t" });
    expect(values(await t.run(c3.poll()))).toEqual([]);
    await t.produce(["e"]);
    expect(values(await t.run(c3.poll()))).toEqual(["e"]);
  });

  it("keeps committed offsets when brokers restart (groups live at cluster level here)", async () => {
    const t = await setup();
    await t.produce(["a", "b", "c"]);
    const c = t.kafka.consumer({ groupId: "g" });
    await c.connect();
    await c.subscribe({ topic: "t", fromBeginning: true });
    await t.run(c.poll());
    await t.run(c.commitOffsets([{ topic: "t", partition: 0, offset: "2" }]));
    await t.run(c.disconnect());
    for (const id of [0, 1, 2]) t.cluster.crashBroker(id);
    for (const id of [0, 1, 2]) t.cluster.startBroker(id);
    t.settle(1000);
    const again = t.kafka.consumer({ groupId: "g" });
    await again.connect();
    await again.subscribe({ topic: "t" });
    expect(values(await t.run(again.poll()))).toEqual(["c"]);
    expect((await t.admin.describeGroups(["g"])).groups[0]!.state).toBe("Stable");
  });

  it("rejoins as a new member after its session expired", async () => {
    const t = await setup();
    const c = t.kafka.consumer({ groupId: "g", sessionTimeout: 1000 });
    await c.connect();
    await c.subscribe({ topic: "t" });
    await t.run(c.poll());
    const first = c.membership()!.memberId;
    // The cluster's own session check (every second of virtual time) removes the silent member.
    t.settle(2000);
    expect(t.cluster.groups.describeGroup("g").members).toEqual([]);
    await t.run(c.poll());
    expect(c.membership()!.memberId).not.toBe(first);
    expect(c.assignment()).toHaveLength(1);
  });
});

describe("consumer fetch semantics", () => {
  it("skips the records of a batch below the fetch offset (seek into the middle of a batch)", async () => {
    const t = await setup();
    await t.produce(["a", "b", "c", "d"]);
    const c = t.kafka.consumer({ groupId: "g", readUncommitted: true });
    await c.connect();
    await c.subscribe({ topic: "t" });
    await t.run(c.poll());
    c.seek({ topic: "t", partition: 0, offset: "2" });
    expect((await t.run(c.poll())).map((m) => [m.message.offset, m.message.value?.toString()])).toEqual([
      ["2", "c"],
      ["3", "d"],
    ]);
  });

  it("pauses and resumes partitions", async () => {
    const t = await setup(2);
    await t.produce(["p0"], 0);
    await t.produce(["p1"], 1);
    const c = t.kafka.consumer({ groupId: "g" });
    await c.connect();
    await c.subscribe({ topic: "t", fromBeginning: true });
    c.pause([{ topic: "t", partitions: [1] }]);
    expect(values(await t.run(c.poll()))).toEqual(["p0"]);
    expect(c.paused()).toEqual([{ topic: "t", partitions: [1] }]);
    c.resume([{ topic: "t" }]);
    expect(values(await t.run(c.poll()))).toEqual(["p1"]);
  });
});

describe("consumer run loop", () => {
  it("delivers eachMessage in order, auto-commits, and stops on disconnect", async () => {
    const t = await setup();
    await t.produce(["a", "b"]);
    const c = t.kafka.consumer({ groupId: "g", maxWaitTimeInMs: 100 });
    await c.connect();
    await c.subscribe({ topic: "t", fromBeginning: true });
    const seen: string[] = [];
    await c.run({
      eachMessage: async ({ message }: EachMessagePayload) => {
        seen.push(message.value!.toString());
      },
    });
    await t.run(new Promise<void>((resolve) => c.on(c.events.COMMIT_OFFSETS, () => resolve())));
    expect(seen).toEqual(["a", "b"]);
    await t.produce(["c"]);
    await t.run(
      (async () => {
        while (seen.length < 3) await new Promise((r) => setImmediate(r));
      })(),
    );
    expect(seen).toEqual(["a", "b", "c"]);
    await t.run(c.disconnect());
    expect(t.cluster.groups.fetchOffsets("g").get("t:0")?.offset).toBe(3n);
    expect((await t.admin.describeGroups(["g"])).groups[0]!.state).toBe("Empty");
  });

  it("eachBatch gets kafkajs's batch; an eachMessage failure redelivers from the failed record", async () => {
    const t = await setup();
    await t.produce(["a", "b", "c"]);
    const c = t.kafka.consumer({ groupId: "g" });
    await c.connect();
    await c.subscribe({ topic: "t", fromBeginning: true });
    let crashed: unknown;
    c.on(c.events.CRASH, (e) => {
      crashed = e.payload.error;
    });
    const seen: string[] = [];
    await c.run({
      eachMessage: async ({ message }) => {
        if (message.value!.toString() === "b" && !seen.includes("b!")) {
          seen.push("b!");
          throw new Error("boom");
        }
        seen.push(message.value!.toString());
      },
    });
    await t.run(
      (async () => {
        while (!crashed) await new Promise((r) => setImmediate(r));
      })(),
    );
    expect(seen).toEqual(["a", "b!"]);
    expect(t.cluster.groups.fetchOffsets("g").get("t:0")?.offset).toBe(1n);
    await t.run(c.stop());
    const batches: { offsets: string[]; hw: string; lag: string }[] = [];
    await c.run({
      eachBatch: async ({ batch }: EachBatchPayload) => {
        batches.push({
          offsets: batch.messages.map((m) => m.offset),
          hw: batch.highWatermark,
          lag: batch.offsetLag(),
        });
      },
    });
    await t.run(
      (async () => {
        while (batches.length === 0) await new Promise((r) => setImmediate(r));
      })(),
    );
    await t.run(c.disconnect());
    expect(batches[0]).toEqual({ offsets: ["1", "2"], hw: "3", lag: "0" });
    expect(t.cluster.groups.fetchOffsets("g").get("t:0")?.offset).toBe(3n);
  });
});
