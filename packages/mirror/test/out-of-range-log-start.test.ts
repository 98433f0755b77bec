import { describe, expect, it } from "vitest";
import { advance, embeddedApiEnv, produce, runUntil, SOURCE_BOOTSTRAP } from "./embedded-api-helpers";

describe("OFFSET_OUT_OF_RANGE below the source's log start (spec §4), on a copy with three replicas", () => {
  // The copy ends at 5 when paused; the source's retention then moves its log start to 3, 5 or 8.
  for (const [logStart, kept] of [
    [3n, "below the copy's end: the copy keeps its end, its log start follows"],
    [5n, "at the copy's end: no OFFSET_OUT_OF_RANGE, the log start follows"],
    [8n, "above the copy's end: truncated fully, restarted at the source's log start"],
  ] as const) {
    it(`source log start ${logStart}, ${kept}`, async () => {
      const env = embeddedApiEnv({ destinationBrokers: 3, numStatePartitions: 1 });
      const { mirroring, destination, source } = env;
      source.controller.createTopic({ name: "orders", replicaAssignment: [[0]], configs: {} });
      await runUntil(env, mirroring.admin.createMirror("m1", { "bootstrap.servers": SOURCE_BOOTSTRAP }));
      destination.controller.createTopic({
        name: "orders",
        replicaAssignment: [[0, 1, 2]],
        configs: {},
        topicId: source.controller.image.topic("orders")!.topicId,
      });
      await runUntil(env, mirroring.admin.addTopics("m1", "orders"));
      for (let i = 0; i < 5; i++) await produce(env, source, "orders", 1);
      await runUntil(env, mirroring.whenCaughtUp("m1"));
      await runUntil(env, mirroring.admin.pauseTopics("m1", "orders"));
      await runUntil(env, mirroring.whenState("m1", "PAUSED"));
      for (let i = 0; i < 5; i++) await produce(env, source, "orders", 1);
      source.leaderFor("orders", 0).deleteRecords("orders", 0, logStart);

      await runUntil(env, mirroring.admin.resumeTopics("m1", "orders"));
      await runUntil(env, mirroring.whenCaughtUp("m1"), 30_000);
      await advance(env, 2000);

      const sourceLog = source.leaderFor("orders", 0).replica("orders", 0)!.log;
      const sourceBatches = [...sourceLog.batches()]
        .filter((b) => b.lastOffset >= logStart)
        .map((b) => b.buffer.toString("hex"));
      expect(sourceBatches).toHaveLength(10 - Number(logStart));
      for (const broker of [0, 1, 2]) {
        const log = destination.broker(broker)!.replica("orders", 0)!.log;
        expect({ broker, start: log.logStartOffset, end: log.logEndOffset, hw: log.highWatermark }).toEqual({
          broker,
          start: logStart,
          end: 10n,
          hw: 10n,
        });
        // Every batch from the log start on is the source's, at the same offset, byte for byte.
        const held = [...log.batches()].filter((b) => b.lastOffset >= logStart);
        expect(held.map((b) => b.buffer.toString("hex"))).toEqual(sourceBatches);
      }
      const [row] = await runUntil(env, mirroring.admin.describe("m1"));
      expect(row).toMatchObject({ state: "MIRRORING", sourceOffset: 10n, destinationOffset: 10n, lag: 0n });
      expect(mirroring.metrics.lags()).toEqual([{ mirror: "m1", topic: "orders", partition: 0, lag: 0n }]);
    });
  }
});
