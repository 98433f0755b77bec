import { KafkaError } from "@cluster-mirror/protocol";
import { afterEach, describe, expect, it } from "vitest";
import { KafkajsSourceCluster } from "../src/kafkajs-source";
import { fakeBroker } from "./fixtures/fake-fetch-broker";

const closing: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

/**
 * A new leader whose followers have not fetched from it yet has a high watermark below the start of its
 * epoch (KIP-207): Kafka refuses ListOffsets LATEST then, and `ReplicaManager.fetchOffset` (3.9) names the
 * refusal by the request's version: OFFSET_NOT_AVAILABLE from v5 on, LEADER_NOT_AVAILABLE before ("Only
 * V5 and newer ListOffset calls should get OFFSET_NOT_AVAILABLE"). The promote's catch-up barrier waits
 * out OFFSET_NOT_AVAILABLE only (any other failure calls the source unreachable and fails the promote).
 */
async function laggingLeader(laggingAnswers: number) {
  const versions: number[] = [];
  const broker = await fakeBroker(
    () => ({ topics: [] }),
    [{ name: "t", errorCode: 0, partitions: 1 }],
    ({ version, timestamp }) => {
      versions.push(version);
      if (timestamp === -1n && versions.length <= laggingAnswers) return { errorCode: version >= 5 ? 78 : 5 };
      return { errorCode: 0, offset: 42n };
    },
  );
  const source = new KafkajsSourceCluster("m", { "bootstrap.servers": `127.0.0.1:${broker.port}` });
  closing.push(broker.close, () => source.close());
  return { source, versions };
}

describe("ListOffsets LATEST on a source leader whose high watermark lags its epoch start (KIP-207)", () => {
  it("is OFFSET_NOT_AVAILABLE, the answer a promote waits out, not LEADER_NOT_AVAILABLE", async () => {
    const { source, versions } = await laggingLeader(1_000);
    const failure = await source.listOffsets("t", 0, -1n).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(KafkaError);
    expect(failure).toMatchObject({ errorName: "OFFSET_NOT_AVAILABLE", retriable: true });
    expect(versions.every((v) => v >= 5)).toBe(true);
  });

  it("answers the high watermark once the leader's followers caught up", async () => {
    const { source } = await laggingLeader(2);
    // The adapter asks again itself (three tries), as the promote does after OFFSET_NOT_AVAILABLE.
    expect(await source.listOffsets("t", 0, -1n)).toBe(42n);
    expect(await source.listOffsets("t", 0, -2n)).toBe(42n);
  });
});
