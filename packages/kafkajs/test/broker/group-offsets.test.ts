import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import {
  createServedTopics,
  javaGroupProtocol,
  kafkaClient,
  runJava,
  startDestination,
  until,
} from "./helpers";

describe("consumer group offsets from a real broker reach the destination (failover keeps consumers' places)", () => {
  const kafka = kafkaClient("group-offsets-test");
  const admin = kafka.admin();
  const dest = startDestination(71);
  const topic = "group-synced";

  beforeAll(async () => {
    await admin.connect();
    await createServedTopics(admin, [{ topic, numPartitions: 2 }]);
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    await producer.send({ topic, messages: [0, 1, 0, 1, 0].map((partition) => ({ partition, value: "x" })) });
    await producer.disconnect();
    // kafkajs's classic group commits explicit offsets (as a stopped consumer's last commit would).
    await admin.setOffsets({
      groupId: "kjs-readers",
      topic,
      partitions: [
        { partition: 0, offset: "2" },
        { partition: 1, offset: "1" },
      ],
    });
    // Kafka's Java consumer reads the 5 records, commits and leaves.
    const printed = await runJava("JavaGroupConsumer.java", [
      inject("kafkaBootstrap"),
      topic,
      "java-readers",
      javaGroupProtocol(),
      "5",
      "0",
    ]);
    expect(printed).toContain("committed 5");
  });

  afterAll(async () => {
    await dest.close();
    await admin.disconnect();
  });

  it("syncs both groups' committed offsets, verify agrees, and they stay after the failover", async () => {
    await dest.mirroring.admin.createMirror("gs", {
      "bootstrap.servers": inject("kafkaBootstrap"),
      "mirror.metadata.refresh.interval.ms": "300",
    });
    await dest.mirroring.admin.addTopics("gs", topic);
    const synced = (group: string) =>
      [...dest.cluster.groups.fetchOffsets(group)].map(([k, v]) => `${k}=${v.offset}`).sort();
    const wanted = {
      "kjs-readers": [`${topic}:0=2`, `${topic}:1=1`],
      "java-readers": [`${topic}:0=3`, `${topic}:1=2`],
    };
    await until(async () => {
      const have = { "kjs-readers": synced("kjs-readers"), "java-readers": synced("java-readers") };
      return JSON.stringify(have) === JSON.stringify(wanted)
        ? undefined
        : `destination groups ${JSON.stringify(have)}`;
    });
    const verification = await dest.mirroring.admin.verifyMirror("gs");
    expect(verification.checks.find((c) => c.check === "group offsets")).toMatchObject({ ok: true });

    await dest.mirroring.admin.removeTopics("gs", topic);
    await dest.mirroring.whenState("gs", "STOPPED", { timeoutMs: 60_000 });
    expect({ "kjs-readers": synced("kjs-readers"), "java-readers": synced("java-readers") }).toEqual(wanted);
  });
});
