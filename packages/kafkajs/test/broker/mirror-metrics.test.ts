import { afterAll, describe, inject, it } from "vitest";
import { MIRROR_METRIC_NAMES } from "../../../mirror/src/metrics/mirror-metrics";
import { createServedTopics, kafkaClient, startDestination, until } from "./helpers";

/** The lag gauge and describe, against the real broker's own high watermarks (fetched with kafkajs). */
describe("the lag metrics of a topic mirrored from a real broker", () => {
  const dest = startDestination(87);
  afterAll(() => dest.close());

  it("are the broker's high watermark minus the destination's log end, as describe says, paused or not", async () => {
    const topic = "metrics-lag";
    const kafka = kafkaClient("metrics-lag");
    const admin = kafka.admin();
    await admin.connect();
    const producer = kafka.producer();
    await producer.connect();
    const send = (partition: number, count: number) =>
      producer.send({
        topic,
        messages: Array.from({ length: count }, (_, i) => ({ partition, value: `v${i}` })),
      });
    try {
      await createServedTopics(admin, [{ topic, numPartitions: 2 }]);
      await send(0, 7);
      await send(1, 3);
      await dest.mirroring.admin.createMirror("lagm", { "bootstrap.servers": inject("kafkaBootstrap") });
      await dest.mirroring.admin.addTopics("lagm", topic);
      await dest.mirroring.whenCaughtUp("lagm", { timeoutMs: 120_000 });

      const brokerHighs = async () =>
        new Map((await admin.fetchTopicOffsets(topic)).map((o) => [o.partition, BigInt(o.high)]));
      const leo = (p: number) => dest.cluster.leaderFor(topic, p).replica(topic, p)!.log.logEndOffset;
      const agree = async (expected: [bigint, bigint]) => {
        const highs = await brokerHighs();
        const rows = await dest.mirroring.admin.describe("lagm");
        const text = dest.mirroring.metrics.toPrometheusText();
        for (const p of [0, 1]) {
          const lag = highs.get(p)! - leo(p);
          if (lag !== expected[p]) return `partition ${p}: broker HW - destination LEO is ${lag}`;
          if (rows[p]!.sourceOffset !== highs.get(p) || rows[p]!.lag !== lag)
            return `describe ${p}: ${rows[p]!.sourceOffset} / ${rows[p]!.lag}`;
          const series = `${MIRROR_METRIC_NAMES.lag}{mirror="lagm",topic="${topic}",partition="${p}"} ${lag}\n`;
          if (!text.includes(series)) return `no ${series.trim()} in\n${text}`;
        }
        return undefined;
      };
      await until(() => agree([0n, 0n]), 30_000);

      await dest.mirroring.admin.pauseTopics("lagm", topic);
      await dest.mirroring.whenState("lagm", "PAUSED", { timeoutMs: 30_000 });
      await send(0, 4);
      await until(async () => {
        await dest.mirroring.metrics.refreshPausedLags();
        return agree([4n, 0n]);
      }, 30_000);

      await dest.mirroring.admin.resumeTopics("lagm", topic);
      await dest.mirroring.whenCaughtUp("lagm", { timeoutMs: 120_000 });
      await until(() => agree([0n, 0n]), 30_000);
    } finally {
      await producer.disconnect();
      await admin.disconnect();
    }
  });
});
