import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { KafkajsSourceCluster } from "../../src/index";
import {
  ACL_ENUMS,
  caughtUpWithBroker,
  createServedTopics,
  destinationBatches,
  hexOf,
  kafkaClient,
  mirrorSaslConfig,
  startDestination,
  storedBatches,
  until,
} from "./helpers";

const { TOPIC, LITERAL, READ, DESCRIBE, ALLOW } = ACL_ENUMS;

describe("a secured source: SASL/PLAIN and the broker's authorizer", () => {
  const kafka = kafkaClient("security-test");
  const admin = kafka.admin();
  const dest = startDestination(21);
  const sasl = (password: string) => mirrorSaslConfig(password);

  beforeAll(async () => {
    await admin.connect();
    await createServedTopics(admin, [
      { topic: "sec-granted", numPartitions: 1 },
      { topic: "sec-denied", numPartitions: 1 },
    ]);
    const acl = (resourceName: string, operation: number) => ({
      resourceType: TOPIC,
      resourceName,
      resourcePatternType: LITERAL,
      principal: "User:mirror",
      host: "*",
      operation,
      permissionType: ALLOW,
    });
    // The mirror's user may read one topic and only see the other.
    await admin.createAcls({
      acl: [acl("sec-granted", READ), acl("sec-granted", DESCRIBE), acl("sec-denied", DESCRIBE)],
    });
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    for (const topic of ["sec-granted", "sec-denied"])
      await producer.send({ topic, messages: [{ value: "one" }, { value: "two" }] });
    await producer.disconnect();
  });

  afterAll(async () => {
    await dest.close();
    await admin.disconnect();
  });

  it("a wrong password fails mirror creation with the broker's own words", async () => {
    const failure = dest.mirroring.admin.createMirror("bad-password", sasl("wrong"));
    await expect(failure).rejects.toThrow(/Authentication failed/);
    expect(dest.mirroring.admin.listMirrors().map((m) => m.name)).not.toContain("bad-password");
  });

  it("mirrors what the user may read; a topic it may not read FAILS non-retryably with the broker's error", async () => {
    const created = await dest.mirroring.admin.createMirror("sec", sasl("mirror-secret"));
    expect(created.sourceClusterId).toBe(inject("kafkaClusterId"));
    await dest.mirroring.admin.addTopics("sec", "sec-.*");
    await until(async () => {
      const rows = await dest.mirroring.admin.describe("sec");
      const granted = rows.find((r) => r.topic === "sec-granted");
      const denied = rows.find((r) => r.topic === "sec-denied");
      return granted?.state === "MIRRORING" && granted.lag === 0n && denied?.state === "FAILED"
        ? undefined
        : JSON.stringify(rows, (_, v) => (typeof v === "bigint" ? String(v) : v));
    });
    const oracle = new KafkajsSourceCluster("oracle", { "bootstrap.servers": inject("kafkaBootstrap") });
    await caughtUpWithBroker(dest.cluster, oracle, "sec-granted", [0]).finally(() => oracle.close());
    const denied = (await dest.mirroring.admin.describe("sec")).find((r) => r.topic === "sec-denied")!;
    expect(denied.retryAttempt).toBe(-1);
    expect(denied.errorMessage).toContain("TOPIC_AUTHORIZATION_FAILED");
    expect(hexOf(destinationBatches(dest.cluster, "sec-granted", 0))).toEqual(
      hexOf(storedBatches("sec-granted", 0)),
    );
  });

  it("new credentials through alterMirrorConfig: a wrong password is refused and changes nothing; right ones take over", async () => {
    const admin = dest.mirroring.admin;
    const scram = (password: string) => ({
      "sasl.mechanism": "SCRAM-SHA-256",
      "sasl.jaas.config": `org.apache.kafka.common.security.scram.ScramLoginModule required username="mirror" password="${password}";`,
    });
    await expect(admin.alterMirrorConfig("sec", { set: scram("wrong") })).rejects.toThrow(
      /Authentication failed/,
    );
    const mechanism = () =>
      admin.describeMirrorConfig("sec").configs.find((c) => c.name === "sasl.mechanism");
    expect(mechanism()?.value).toBe("PLAIN");
    await admin.alterMirrorConfig("sec", { set: scram("mirror-secret") });
    expect(mechanism()?.value).toBe("SCRAM-SHA-256");
    // Mirroring goes on with them: what is written now is copied byte for byte.
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    await producer.send({ topic: "sec-granted", messages: [{ value: "three" }] });
    await producer.disconnect();
    const oracle = new KafkajsSourceCluster("oracle", { "bootstrap.servers": inject("kafkaBootstrap") });
    await caughtUpWithBroker(dest.cluster, oracle, "sec-granted", [0]).finally(() => oracle.close());
    expect(hexOf(destinationBatches(dest.cluster, "sec-granted", 0))).toEqual(
      hexOf(storedBatches("sec-granted", 0)),
    );
    expect(storedBatches("sec-granted", 0).length).toBeGreaterThan(1);
  });

  it("refuses credentials whose principal may not see a topic the mirror copies (TOPIC_AUTHORIZATION_FAILED), changing nothing", async () => {
    await createServedTopics(admin, [{ topic: "sec-hidden", numPartitions: 1 }]);
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    await producer.send({ topic: "sec-hidden", messages: [{ value: "one" }] });
    await producer.disconnect();
    const plain = (user: "admin" | "mirror", password: string) => ({
      "bootstrap.servers": inject("kafkaSaslBootstrap"),
      "security.protocol": "SASL_PLAINTEXT",
      "sasl.mechanism": "PLAIN",
      "sasl.jaas.config": `org.apache.kafka.common.security.plain.PlainLoginModule required username="${user}" password="${password}";`,
    });
    const own = startDestination(25);
    try {
      // The admin user (a super user) mirrors a topic the mirror user has no ACL on at all.
      await own.mirroring.admin.createMirror("hid", plain("admin", "admin-secret"));
      await own.mirroring.admin.addTopics("hid", "sec-hidden");
      await until(async () => {
        const rows = await own.mirroring.admin.describe("hid");
        return rows[0]?.state === "MIRRORING" && rows[0].lag === 0n
          ? undefined
          : JSON.stringify(rows[0]?.state);
      });
      // Before: accepted, and the partition then FAILED for good on TOPIC_AUTHORIZATION_FAILED. Kafka refuses
      // the topic by name to a principal without DESCRIBE (Metadata, ListOffsets): the broker's words are kept.
      await expect(
        own.mirroring.admin.alterMirrorConfig("hid", { set: plain("mirror", "mirror-secret") }),
      ).rejects.toThrow(
        /may not describe 1 of mirror 'hid''s topics \(sec-hidden: .*TOPIC_AUTHORIZATION_FAILED \(29\)/,
      );
      const user = own.mirroring.admin
        .describeMirrorConfig("hid")
        .configs.find((c) => c.name === "sasl.mechanism");
      expect(user?.value).toBe("PLAIN");
      expect((await own.mirroring.admin.describe("hid"))[0]?.state).toBe("MIRRORING");
      // A wrong password says so, not that the source is unreachable.
      await expect(
        own.mirroring.admin.alterMirrorConfig("hid", { set: plain("admin", "wrong") }),
      ).rejects.toThrow(/refused the mirror's credentials: .*Authentication failed.*Check sasl.mechanism/);
    } finally {
      await own.close();
    }
  });

  it.each([
    ["SCRAM-SHA-256", 23],
    ["SCRAM-SHA-512", 24],
  ] as const)(
    "authenticates with %s: the mirror's user copies what its ACLs allow byte for byte; a wrong password is refused",
    async (mechanism, seed) => {
      const scram = (password: string) => ({
        "bootstrap.servers": inject("kafkaSaslBootstrap"),
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": mechanism,
        "sasl.jaas.config": `org.apache.kafka.common.security.scram.ScramLoginModule required username="mirror" password="${password}";`,
      });
      // A destination of its own: sec-granted is already mirrored into the shared one.
      const own = startDestination(seed);
      try {
        await expect(own.mirroring.admin.createMirror("scram-bad", scram("wrong"))).rejects.toThrow(
          /Authentication failed/,
        );
        await own.mirroring.admin.createMirror("scram", scram("mirror-secret"));
        await own.mirroring.admin.addTopics("scram", "sec-granted");
        await until(async () => {
          const rows = await own.mirroring.admin.describe("scram");
          return rows.length === 1 && rows[0]!.state === "MIRRORING" && rows[0]!.lag === 0n
            ? undefined
            : JSON.stringify(rows, (_, v) => (typeof v === "bigint" ? String(v) : v));
        });
        const oracle = new KafkajsSourceCluster("oracle", { "bootstrap.servers": inject("kafkaBootstrap") });
        await caughtUpWithBroker(own.cluster, oracle, "sec-granted", [0]).finally(() => oracle.close());
        expect(hexOf(destinationBatches(own.cluster, "sec-granted", 0))).toEqual(
          hexOf(storedBatches("sec-granted", 0)),
        );
        const shown = own.mirroring.admin.describeMirrorConfig("scram").configs;
        expect(shown.find((c) => c.name === "sasl.jaas.config")).toMatchObject({
          value: null,
          isSensitive: true,
        });
      } finally {
        await own.close();
      }
    },
  );

  it("describes the source's ACL bindings (DescribeAcls through kafkajs)", async () => {
    const source = new KafkajsSourceCluster("acls", { "bootstrap.servers": inject("kafkaBootstrap") });
    try {
      // This file's bindings (the broker is shared: other files grant the same principal on their topics).
      const mine = ((await source.describeAcls()) ?? []).filter(
        (b) => b.principal === "User:mirror" && b.resourceName.startsWith("sec-"),
      );
      expect(mine).toEqual(
        expect.arrayContaining([
          {
            resourceType: "TOPIC",
            resourceName: "sec-granted",
            patternType: "LITERAL",
            principal: "User:mirror",
            host: "*",
            operation: "READ",
            permissionType: "ALLOW",
          },
          expect.objectContaining({ resourceName: "sec-denied", operation: "DESCRIBE" }),
        ]),
      );
      expect(mine).toHaveLength(3);
    } finally {
      await source.close();
    }
  });
});
