import { afterEach, describe, expect, it } from "vitest";
import { addTopicsWhenReady, createTopic, produce, twoEngineClusters } from "./engine-helpers";

const closers: (() => void)[] = [];
afterEach(() => {
  for (const c of closers.splice(0)) c();
});

const until = async (what: string, ok: () => boolean, ms = 20_000) => {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};

/**
 * A source topic `orders` with `records[p]` records in partition p, mirrored by mirror `m` (with `configs`)
 * into the destination and caught up.
 */
async function mirroredOrders(records: readonly number[], configs: Record<string, string> = {}) {
  const e = twoEngineClusters();
  closers.push(e.close);
  await createTopic(e.source, "orders", records.length);
  for (const [p, n] of records.entries()) await produce(e.source, "orders", p, n);
  await e.dest.mirroring.admin.createMirror("m", { "bootstrap.servers": e.source.bootstrap, ...configs });
  await addTopicsWhenReady(e.dest, "m", "orders");
  await e.dest.mirroring.whenCaughtUp("m", { timeoutMs: 30_000 });
  return e;
}

/**
 * Records deleted on the source (DeleteRecords: a poison record, personal data) leave the copy too: the
 * mirror's log start follows the source's while it mirrors, as a Kafka follower's follows its leader's.
 */
describe("the mirror follows the source's log start", () => {
  it("DeleteRecords on the source raises the destination's log start, on every replica; data above stays", async () => {
    const { source, dest } = await mirroredOrders([30, 10]);

    // Inside the source's only batch of partition 0 (offsets 0-29): the log start may fall inside a batch.
    await source.kafka
      .admin()
      .deleteTopicRecords({ topic: "orders", partitions: [{ partition: 0, offset: "12" }] });
    const logs = (p: number) =>
      dest.cluster.runningBrokers().map((b) => dest.cluster.localBroker(b)!.replica("orders", p)!.log);

    // Before: the destination kept offsets 0-11 for good (only an empty log or OFFSET_OUT_OF_RANGE moved
    // its start), so consumers of the copy still read what the source had purged.
    await until("every destination replica of orders-0 to start at 12", () =>
      logs(0).every((log) => log.logStartOffset === 12n),
    );
    for (const log of logs(0)) expect(log.logEndOffset).toBe(30n);
    for (const log of logs(1)) expect(log.logStartOffset).toBe(0n);
    const rows = await dest.mirroring.admin.describe("m");
    expect(rows.map((r) => [r.partition, r.state, r.lag])).toEqual([
      [0, "MIRRORING", 0n],
      [1, "MIRRORING", 0n],
    ]);

    // Mirroring goes on above it.
    await produce(source, "orders", 0, 5);
    await dest.mirroring.whenCaughtUp("m", { timeoutMs: 30_000 });
    for (const log of logs(0)) expect([log.logStartOffset, log.logEndOffset]).toEqual([12n, 35n]);
  }, 60_000);

  it("a copy started at a source log start inside a batch holds that batch whole on every replica", async () => {
    const e = twoEngineClusters();
    closers.push(e.close);
    await createTopic(e.source, "orders", 1);
    await produce(e.source, "orders", 0, 30);
    await e.source.kafka
      .admin()
      .deleteTopicRecords({ topic: "orders", partitions: [{ partition: 0, offset: "12" }] });
    await e.dest.mirroring.admin.createMirror("m", { "bootstrap.servers": e.source.bootstrap });
    await addTopicsWhenReady(e.dest, "m", "orders");
    const logs = () =>
      e.dest.cluster.runningBrokers().map((b) => e.dest.cluster.localBroker(b)!.replica("orders", 0)!.log);
    // Before: the leader started at 12 and stored the batch at 0 whole, but its followers refused it on
    // every fetch, so the high watermark stayed at 12 and offsets 12-29 were never committed there.
    // The log start follows the source's once the high watermark passed it: on the answer after the one
    // that committed 12-29 (the followers count only from their first fetch after the leader's cut).
    await until("every destination replica of orders-0 to hold 12-29, committed, from 12", () =>
      logs().every((l) => l.logEndOffset === 30n && l.highWatermark === 30n && l.logStartOffset === 12n),
    );
  }, 60_000);

  it("log.start.offset.sync.enable=false keeps what the source deleted, until the copy's own retention", async () => {
    const { source, dest } = await mirroredOrders([10], { "log.start.offset.sync.enable": "false" });
    await expect(
      dest.mirroring.admin.createMirror("bad", {
        "bootstrap.servers": source.bootstrap,
        "log.start.offset.sync.enable": "maybe",
      }),
    ).rejects.toThrow(/log\.start\.offset\.sync\.enable/);
    await source.kafka
      .admin()
      .deleteTopicRecords({ topic: "orders", partitions: [{ partition: 0, offset: "10" }] });
    await produce(source, "orders", 0, 2);
    await dest.mirroring.whenCaughtUp("m", { timeoutMs: 30_000 });
    const log = dest.cluster.leaderFor("orders", 0).replica("orders", 0)!.log;
    expect([log.logStartOffset, log.logEndOffset]).toEqual([0n, 12n]);
  }, 60_000);

  it("never beyond what the destination's in-sync replicas hold, and never down", async () => {
    const { dest } = await mirroredOrders([20]);
    const leader = dest.cluster.leaderFor("orders", 0);
    const log = leader.replica("orders", 0)!.log;
    expect(log.highWatermark).toBe(20n);
    // Above the high watermark it stops at it; lower than the log start changes nothing.
    expect(leader.followSourceLogStart("orders", 0, 50n)).toBe(20n);
    expect(leader.followSourceLogStart("orders", 0, 5n)).toBe(20n);
    expect(log.logStartOffset).toBe(20n);
  }, 60_000);
});
