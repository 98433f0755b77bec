import { describe, expect, it } from "vitest";
import { topology } from "./helpers";

/** Every batch of a log, as hex: two logs compared byte for byte. */
const hexesOf = (log: { batches(): Iterable<{ buffer: Buffer }> }) =>
  [...log.batches()].map((x) => x.buffer.toString("hex"));

/**
 * A -> B mirroring `orders` (1 partition, 5 records), failed over on B. `holdLmeLookups` is awaited before
 * A answers each LME lookup (a slow source).
 */
async function failedOver(holdLmeLookups?: () => Promise<void>, partitions = 1) {
  const t = topology(["a", "b"]);
  const a = t.node("a");
  const b = t.node("b");
  if (holdLmeLookups) {
    const served = a.mirroring.asSource();
    t.registry.unregister("a:9092");
    t.registry.register("a:9092", a.cluster, {
      ...served,
      lastMirrorEpoch: async (topicId, partition) => {
        await holdLmeLookups();
        return served.lastMirrorEpoch!(topicId, partition);
      },
    });
  }
  await t.run(a.kafka.admin().createTopics({ topics: [{ topic: "orders", numPartitions: partitions }] }));
  await t.advance(200);
  const producer = a.kafka.producer({ idempotent: true });
  await t.run(producer.connect());
  for (let i = 0; i < 5; i++) {
    await t.run(producer.send({ topic: "orders", messages: [{ key: `k${i}`, value: `a-${i}` }], acks: -1 }));
  }
  await t.run(b.mirroring.admin.createMirror("dr", { "bootstrap.servers": "a:9092" }));
  await t.run(b.mirroring.admin.addTopics("dr", "orders"));
  await t.run(b.mirroring.whenCaughtUp("dr"));
  await t.run(b.mirroring.admin.removeTopics("dr", "orders"));
  await t.run(b.mirroring.whenState("dr", "STOPPED"));
  const logOnB = () => b.cluster.leaderFor("orders", 0).replica("orders", 0)!.log;
  const logOnA = () => a.cluster.leaderFor("orders", 0).replica("orders", 0)!.log;
  return { t, a, b, logOnA, logOnB };
}

/**
 * An add that must be refused with UNSAFE_TRUNCATION, naming the last `records` records of `copy`, and
 * change nothing; asked again with `--truncate-local-writes`, it goes ahead and `copy` becomes a byte copy
 * of `source`.
 */
async function refusedThenTruncated(
  t: Awaited<ReturnType<typeof failedOver>>["t"],
  mirroring: Awaited<ReturnType<typeof failedOver>>["a"]["mirroring"],
  mirror: string,
  copy: () => Parameters<typeof hexesOf>[0] & { logEndOffset: bigint },
  source: () => Parameters<typeof hexesOf>[0],
  records: bigint,
): Promise<void> {
  const leo = copy().logEndOffset;
  const refusal = t.run(mirroring.admin.addTopics(mirror, "orders"));
  await expect(refusal).rejects.toMatchObject({
    errorName: "UNSAFE_TRUNCATION",
    partitions: [{ topic: "orders", partition: 0, records, fromOffset: leo - records }],
  });
  expect(copy().logEndOffset).toBe(leo);
  await t.run(mirroring.admin.addTopics(mirror, "orders", { truncateLocalWrites: true }));
  await t.run(mirroring.whenCaughtUp(mirror));
  expect(hexesOf(copy())).toEqual(hexesOf(source()));
}

