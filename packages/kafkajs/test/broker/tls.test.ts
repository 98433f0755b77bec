import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { SASL_USERS } from "../../scripts/kafka-broker.mjs";
import { KafkajsSourceCluster } from "../../src/index";
import {
  caughtUpWithBroker,
  createServedTopics,
  destinationBatches,
  hexOf,
  kafkaClient,
  startDestination,
  storedBatches,
  until,
} from "./helpers";

describe("a TLS source: the broker's SSL listeners, server-authenticated, mutual and with SASL", () => {
  const kafka = kafkaClient("tls-test");
  const admin = kafka.admin();
  const dest = startDestination(31);
  const tls = inject("kafkaTls");
  const trust = { "ssl.truststore.type": "PEM", "ssl.truststore.location": tls.caPem };
  const ssl = { "bootstrap.servers": inject("kafkaSslBootstrap"), "security.protocol": "SSL", ...trust };
  const mtls = {
    "bootstrap.servers": inject("kafkaMtlsBootstrap"),
    "security.protocol": "SSL",
    ...trust,
    "ssl.keystore.type": "PKCS12",
    "ssl.keystore.location": tls.clientKeystore,
    "ssl.keystore.password": tls.password,
  };

  beforeAll(async () => {
    await admin.connect();
    await createServedTopics(admin, [
      { topic: "tls-orders", numPartitions: 2 },
      { topic: "mtls-orders", numPartitions: 1 },
      { topic: "sasl-ssl-orders", numPartitions: 1 },
    ]);
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    for (let i = 0; i < 20; i++) {
      await producer.send({
        topic: ["tls-orders", "mtls-orders", "sasl-ssl-orders"][i % 3]!,
        messages: Array.from({ length: 50 }, (_, j) => ({
          key: `k${j}`,
          value: `v${i}-${j}-${"x".repeat(j)}`,
        })),
      });
    }
    await producer.disconnect();
  });

  afterAll(async () => {
    await dest.close();
    await admin.disconnect();
  });

  const mirrorsByteForByte = async (
    mirror: string,
    configs: Record<string, string>,
    topic: string,
    partitions: number[],
  ) => {
    const created = await dest.mirroring.admin.createMirror(mirror, configs);
    expect(created.sourceClusterId).toBe(inject("kafkaClusterId"));
    await dest.mirroring.admin.addTopics(mirror, topic);
    await until(async () => {
      const rows = (await dest.mirroring.admin.describe(mirror)).filter((r) => r.topic === topic);
      return rows.length === partitions.length && rows.every((r) => r.state === "MIRRORING" && r.lag === 0n)
        ? undefined
        : JSON.stringify(rows, (_, v) => (typeof v === "bigint" ? String(v) : v));
    });
    const oracle = new KafkajsSourceCluster("oracle", { "bootstrap.servers": inject("kafkaBootstrap") });
    await caughtUpWithBroker(dest.cluster, oracle, topic, partitions).finally(() => oracle.close());
    for (const p of partitions) {
      const stored = storedBatches(topic, p);
      expect(stored.length).toBeGreaterThan(0);
      expect(hexOf(destinationBatches(dest.cluster, topic, p))).toEqual(hexOf(stored));
    }
  };

  it("mirrors byte for byte over SSL, trusting the broker's certificate from a PEM trust store", async () => {
    await mirrorsByteForByte("tls", ssl, "tls-orders", [0, 1]);
  });

  it("mirrors over mutual TLS with the client's PKCS12 key store", async () => {
    await mirrorsByteForByte("mtls", mtls, "mtls-orders", [0]);
  });

  it("mirrors over SASL_SSL: SASL/PLAIN credentials inside TLS", async () => {
    await mirrorsByteForByte(
      "sasl-ssl",
      {
        ...ssl,
        "bootstrap.servers": inject("kafkaSaslSslBootstrap"),
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "PLAIN",
        "sasl.jaas.config": `org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="${SASL_USERS.admin}";`,
      },
      "sasl-ssl-orders",
      [0],
    );
  });

  it("a broker certificate the trust store does not hold fails mirror creation with the TLS error", async () => {
    const failure = dest.mirroring.admin.createMirror("untrusted", {
      ...ssl,
      "ssl.truststore.location": tls.otherCaPem,
    });
    await expect(failure).rejects.toThrow(/self[- ]signed certificate/i);
    expect(dest.mirroring.admin.listMirrors().map((m) => m.name)).not.toContain("untrusted");
  });

  it("the mutual-TLS listener refuses a client without a certificate, and mirror creation says so", async () => {
    const failure = dest.mirroring.admin.createMirror("no-client-cert", {
      ...ssl,
      "bootstrap.servers": inject("kafkaMtlsBootstrap"),
    });
    // The broker's TLS alert (42, bad certificate; 116, certificate required, under TLS 1.3).
    await expect(failure).rejects.toThrow(/alert (bad certificate|certificate required)/);
    await expect(failure).rejects.toThrow(/security settings/);
    expect(dest.mirroring.admin.listMirrors().map((m) => m.name)).not.toContain("no-client-cert");
  });
});
