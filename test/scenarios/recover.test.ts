import { applyEvent, recoverPartition, sendCommand } from "@cluster-mirror/machines";
import { parseMirrorConfig, type SourceCluster } from "@cluster-mirror/mirror";
import { describe, expect, it } from "vitest";
import { type RecoverDeps, recoverTopics } from "../../packages/mirror/src/admin/recover";
import { leaderBatches, onlyRowOf, ordersOn, topology, untilCaughtUp } from "./helpers";

type Topology = ReturnType<typeof topology>;
type Node = ReturnType<Topology["node"]>;

async function produce(
  t: Topology,
  producer: ReturnType<Node["kafka"]["producer"]>,
  from: number,
  n: number,
) {
  for (let i = from; i < from + n; i++)
    await t.run(producer.send({ topic: "orders", messages: [{ key: `k${i}`, value: `v${i}` }], acks: -1 }));
}

/** b mirrors `orders` from a (`a:9092`) under `dr` until caught up. */
async function mirrorUntilCaughtUp(t: Topology, b: Node) {
  await t.run(b.mirroring.admin.createMirror("dr", { "bootstrap.servers": "a:9092" }));
  await t.run(b.mirroring.admin.addTopics("dr", "orders"));
  await untilCaughtUp(t, b, "dr caught up");
}

async function produceTo(t: Topology, producer: ReturnType<Node["kafka"]["producer"]>, partition: number) {
  await t.run(producer.send({ topic: "orders", messages: [{ partition, value: "more" }], acks: -1 }));
}

/** An ACL on `orders` for the mirror's principal (ANONYMOUS, as a's producers). */
const ordersAcl = (operation: "ALL" | "READ" | "DESCRIBE", permissionType: "ALLOW" | "DENY" = "DENY") =>
  ({
    resourceType: "TOPIC",
    resourceName: "orders",
    patternType: "LITERAL",
    principal: "User:ANONYMOUS",
    host: "*",
    operation,
    permissionType,
  }) as const;

/** Turns a's authorizer on and denies the mirror's principal READ on `orders`: it keeps every other operation. */
function denyReadOnSource(a: Node) {
  const denyRead = ordersAcl("READ");
  a.cluster.authorizer.configure({ enabled: true, allowEveryoneIfNoAclFound: true });
  a.cluster.authorizer.createAcls([ordersAcl("ALL", "ALLOW"), denyRead]);
  return denyRead;
}

const batches = (node: Node) => leaderBatches(node.cluster, "orders", 0).map((x) => `${x.offset}:${x.hex}`);