describe("re-adding a failed-over topic (issue 11 item 8)", () => {
  it("refuses when it would truncate records written since the failover, names them, and changes nothing", async () => {
    const { t, b, logOnA, logOnB } = await failedOver();
    const producerB = b.kafka.producer({ idempotent: true });
    await t.run(producerB.connect());
    const local = [1, 2, 3].map((i) => ({ key: `b${i}`, value: `written on b ${i}` }));
    await t.run(producerB.send({ topic: "orders", messages: local, acks: -1 }));
    const leo = logOnB().logEndOffset;

    const refusal = t.run(b.mirroring.admin.addTopics("dr", "orders"));
    await expect(refusal).rejects.toMatchObject({
      errorName: "UNSAFE_TRUNCATION",
      retriable: false,
      partitions: [{ topic: "orders", partition: 0, records: 3n, fromOffset: leo - 3n }],
    });
    await expect(refusal).rejects.toThrow(/orders-0: 3 record\(s\) from offset \d+.*--truncate-local-writes/);
    await t.advance(1_000);
    expect(b.cluster.controller.image.topic("orders")?.configs.get("mirror.name")).toBe("dr.removed");
    expect((await t.run(b.mirroring.admin.describe("dr"))).map((r) => r.state)).toEqual(["STOPPED"]);
    expect(logOnB().logEndOffset).toBe(leo);
    await t.run(producerB.send({ topic: "orders", messages: [{ key: "b4", value: "still writable" }] }));

    // Asked for explicitly, the failback truncation goes ahead and B mirrors A again.
    await t.run(b.mirroring.admin.addTopics("dr", "orders", { truncateLocalWrites: true }));
    await t.run(b.mirroring.whenCaughtUp("dr"));
    expect(hexesOf(logOnB())).toEqual(hexesOf(logOnA()));
  });

  it("still refuses after a re-add was cancelled before its truncation: the cancel keeps the LME, and with it the protection (soak FC_SEED=4)", async () => {
    // While `held` is pending, A's answers to LME lookups wait: PREPARING cannot truncate yet.
    let held: Promise<void> = Promise.resolve();
    const { t, b, logOnB } = await failedOver(() => held);
    const producerB = b.kafka.producer({ idempotent: true });
    await t.run(producerB.connect());
    const local = [1, 2, 3].map((i) => ({ key: `b${i}`, value: `written on b ${i}` }));
    await t.run(producerB.send({ topic: "orders", messages: local, acks: -1 }));
    const leo = logOnB().logEndOffset;
    let release = () => {};
    held = new Promise((resolve) => {
      release = resolve;
    });
    // The operator agrees to drop them, then changes their mind at once: removed while PREPARING, before the
    // truncation. The topic keeps its own log, and its producer state: STOPPING appends no marker, no PID reset.
    const seen: string[] = [];
    b.mirroring.subscribeTransitions((x) => seen.push(`${x.previous.state}->${x.record.state}`));
    const readd = b.mirroring.admin.addTopics("dr", "orders", { truncateLocalWrites: true });
    const cancel = b.mirroring.admin.removeTopics("dr", "orders");
    await t.run(readd);
    await t.run(cancel);
    await t.run(b.mirroring.whenState("dr", "STOPPED"));
    // The lookup PREPARING was waiting for now answers: the failed-over partition must not act on it.
    release();
    await t.advance(1_000);
    expect(seen).toEqual(["STOPPED->PREPARING", "PREPARING->STOPPING", "STOPPING->STOPPED"]);
    expect(logOnB().logEndOffset).toBe(leo);
    const kept = [...logOnB().batches()].filter((x) => !x.isControl && x.baseOffset >= leo - 3n);
    expect(kept.map((x) => x.recordCount)).toEqual([3]);

    // A re-add without the option must still name the three records it would drop.
    const refusal = t.run(b.mirroring.admin.addTopics("dr", "orders"));
    await expect(refusal).rejects.toMatchObject({
      errorName: "UNSAFE_TRUNCATION",
      partitions: [{ topic: "orders", partition: 0, records: 3n, fromOffset: leo - 3n }],
    });
  });

  it("re-adds without the option when nothing was written since the failover", async () => {
    const { t, b } = await failedOver();
    const added = await t.run(b.mirroring.admin.addTopics("dr", "orders"));
    expect(added.topics).toEqual(["orders"]);
    await t.run(b.mirroring.whenCaughtUp("dr"));
  });

  it("refuses a failback that would drop writes the new primary never mirrored (its failover was mid-epoch; soak FC_SEED=75)", async () => {
    const { t, a, b, logOnA, logOnB } = await failedOver();
    const producerB = b.kafka.producer({ idempotent: true });
    await t.run(producerB.connect());
    await t.run(producerB.send({ topic: "orders", messages: [{ key: "b1", value: "mirrored" }], acks: -1 }));
    // A mirrors B (the failback), then stops fetching; B writes once more in the same leader epoch; A fails
    // over without it (unplanned): A's last mirrored epoch is B's current one, which ends earlier on A.
    await t.run(a.mirroring.admin.createMirror("back", { "bootstrap.servers": "b:9092" }));
    await t.run(a.mirroring.admin.addTopics("back", "orders"));
    await t.run(a.mirroring.whenCaughtUp("back"));
    await t.run(a.mirroring.admin.pauseTopics("back", "orders"));
    await t.run(a.mirroring.whenState("back", "PAUSED"));
    await t.run(
      producerB.send({ topic: "orders", messages: [{ key: "b2", value: "never on a" }], acks: -1 }),
    );
    await t.run(a.mirroring.admin.removeTopics("back", "orders"));
    await t.run(a.mirroring.whenState("back", "STOPPED"));

    // Mirroring B from A again would cut B where A's copy of that epoch ends: B's last write goes.
    await refusedThenTruncated(t, b.mirroring, "dr", logOnB, logOnA, 1n);
  });

  it("refuses a failback of a topic failed over from FAILED before it held mirrored data, then written to (no PID reset; soak transitions FC_SEED=71)", async () => {
    const { t, a, b, logOnA, logOnB } = await failedOver();
    const producerB = b.kafka.producer({ idempotent: true });
    await t.run(producerB.connect());
    await t.run(producerB.send({ topic: "orders", messages: [{ key: "b1", value: "on b" }], acks: -1 }));
    // A fails back, but its LME lookups on B fail until `broken` is cleared: PREPARING fails before it
    // truncates anything, and the operator removes the topic again. A STOPPING from FAILED over a log
    // without mirrored data writes no PID reset (issue 11 item 5b): only A's LME (-1) marks the failover.
    let broken = true;
    const served = b.mirroring.asSource();
    t.registry.unregister("b:9092");
    t.registry.register("b:9092", b.cluster, {
      ...served,
      lastMirrorEpoch: async (topicId, partition) => {
        if (broken) throw new Error("simulated: b does not answer LME lookups");
        return served.lastMirrorEpoch!(topicId, partition);
      },
    });
    await t.run(a.mirroring.admin.createMirror("back", { "bootstrap.servers": "b:9092" }));
    await t.run(a.mirroring.admin.addTopics("back", "orders"));
    await t.until(async () => {
      const [row] = await a.mirroring.admin.describe("back");
      return row?.state === "FAILED";
    }, "back FAILED");
    const before = hexesOf(logOnA());
    await t.run(a.mirroring.admin.removeTopics("back", "orders"));
    await t.run(a.mirroring.whenState("back", "STOPPED"));
    expect(hexesOf(logOnA())).toEqual(before); // no marker, no PID reset
    // A's applications write there again (acknowledged by its ISR): A is a primary of its own now.
    const producerA = a.kafka.producer({ idempotent: true });
    await t.run(producerA.connect());
    const local = [1, 2, 3].map((i) => ({ key: `a${i}`, value: `written on a ${i}` }));
    await t.run(producerA.send({ topic: "orders", messages: local, acks: -1 }));
    broken = false;

    // Failing back again would align A with B's copy of its history: A's three writes would go.
    await refusedThenTruncated(t, a.mirroring, "back", logOnA, logOnB, 3n);
  });

  it("refuses a re-add when records land on a partition it counted while it asks the source about the next", async () => {
    let lookups = 0;
    let duringSecondLookup: (() => Promise<void>) | undefined;
    const { t, a, b } = await failedOver(async () => {
      if (++lookups === 2) await duringSecondLookup?.();
    }, 2);
    const producerB = b.kafka.producer({ idempotent: true });
    await t.run(producerB.connect());
    for (const partition of [0, 1]) {
      await t.run(producerB.send({ topic: "orders", messages: [{ value: "on b", partition }], acks: -1 }));
    }
    // a fails back from b (copying "on b"), then fails over again: b's writes are on a, not at risk.
    await t.run(a.mirroring.admin.createMirror("back", { "bootstrap.servers": "b:9092" }));
    await t.run(a.mirroring.admin.addTopics("back", "orders"));
    await t.run(a.mirroring.whenCaughtUp("back"));
    await t.run(a.mirroring.admin.removeTopics("back", "orders"));
    await t.run(a.mirroring.whenState("back", "STOPPED"));
    // b re-adds from a. It counts orders-0's local writes (none at risk), then asks a about orders-1;
    // meanwhile an application still writes to orders-0.
    let late: bigint | undefined;
    lookups = 0;
    duringSecondLookup = async () => {
      const sent = await producerB.send({
        topic: "orders",
        messages: [{ value: "late", partition: 0 }],
        acks: -1,
      });
      late = BigInt(sent[0]!.baseOffset);
    };
    const refusal = t.run(b.mirroring.admin.addTopics("dr", "orders"));
    await expect(refusal).rejects.toMatchObject({
      errorName: "UNSAFE_TRUNCATION",
      partitions: [{ topic: "orders", partition: 0, records: 1n }],
    });
    expect(late).toBeDefined();
    await t.advance(10_000);
    const log = b.cluster.leaderFor("orders", 0).replica("orders", 0)!.log;
    const data = [...log.batches()].filter((x) => !x.isControl).map((x) => x.baseOffset);
    expect(data).toContain(late);
  });

  it("fails back without the option: the old primary wrote nothing after the failover", async () => {
    const { t, a, b, logOnB } = await failedOver();
    const producerB = b.kafka.producer({ idempotent: true });
    await t.run(producerB.connect());
    await t.run(producerB.send({ topic: "orders", messages: [{ key: "b", value: "on b" }], acks: -1 }));
    await t.run(a.mirroring.admin.createMirror("back", { "bootstrap.servers": "b:9092" }));
    await t.run(a.mirroring.admin.addTopics("back", "orders"));
    await t.run(a.mirroring.whenCaughtUp("back"));
    expect(a.cluster.leaderFor("orders", 0).replica("orders", 0)!.log.logEndOffset).toBe(
      logOnB().logEndOffset,
    );
  });
});
