import { KafkaError } from "@cluster-mirror/protocol";
import kafkajs from "kafkajs";
import { afterEach, describe, expect, it } from "vitest";
import { asSourceError } from "../src/errors";
import { KafkajsSourceCluster } from "../src/kafkajs-source";
import { type FakeFetchAnswer, fakeBroker } from "./fixtures/fake-fetch-broker";

const { KafkaJSConnectionError, KafkaJSRequestTimeoutError } = kafkajs;
/** kafkajs's SASL error as its authenticators make it: with a message (its type declarations take none). */
const KafkaJSSASLAuthenticationError = kafkajs.KafkaJSSASLAuthenticationError as unknown as new (
  message: string,
) => Error;

const request = {
  clientId: "fetcher",
  brokerId: 1,
  maxBytes: 1 << 20,
  partitions: [
    {
      topic: "t",
      partition: 0,
      fetchOffset: 5n,
      lastFetchedEpoch: 0,
      currentLeaderEpoch: 0,
      maxBytes: 1 << 20,
    },
  ],
};

const closing: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

async function sourceAnswering(answer: FakeFetchAnswer): Promise<KafkajsSourceCluster> {
  const broker = await fakeBroker(() => answer);
  const source = new KafkajsSourceCluster(
    "m",
    { "bootstrap.servers": `127.0.0.1:${broker.port}` },
    { fetchSessions: false },
  );
  closing.push(broker.close, () => source.close());
  return source;
}

describe("UNKNOWN_SERVER_ERROR (-1) in a Fetch answer, which Kafka's consumer and follower retry", () => {
  it("at the top level fails the whole fetch as retriable (the engine backs off and fetches again)", async () => {
    const source = await sourceAnswering({ errorCode: -1, topics: [] });
    const failure = await source.fetch(request).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(KafkaError);
    expect(failure).toMatchObject({ errorName: "UNKNOWN_SERVER_ERROR", code: -1, retriable: true });
  });

  it("for a partition is that partition's retriable error, named as Kafka names it", async () => {
    const source = await sourceAnswering({
      topics: [{ topic: "t", partitions: [{ partition: 0, errorCode: -1, hw: -1n }] }],
    });
    const { partitions } = await source.fetch(request);
    expect(partitions[0]?.error).toMatchObject({ errorName: "UNKNOWN_SERVER_ERROR", retriable: true });
  });

  it("a top-level refusal (CLUSTER_AUTHORIZATION_FAILED) is still every partition's non-retriable answer", async () => {
    const source = await sourceAnswering({ errorCode: 31, topics: [] });
    const { partitions } = await source.fetch(request);
    expect(partitions[0]?.error).toMatchObject({
      errorName: "CLUSTER_AUTHORIZATION_FAILED",
      retriable: false,
    });
  });
});

describe("asSourceError on kafkajs's SASL errors", () => {
  it("keeps a refusal of the credentials non-retriable, with the broker's words", () => {
    const refused = asSourceError(
      new KafkaJSSASLAuthenticationError(
        "SASL PLAIN authentication failed: Authentication failed: Invalid username or password",
      ),
      "m: connect",
    );
    expect(refused).toMatchObject({ errorName: "SASL_AUTHENTICATION_FAILED", retriable: false });
    expect(refused.message).toContain("Invalid username or password");
  });

  it("takes a connection lost or timed out during the handshake as a retriable disconnect", () => {
    for (const inner of [
      new KafkaJSConnectionError("Closed connection"),
      new KafkaJSConnectionError("Connection error: read ECONNRESET"),
      new KafkaJSRequestTimeoutError("Request SaslAuthenticate(key: 36, version: 2) timed out"),
    ]) {
      const wrapped = new KafkaJSSASLAuthenticationError(
        `SASL SCRAM SHA512 authentication failed: ${inner.message}`,
      );
      expect(asSourceError(wrapped, "m: connect")).toMatchObject({
        errorName: "BROKER_NOT_AVAILABLE",
        retriable: true,
      });
    }
  });
});