describe("--recover: an operator retries FAILED partitions now (RecoverMirrorTopics)", () => {
  it("a partition failed for good (the source denied the mirror's reads) resumes once the operator fixed the ACL", async () => {
    const t = topology(["a", "b"]);
    const [a, b] = [t.node("a"), t.node("b")];
    const producer = await ordersOn(t, a, 3);
    await mirrorUntilCaughtUp(t, b);

    // The source starts refusing the mirror's principal its reads: FAILED, not retryable.
    const deny = denyReadOnSource(a);
    await produce(t, producer, 3, 1);
    await t.until(async () => (await onlyRowOf(b)).state === "FAILED", "FAILED after the denied read");
    expect(await onlyRowOf(b)).toMatchObject({
      retryAttempt: -1,
      errorMessage: expect.stringMatching(/may not READ TOPIC .orders./),
    });
    await t.advance(60_000);
    expect((await onlyRowOf(b)).state).toBe("FAILED"); // no retry of its own

    // The ACL is fixed, more records are written: the recover resumes where the copy stopped.
    a.cluster.authorizer.deleteAcls([deny]);
    await produce(t, producer, 4, 2);
    const result = await t.run(b.mirroring.admin.recoverTopics("dr", "orders"));
    expect(result.partitions).toEqual([{ topic: "orders", partition: 0 }]);
    expect(result.message).toBe("Recovered 1 partition(s) of mirror dr: [orders-0]");
    await untilCaughtUp(t, b, "dr caught up after the recover");
    expect(await onlyRowOf(b)).toMatchObject({ retryAttempt: 0, errorMessage: null });
    expect(batches(b)).toEqual(batches(a));
    expect(batches(b)).toHaveLength(6);
    // Still read-only: a recover never fails the topic over.
    const local = b.kafka.producer();
    await t.run(local.connect());
    await expect(t.run(local.send({ topic: "orders", messages: [{ value: "local" }] }))).rejects.toThrow(
      /read-only/i,
    );

    // Nothing FAILED any more: said so, nothing sent.
    const again = await t.run(b.mirroring.admin.recoverTopics("dr", "orders"));
    expect(again.partitions).toEqual([]);
    expect(again.message).toMatch(/No partition of \[orders\] in mirror dr is FAILED: nothing to recover/);
  });

  it("refuses while the source denies the mirror's principal READ (a probe fetch) or DESCRIBE (ListOffsets), changing nothing", async () => {
    const t = topology(["a", "b"]);
    const [a, b] = [t.node("a"), t.node("b")];
    const producer = await ordersOn(t, a, 2);
    await mirrorUntilCaughtUp(t, b);
    const denyRead = denyReadOnSource(a);
    const denyDescribe = ordersAcl("DESCRIBE");
    await produce(t, producer, 2, 1);
    await t.until(async () => (await onlyRowOf(b)).state === "FAILED", "FAILED after the denied read");

    // READ alone denied: ListOffsets (DESCRIBE) passes, as on Kafka; the fetch a retry would send does not.
    await expect(t.run(b.mirroring.admin.recoverTopics("dr", "orders"))).rejects.toThrow(
      /Cannot recover partitions of orders in mirror dr: the source still refuses the mirror's principal \(TOPIC_AUTHORIZATION_FAILED: User:ANONYMOUS may not READ TOPIC 'orders'/,
    );
    expect(await onlyRowOf(b)).toMatchObject({ state: "FAILED", retryAttempt: -1 });

    // DESCRIBE denied too: the source's ListOffsets refuses it (Kafka's KafkaApis.handleListOffsetRequest).
    a.cluster.authorizer.createAcls([denyDescribe]);
    await expect(t.run(b.mirroring.admin.recoverTopics("dr", "orders"))).rejects.toThrow(
      /the source still refuses the mirror's principal \(TOPIC_AUTHORIZATION_FAILED: User:ANONYMOUS may not DESCRIBE TOPIC 'orders'/,
    );
    expect(await onlyRowOf(b)).toMatchObject({ state: "FAILED", retryAttempt: -1 });

    a.cluster.authorizer.deleteAcls([denyRead, denyDescribe]);
    const result = await t.run(b.mirroring.admin.recoverTopics("dr", "orders"));
    expect(result.partitions).toEqual([{ topic: "orders", partition: 0 }]);
    await untilCaughtUp(t, b, "dr caught up after the recover");
    expect(batches(b)).toEqual(batches(a));
    expect(batches(b)).toHaveLength(3);
  });

  it("refuses while bootstrap.servers reaches another cluster: a retry would copy its records", async () => {
    const t = topology(["a", "b"]);
    const [a, b] = [t.node("a"), t.node("b")];
    await ordersOn(t, a, 1);
    await mirrorUntilCaughtUp(t, b);
    await t.run(a.kafka.admin().deleteTopics({ topics: ["orders"] }));
    await t.until(
      async () => (await onlyRowOf(b)).state === "FAILED",
      "FAILED after the source topic's deletion",
    );
    const def = parseMirrorConfig("dr", b.cluster.controller.image.mirrors.get("dr")!);
    const sent: string[] = [];
    const deps = (clusterId: string): RecoverDeps => ({
      destination: b.cluster,
      coordinators: {
        ...b.mirroring.coordinators,
        describe: (m) => b.mirroring.coordinators.describe(m),
        command: async (key, command) => {
          sent.push(`${command.type} ${key.topic}-${key.partition}`);
        },
      } as RecoverDeps["coordinators"],
      sourceCall: (call) =>
        call({
          clusterId: async () => clusterId,
          listOffsets: async () => 0n,
        } as unknown as SourceCluster),
      awaitCoordinatorsOf: async () => {},
    });
    await expect(recoverTopics(deps("another-cluster"), def, "orders")).rejects.toThrow(
      /bootstrap.servers=a:9092 now reaches cluster another-cluster, not the mirror's source/,
    );
    expect(sent).toEqual([]);
    // The same call, the source being the mirror's: the command goes out.
    await recoverTopics(deps(a.cluster.clusterId), def, "orders");
    expect(sent).toEqual(["RECOVER orders-0"]);
  });

  it("a partition whose retry timer fired as the recover looked (the retry waits for its append) is not a refusal", async () => {
    const t = topology(["a", "b"]);
    const [a, b] = [t.node("a"), t.node("b")];
    await ordersOn(t, a, 1);
    await mirrorUntilCaughtUp(t, b);
    const topicId = b.cluster.controller.image.topic("orders")!.topicId;
    await t.run(
      b.mirroring.coordinators.command(
        { mirror: "dr", topic: "orders", topicId, partition: 0 },
        { type: "FAIL", message: "append failed", retryable: true, random: 0.5 },
      ),
    );
    expect((await onlyRowOf(b)).state).toBe("FAILED");
    // What the partition's coordinator answers a RECOVER once its retry timer fired: the retry's MIRRORING
    // record waits for its append (a full __mirror_state disk retries it for minutes), FAILED still committed.
    const failed = recoverPartition({
      record: {
        state: "FAILED",
        previousState: "MIRRORING",
        stateEpoch: 7,
        leaderEpoch: 0,
        retryAttempt: 0,
        errorMessage: "append failed",
        lastMirrorEpoch: -1,
      },
      retryJitter: 0.5,
    }).snapshot;
    const retrying = applyEvent(failed, { type: "RETRY_TIMER_FIRED", stateEpoch: 7 }).snapshot;
    let refusal: unknown;
    try {
      sendCommand(retrying, { type: "RECOVER" });
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toMatchObject({ state: "FAILED", pendingTo: "MIRRORING" });

    const def = parseMirrorConfig("dr", b.cluster.controller.image.mirrors.get("dr")!);
    const deps: RecoverDeps = {
      destination: b.cluster,
      coordinators: {
        describe: (m?: string) => b.mirroring.coordinators.describe(m),
        command: async () => {
          throw refusal;
        },
      } as unknown as RecoverDeps["coordinators"],
      sourceCall: (call) =>
        call({
          clusterId: async () => a.cluster.clusterId,
          listOffsets: async () => 0n,
        } as unknown as SourceCluster),
      awaitCoordinatorsOf: async () => {},
    };
    // Its own retry is under way: the recover has nothing to do there, and is not an error.
    const result = await recoverTopics(deps, def, "orders");
    expect(result.partitions).toEqual([]);
    expect(result.message).toBe(
      "Recovered 0 partition(s) of mirror dr: []; 1 left FAILED meanwhile (its own retry, or a remove): [orders-0]",
    );
  });

  it("a partition backing off after a full disk retries at once, without waiting out its backoff", async () => {
    // A backoff far longer than the test: only the recover can bring the partition back in time.
    const t = topology(["a", "b"], { retry: { baseMs: 3_600_000, capMs: 3_600_000, maxAttempts: 10 } });
    const [a, b] = [t.node("a"), t.node("b")];
    const producer = await ordersOn(t, a, 2);
    await mirrorUntilCaughtUp(t, b);

    // b's copy cannot append while every one of its brokers' disks is full.
    const brokers = b.cluster.runningBrokers();
    for (const id of brokers) b.cluster.setDiskFull(id, true);
    await produce(t, producer, 2, 1);
    await t.advance(20_000);
    for (const id of brokers) b.cluster.setDiskFull(id, false);
    await t.until(async () => (await onlyRowOf(b)).state === "FAILED", "FAILED after the full disk");
    expect((await onlyRowOf(b)).retryAttempt).toBe(0);

    const started = t.clock.now();
    const result = await t.run(b.mirroring.admin.recoverTopics("dr", "orders"));
    expect(result.partitions).toEqual([{ topic: "orders", partition: 0 }]);
    await untilCaughtUp(t, b, "dr caught up after the recover");
    expect(t.clock.now() - started).toBeLessThan(60_000);
    // A retry from the timer would have counted attempt 1; the recover starts the budget over.
    expect((await onlyRowOf(b)).retryAttempt).toBe(0);
    expect(batches(b)).toEqual(batches(a));
  });

  it("a source partition without a leader right now does not refuse the recover of the topic's other partitions", async () => {
    const t = topology(["a", "b"]);
    const [a, b] = [t.node("a"), t.node("b")];
    // orders-0 lives on a's broker 0 alone, orders-1 on broker 1 alone.
    await t.run(
      a.kafka.admin().createTopics({
        topics: [
          {
            topic: "orders",
            replicaAssignment: [
              { partition: 0, replicas: [0] },
              { partition: 1, replicas: [1] },
            ],
          },
        ],
      }),
    );
    const producer = a.kafka.producer({ idempotent: true });
    await t.run(producer.connect());
    for (const partition of [0, 1])
      await t.run(
        producer.send({ topic: "orders", messages: [{ partition, value: `v${partition}` }], acks: -1 }),
      );
    await t.run(b.mirroring.admin.createMirror("dr", { "bootstrap.servers": "a:9092" }));
    await t.run(b.mirroring.admin.addTopics("dr", "orders"));
    const rows = () => b.mirroring.admin.describe("dr");
    await t.until(
      async () => (await rows()).every((r) => r.state === "MIRRORING" && r.lag === 0n),
      "dr caught up",
    );

    // orders-1 failed on a cause no retry gets past; then orders-0 loses its only source replica.
    const topicId = b.cluster.controller.image.topic("orders")!.topicId;
    const key = { mirror: "dr", topic: "orders", topicId, partition: 1 };
    await t.run(
      b.mirroring.coordinators.command(key, {
        type: "FAIL",
        message: "read denied",
        retryable: false,
        random: 0,
      }),
    );
    a.cluster.crashBroker(0);
    await t.advance(1_000);
    expect((await rows()).find((r) => r.partition === 1)).toMatchObject({
      state: "FAILED",
      retryAttempt: -1,
    });

    // orders-1's source partition answers under the mirrored id: the topic is there, the recover goes on.
    const result = await t.run(b.mirroring.admin.recoverTopics("dr", "orders"));
    expect(result.partitions).toContainEqual({ topic: "orders", partition: 1 });
    await produceTo(t, producer, 1);
    await t.until(async () => {
      const row = (await rows()).find((r) => r.partition === 1);
      return row?.state === "MIRRORING" && row.lag === 0n;
    }, "orders-1 caught up after the recover");
    const hex1 = (node: Node) => leaderBatches(node.cluster, "orders", 1).map((x) => `${x.offset}:${x.hex}`);
    expect(hex1(b)).toEqual(hex1(a));
    expect(hex1(b)).toHaveLength(2);
  });

  it("refuses a topic the source deleted, and a selection that matches no topic of the mirror", async () => {
    const t = topology(["a", "b"]);
    const [a, b] = [t.node("a"), t.node("b")];
    await ordersOn(t, a, 1);
    await mirrorUntilCaughtUp(t, b);
    await t.run(a.kafka.admin().deleteTopics({ topics: ["orders"] }));
    // The fetcher fails it first (retryable), the metadata sync's second look for good.
    await t.until(async () => {
      const row = await onlyRowOf(b);
      return row.state === "FAILED" && row.retryAttempt === -1;
    }, "FAILED for good after the source topic's deletion");
    await expect(t.run(b.mirroring.admin.recoverTopics("dr", "orders"))).rejects.toThrow(
      /Cannot recover partitions of \[orders\] in mirror dr: the source no longer has that topic/,
    );
    expect(await onlyRowOf(b)).toMatchObject({ state: "FAILED", retryAttempt: -1 });
    await expect(t.run(b.mirroring.admin.recoverTopics("dr", "payments"))).rejects.toThrow(
      /No topic of mirror 'dr' matches 'payments'/,
    );
    await expect(t.run(b.mirroring.admin.recoverTopics("nope", "orders"))).rejects.toThrow(
      /Mirror 'nope' does not exist/,
    );
  });
});
