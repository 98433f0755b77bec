import { KafkaError } from "@cluster-mirror/protocol";
import { afterEach, describe, expect, it } from "vitest";
import { KafkajsSourceCluster } from "../src/kafkajs-source";
import { fakeBroker } from "./fixtures/fake-fetch-broker";

const closing: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

const TOPIC_ID = "6d8f5b0e-4a1c-4f2b-9e3d-1a2b3c4d5e6f";

/** A fake source broker with topic `t` (one partition, id TOPIC_ID); `onListOffsets` runs as it answers one. */
async function sourceWith(onListOffsets: (source: KafkajsSourceCluster) => void = () => {}) {
  let source: KafkajsSourceCluster | undefined;
  const broker = await fakeBroker(
    () => ({ topics: [] }),
    [{ name: "t", errorCode: 0, partitions: 1, topicId: TOPIC_ID }],
    () => {
      onListOffsets(source!);
      return { errorCode: 0, offset: 7n };
    },
  );
  source = new KafkajsSourceCluster("m", { "bootstrap.servers": `127.0.0.1:${broker.port}` });
  closing.push(broker.close, () => source.close());
  return source;
}

const failureOf = (work: Promise<unknown>) =>
  work.then(
    () => undefined,
    (error: unknown) => error,
  );

/**
 * The engine closes a mirror's source when the mirror's connection configs change (new credentials, new
 * bootstrap servers) and reaches the source through the new one from then on. A step that was using the
 * old one (PREPARING's ListOffsets) is retried on the new one: its failure is retriable, as Kafka's clients
 * fail the calls of a closed client with a TimeoutException (a RetriableException: KafkaAdminClient's "The
 * AdminClient thread has exited"). Non-retriable, it failed the partition for good (FAILED, retry -1, until
 * an operator recovered it) for a credential rotation.
 */
describe("a call on a closed kafkajs source", () => {
  it("fails retriable: the engine retries it on the mirror's current connection", async () => {
    const source = await sourceWith();
    expect(await source.listOffsets("t", 0, -1n, TOPIC_ID)).toBe(7n);
    await source.close();
    const failure = await failureOf(source.listOffsets("t", 0, -1n, TOPIC_ID));
    expect(failure).toBeInstanceOf(KafkaError);
    expect(failure).toMatchObject({ errorName: "BROKER_NOT_AVAILABLE", retriable: true });
    expect((failure as Error).message).toMatch(/m: the source's connection was closed/);
  });

  it("closed while its ListOffsets is answered (before the topic id is confirmed): retriable", async () => {
    const source = await sourceWith((s) => void s.close());
    const failure = await failureOf(source.listOffsets("t", 0, -1n, TOPIC_ID));
    expect(failure).toBeInstanceOf(KafkaError);
    expect(failure).toMatchObject({ retriable: true });
  });
});
