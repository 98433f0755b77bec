import { ClusterError } from "@cluster-mirror/cluster";
import { InvalidMirrorStateError } from "@cluster-mirror/machines";
import { describe, expect, it } from "vitest";
import {
  InvalidMirrorConfigError,
  InvalidMirrorNameError,
  MirrorAlreadyExistsError,
  MirrorStateError,
  SourceUnreachableError,
  UnknownMirrorError,
} from "../src/admin/errors";
import { parseMirrorConfig } from "../src/admin/mirror-config";
import { appendRecords, MIRROR_CONFIG, mirrorEnv, sourceTopic } from "./meta-helpers";

async function rejection(work: Promise<unknown>): Promise<Error & { errorName?: string; code?: number }> {
  try {
    await work;
  } catch (error) {
    return error as Error & { errorName?: string };
  }
  throw new Error("expected a rejection");
}

describe("MirrorAdmin: mirrors", () => {
  it("creates a mirror pinning the source cluster id, lists it, describes its config", async () => {
    const env = mirrorEnv();
    const listing = await env.admin.createMirror("m1", MIRROR_CONFIG);
    expect(listing).toEqual({
      name: "m1",
      sourceClusterId: "source-cluster-AAAAAAAAA",
      sourceBootstrap: "source:9092",
      topics: [],
    });
    // Stored as created: a mirror stored without it (an earlier version's) keeps what its source deletes.
    expect(env.destination.controller.image.mirrors.get("m1")).toEqual({
      "bootstrap.servers": "source:9092",
      "log.start.offset.sync.enable": "true",
      "source.cluster.id": "source-cluster-AAAAAAAAA",
    });
    expect(parseMirrorConfig("old", { "bootstrap.servers": "source:9092" }).logStartOffsetSyncEnable).toBe(
      false,
    );
    await env.admin.createMirror("a0", MIRROR_CONFIG);
    expect(env.admin.listMirrors().map((m) => m.name)).toEqual(["a0", "m1"]);
    const config = env.admin.describeMirrorConfig("m1").configs;
    expect(config).toContainEqual({
      name: "mirror.metadata.refresh.interval.ms",
      value: "30000",
      isDefault: true,
      isSensitive: false,
    });
    expect(config).toContainEqual({
      name: "bootstrap.servers",
      value: "source:9092",
      isDefault: false,
      isSensitive: false,
    });
  });

  it("never shows a secret back: describing the config gives passwords and keys as null", async () => {
    const env = mirrorEnv();
    const secrets = {
      "sasl.jaas.config":
        'org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p";',
      "ssl.keystore.password": "store-secret",
      "ssl.key.password": "key-secret",
      "ssl.keystore.key": "-----BEGIN PRIVATE KEY-----",
      "ssl.truststore.password": "trust-secret",
    };
    await env.admin.createMirror("s1", { ...MIRROR_CONFIG, ...secrets });
    const shown = env.admin.describeMirrorConfig("s1").configs;
    for (const name of Object.keys(secrets))
      expect(shown).toContainEqual({ name, value: null, isDefault: false, isSensitive: true });
    expect(JSON.stringify(shown)).not.toMatch(/secret|password=|PRIVATE KEY/);
    // Stored as given: the source client needs them.
    expect(env.destination.controller.image.mirrors.get("s1")).toMatchObject(secrets);
  });

  it("refuses bad names, duplicates, bad regexes, an unreachable source and a wrong pinned id", async () => {
    const env = mirrorEnv();
    expect(await rejection(env.admin.createMirror("bad name", MIRROR_CONFIG))).toBeInstanceOf(
      InvalidMirrorNameError,
    );
    await env.admin.createMirror("m1", MIRROR_CONFIG);
    expect(await rejection(env.admin.createMirror("m1", MIRROR_CONFIG))).toBeInstanceOf(
      MirrorAlreadyExistsError,
    );
    const regex = await rejection(env.admin.createMirror("m2", { ...MIRROR_CONFIG, "groups.exclude": "[" }));
    expect(regex).toBeInstanceOf(InvalidMirrorConfigError);
    expect(regex.message).toContain("'['");
    const pinned = await rejection(
      env.admin.createMirror("m2", { ...MIRROR_CONFIG, "source.cluster.id": "other" }),
    );
    expect(pinned.errorName).toBe("INVALID_CONFIG");
    expect(pinned.message).toContain("reaches cluster source-cluster-AAAAAAAAA");
    env.network.reachable = false;
    const down = await rejection(env.admin.createMirror("m3", MIRROR_CONFIG));
    expect(down).toBeInstanceOf(SourceUnreachableError);
    expect(down.errorName).toBe("NETWORK_EXCEPTION");
    expect(down.message).toContain(
      "Cannot reach the source cluster of mirror 'm3' at bootstrap.servers=source:9092",
    );
    expect(env.admin.listMirrors().map((m) => m.name)).toEqual(["m1"]);
    // The source's own words start with the mirror's name: it is said once.
    const refused = new SourceUnreachableError(
      "bad1",
      "127.0.0.1:1",
      new Error("bad1: connect to source broker 127.0.0.1:1: Connection error: connect ECONNREFUSED"),
    );
    expect(refused.message).toMatch(
      /^Cannot reach the source cluster of mirror 'bad1' at bootstrap.servers=127\.0\.0\.1:1: connect to source broker 127\.0\.0\.1:1: Connection error/,
    );
    expect(refused.message.match(/bad1/g)).toHaveLength(1);
  });

  it("of two concurrent creates of one name, the second gets MirrorAlreadyExistsError: it never replaces the first", async () => {
    const env = mirrorEnv();
    // Both are called before either has heard the source's cluster id (each awaits it).
    const [first, second] = await Promise.allSettled([
      env.admin.createMirror("dr", { ...MIRROR_CONFIG, "topics.include": "orders" }),
      env.admin.createMirror("dr", { ...MIRROR_CONFIG, "mirror.num.replica.fetchers": "3" }),
    ]);
    expect(first.status).toBe("fulfilled");
    expect(second.status).toBe("rejected");
    expect((second as PromiseRejectedResult).reason).toBeInstanceOf(MirrorAlreadyExistsError);
    // The mirror is the one the first caller was told it created.
    expect(env.destination.controller.image.mirrors.get("dr")).toEqual({
      "bootstrap.servers": "source:9092",
      "log.start.offset.sync.enable": "true",
      "topics.include": "orders",
      "source.cluster.id": "source-cluster-AAAAAAAAA",
    });
    // A create whose source does not answer leaves the name free for the one queued behind it.
    env.network.reachable = false;
    const unreachable = env.admin.createMirror("dr2", MIRROR_CONFIG);
    const queued = env.admin.createMirror("dr2", MIRROR_CONFIG);
    expect(await rejection(unreachable)).toBeInstanceOf(SourceUnreachableError);
    expect(await rejection(queued)).toBeInstanceOf(SourceUnreachableError);
    env.network.reachable = true;
    expect((await env.admin.createMirror("dr2", MIRROR_CONFIG)).name).toBe("dr2");
  });

  it("refuses a mirror whose source is this cluster", async () => {
    const env = mirrorEnv();
    env.network.target = env.destination;
    const self = await rejection(env.admin.createMirror("loop", MIRROR_CONFIG));
    expect(self.message).toContain("reaches this cluster");
  });

  it("answers UNKNOWN_MIRROR for every operation on a mirror that does not exist", async () => {
    const env = mirrorEnv();
    await env.admin.createMirror("m1", MIRROR_CONFIG);
    for (const work of [
      env.admin.addTopics("nope", "t"),
      env.admin.removeTopics("nope", "t"),
      env.admin.pauseTopics("nope", "t"),
      env.admin.resumeTopics("nope", "t"),
      env.admin.describe("nope"),
      env.admin.deleteMirror("nope"),
    ]) {
      const error = await rejection(work);
      expect(error).toBeInstanceOf(UnknownMirrorError);
      expect(error.errorName).toBe("UNKNOWN_MIRROR");
      expect(error.message).toBe(
        "Mirror 'nope' does not exist (known mirrors: m1). Check the name (kafka-mirrors --list lists the mirrors), or create the mirror first (kafka-mirrors --create --mirror nope --mirror-config FILE).",
      );
    }
    // A name one typo away is named instead.
    expect((await rejection(env.admin.describe("m2"))).message).toBe(
      "Mirror 'm2' does not exist (known mirrors: m1). Did you mean 'm1'?",
    );
    // Deleted, then deleted again: no "yet", which would read as if it never existed.
    await env.admin.deleteMirror("m1");
    expect((await rejection(env.admin.deleteMirror("m1"))).message).toMatch(
      /^Mirror 'm1' does not exist \(this cluster has no mirrors\)\. /,
    );
  });

  it("deletes a mirror only once its topics are removed and STOPPED, then tombstones it", async () => {
    const env = mirrorEnv();
    sourceTopic(env.source, "t");
    await env.admin.createMirror("m1", MIRROR_CONFIG);
    await env.admin.addTopics("m1", "t");
    const live = await rejection(env.admin.deleteMirror("m1"));
    expect(live).toBeInstanceOf(MirrorStateError);
    expect(live.errorName).toBe("INVALID_MIRROR_STATE");
    expect(live.message).toContain("still has 1 topic(s) [t]. Remove them first");
    await env.admin.removeTopics("m1", "t");
    expect(env.coordinators.stateOf("t", 0)).toBe("STOPPING");
    expect((await rejection(env.admin.deleteMirror("m1"))).message).toContain("failing over: t-0 (STOPPING)");
    env.coordinators.advance("STOPPING", "STOPPED");
    await env.admin.deleteMirror("m1");
    expect(env.coordinators.tombstoned).toEqual(["m1"]);
    expect(env.destination.controller.image.mirrors.has("m1")).toBe(false);
    expect(env.destination.controller.image.topic("t")!.configs.has("mirror.name")).toBe(false);
  });

  it("runs a deletion in the mirror's command queue: a topic added meanwhile never keeps the deleted mirror's name", async () => {
    const env = mirrorEnv();
    sourceTopic(env.source, "t");
    sourceTopic(env.source, "u");
    await env.admin.createMirror("m1", MIRROR_CONFIG);
    await env.admin.addTopics("m1", "t");
    await env.admin.removeTopics("m1", "t");
    env.coordinators.advance("STOPPING", "STOPPED");
    // The tombstones take a while to be committed; a topic is added meanwhile.
    let committed = (): void => undefined;
    env.coordinators.tombstoneWait = new Promise<void>((resolve) => {
      committed = resolve;
    });
    const deleted = env.admin.deleteMirror("m1");
    const added = rejection(env.admin.addTopics("m1", "u"));
    await new Promise((resolve) => setTimeout(resolve, 10));
    committed();
    await deleted;
    expect((await added).errorName).toBe("UNKNOWN_MIRROR");
    const image = env.destination.controller.image;
    expect(image.mirrors.has("m1")).toBe(false);
    for (const name of ["t", "u"]) expect(image.topic(name)?.configs.get("mirror.name")).toBeUndefined();
  });
});

describe("MirrorAdmin: topics", () => {
  it("adds matching source topics with the source's ids, partition counts and configs, and STARTs them", async () => {
    const env = mirrorEnv();
    const fooId = sourceTopic(env.source, "foo", 3, { "retention.ms": "1000", "min.insync.replicas": "1" });
    const barId = sourceTopic(env.source, "bar", 1);
    sourceTopic(env.source, "other", 1);
    await env.admin.createMirror("m1", MIRROR_CONFIG);
    const result = await env.admin.addTopics("m1", "foo|bar", { replicationFactor: 2 });
    expect(result.message).toBe("Added 2 topic(s) to mirror m1: [bar, foo]");
    const image = env.destination.controller.image;
    const foo = image.topic("foo")!;
    expect(foo.topicId).toBe(fooId);
    expect(foo.partitions).toHaveLength(3);
    expect(foo.partitions[0]!.replicas).toHaveLength(2);
    expect(Object.fromEntries(foo.configs)).toEqual({ "retention.ms": "1000", "mirror.name": "m1" });
    expect(image.topic("bar")!.topicId).toBe(barId);
    expect(image.topic("other")).toBeUndefined();
    expect(env.coordinators.take()).toEqual(["START bar-0", "START foo-0", "START foo-1", "START foo-2"]);
    expect(image.mirrors.get("m1")!["topics.include"]).toBe("foo|bar");
    expect(env.admin.listMirrors()[0]!.topics).toEqual(["bar", "foo"]);
  });

  it("refuses a topic with more partitions here than on the source, changing nothing (soak FC_SEED=1)", async () => {
    // After a failover the old primary added a partition its mirror never synced: a failback would leave
    // that partition FAILED for good (nothing to copy, and partitions cannot be removed).
    const env = mirrorEnv();
    const topicId = sourceTopic(env.source, "orders", 2);
    env.destination.controller.createTopic({
      name: "orders",
      topicId,
      numPartitions: 3,
      replicationFactor: 1,
    });
    await env.admin.createMirror("m1", MIRROR_CONFIG);
    const refused = await rejection(env.admin.addTopics("m1", "orders"));
    expect(refused.errorName).toBe("INVALID_PARTITIONS");
    expect(refused.message).toContain("orders (3 here, 2 on the source)");
    expect(refused.message).toContain("--partitions 3 on the source");
    expect(env.destination.controller.image.topic("orders")!.configs.get("mirror.name")).toBeUndefined();
    expect(env.admin.listMirrors()[0]!.topics).toEqual([]);
    expect(env.coordinators.take()).toEqual([]);
    // Once the source has as many, the add goes through.
    env.source.controller.createPartitions("orders", 3);
    expect((await env.admin.addTopics("m1", "orders", { truncateLocalWrites: true })).topics).toEqual([
      "orders",
    ]);
  });

  it("prints the seeds' message for one topic, and adding again is idempotent", async () => {
    const env = mirrorEnv();
    sourceTopic(env.source, "my-topic");
    await env.admin.createMirror("my-mirror", MIRROR_CONFIG);
    expect((await env.admin.addTopics("my-mirror", "my-topic")).message).toBe(
      "Added 1 topic(s) to mirror my-mirror: [my-topic]",
    );
    env.coordinators.take();
    await env.admin.addTopics("my-mirror", "my-topic");
    expect(env.coordinators.take()).toEqual([]);
    expect(env.destination.controller.image.mirrors.get("my-mirror")!["topics.include"]).toBe("my-topic");
  });

  it("refuses --replication-factor for topics that already exist with another factor, changing nothing (issue 15)", async () => {
    const env = mirrorEnv();
    sourceTopic(env.source, "foo");
    sourceTopic(env.source, "bar");
    await env.admin.createMirror("m1", MIRROR_CONFIG);
    await env.admin.addTopics("m1", "foo", { replicationFactor: 2 });
    env.coordinators.take();
    const refused = await rejection(env.admin.addTopics("m1", "foo|bar", { replicationFactor: 3 }));
    expect(refused.errorName).toBe("INVALID_REPLICATION_FACTOR");
    expect(refused.code).toBe(38);
    expect(refused.message).toMatch(/--replication-factor 3 .* foo \(2\)\. .*nothing was added/);
    // Nothing changed: bar was not created, foo keeps 2 replicas, no command was sent.
    expect(env.destination.controller.image.topic("bar")).toBeUndefined();
    expect(env.destination.controller.image.topic("foo")!.partitions[0]!.replicas).toHaveLength(2);
    expect(env.coordinators.take()).toEqual([]);
    // The same factor again is an idempotent add; no factor lets the existing topic keep its own.
    await env.admin.addTopics("m1", "foo|bar", { replicationFactor: 2 });
    expect(env.destination.controller.image.topic("bar")!.partitions[0]!.replicas).toHaveLength(2);
    expect((await env.admin.addTopics("m1", "foo")).topics).toEqual(["foo"]);
  });

  it("says so when the regex matches nothing, or is invalid", async () => {
    const env = mirrorEnv();
    sourceTopic(env.source, "t");
    await env.admin.createMirror("m1", MIRROR_CONFIG);
    const none = await rejection(env.admin.addTopics("m1", "x.*"));
    expect(none.errorName).toBe("UNKNOWN_TOPIC_OR_PARTITION");
    expect(none.message).toContain("No topic on the source of mirror 'm1' matches 'x.*'");
    expect(none.message).not.toContain("comma");
    // A list, as a Java tool's --topics might take it: the pattern is one regex.
    sourceTopic(env.source, "u");
    const list = await rejection(env.admin.addTopics("m1", "t, u"));
    expect(list.message).toMatch(
      /matches 't, u' .* 't, u' has a comma: the pattern is one regex, not a list; for several topics use alternation, e\.g\. 't\|u'\.$/,
    );
    // A shell glob: 'u*' is a regex matching u, uu, ...; the hint gives the regex meant.
    sourceTopic(env.source, "u1");
    const glob = await rejection(env.admin.addTopics("m1", "u1*x"));
    expect(glob.message).toMatch(
      /'u1\*x' looks like a glob: the pattern is a regex, where '\*' repeats what comes before it; for topics starting with 'u1' use 'u1\.\*x'\.$/,
    );
    expect(none.message).not.toContain("glob");
    const bad = await rejection(env.admin.addTopics("m1", "t("));
    expect(bad).toBeInstanceOf(InvalidMirrorConfigError);
    expect(bad.message).toMatch(/^Invalid regular expression 't\(' in --topic: /);
    expect(env.destination.controller.image.topic("t")).toBeUndefined();
  });

  it("refuses a local topic with the same name and another id", async () => {
    const env = mirrorEnv();
    sourceTopic(env.source, "t");
    env.destination.controller.createTopic({ name: "t", replicationFactor: 1 });
    await env.admin.createMirror("m1", MIRROR_CONFIG);
    const error = await rejection(env.admin.addTopics("m1", "t"));
    expect(error.errorName).toBe("INCONSISTENT_TOPIC_ID");
  });

  it("an add of topics the mirror already copies says so, leaving a paused one paused", async () => {
    const env = mirrorEnv();
    sourceTopic(env.source, "t1");
    sourceTopic(env.source, "t2");
    sourceTopic(env.source, "t3");
    await env.admin.createMirror("m1", MIRROR_CONFIG);
    await env.admin.addTopics("m1", "t1|t2");
    env.coordinators.advance("PREPARING", "MIRRORING");
    await env.admin.pauseTopics("m1", "t2");
    env.coordinators.advance("PAUSING", "PAUSED");
    // Before: "Added 3 topic(s) to mirror m1: [t1, t2, t3]", though two were there already and t2 stays PAUSED.
    expect((await env.admin.addTopics("m1", "t.*")).message).toBe(
      "Added 1 topic(s) to mirror m1: [t3]; 2 already in the mirror, left as they are: [t1, t2 (PAUSED)]",
    );
    expect(env.destination.controller.image.topic("t2")?.configs.get("mirror.name")).toBe("m1.paused");
  });

  it("pause and resume report the states drive read, not those of their first check (a state moving in between)", async () => {
    const env = mirrorEnv();
    sourceTopic(env.source, "my-topic", 2);
    await env.admin.createMirror("my-mirror", MIRROR_CONFIG);
    await env.admin.addTopics("my-mirror", "my-topic");
    env.coordinators.advance("PREPARING", "MIRRORING");
    await env.admin.pauseTopics("my-mirror", "my-topic");
    env.coordinators.take();
    env.coordinators.advance("PAUSING", "PAUSED");
    const partition0 = env.coordinators.describe("my-mirror").find((v) => v.key.partition === 0)!.key;
    // Every describe after the first sees the partition where it went meanwhile.
    const moveAfterFirstRead = (from: string, to: "PAUSED" | "MIRRORING") => {
      env.coordinators.put(partition0, from as "PAUSING");
      const describe = env.coordinators.describe.bind(env.coordinators);
      let reads = 0;
      env.coordinators.describe = (mirror?: string) => {
        const views = describe(mirror);
        if (++reads === 1) env.coordinators.put(partition0, to);
        return views;
      };
      return () => {
        env.coordinators.describe = describe;
        return reads;
      };
    };
    let restore = moveAfterFirstRead("PAUSING", "PAUSED");
    expect((await env.admin.pauseTopics("my-mirror", "my-topic")).message).toBe(
      "Paused mirroring for 0 topic(s): []; 1 already paused: [my-topic]",
    );
    expect(restore()).toBeGreaterThan(1);
    expect(env.coordinators.take()).toEqual([]);
    await env.admin.resumeTopics("my-mirror", "my-topic");
    env.coordinators.take();
    // Resumed already; partition 0 was PREPARING at the first check and MIRRORING when drive read it.
    restore = moveAfterFirstRead("PREPARING", "MIRRORING");
    expect((await env.admin.resumeTopics("my-mirror", "my-topic")).message).toBe(
      "Resumed mirroring for 0 topic(s): []; 1 already mirroring: [my-topic]",
    );
    expect(restore()).toBeGreaterThan(1);
    expect(env.coordinators.take()).toEqual([]);
  });

  it("pause, resume and remove set the mirror.name suffix and send PAUSE, RESUME, STOP", async () => {
    const env = mirrorEnv();
    sourceTopic(env.source, "my-topic", 2);
    await env.admin.createMirror("my-mirror", MIRROR_CONFIG);
    await env.admin.addTopics("my-mirror", "my-topic");
    const mirrorName = () => env.destination.controller.image.topic("my-topic")!.configs.get("mirror.name");
    env.coordinators.advance("PREPARING", "MIRRORING");
    env.coordinators.take();

    expect((await env.admin.pauseTopics("my-mirror", "my-topic")).message).toBe(
      "Paused mirroring for 1 topic(s): [my-topic]",
    );
    expect(mirrorName()).toBe("my-mirror.paused");
    expect(env.coordinators.take()).toEqual(["PAUSE my-topic-0", "PAUSE my-topic-1"]);
    // Again while a partition is still PAUSING: nothing to send, and the message says so.
    const pausing = env.coordinators.describe("my-mirror").find((v) => v.key.partition === 0)!.key;
    env.coordinators.put(pausing, "PAUSING");
    expect((await env.admin.pauseTopics("my-mirror", "my-topic")).message).toBe(
      "Paused mirroring for 0 topic(s): []; 1 unchanged: [my-topic (PAUSING)]",
    );
    env.coordinators.advance("PAUSING", "PAUSED");
    // Again: every partition is PAUSED already, and the message says the call changed nothing.
    expect((await env.admin.pauseTopics("my-mirror", "my-topic")).message).toBe(
      "Paused mirroring for 0 topic(s): []; 1 already paused: [my-topic]",
    );
    expect(env.coordinators.take()).toEqual([]);

    expect((await env.admin.resumeTopics("my-mirror", "my-topic")).message).toBe(
      "Resumed mirroring for 1 topic(s): [my-topic]",
    );
    expect(mirrorName()).toBe("my-mirror");
    expect(env.coordinators.take()).toEqual(["RESUME my-topic-0", "RESUME my-topic-1"]);
    // A resume half done (mirror.name cleared, a partition still PAUSED) is finished by the next one,
    // which says it resumed the topic; with every partition MIRRORING it says it changed nothing.
    const partition1 = env.coordinators.describe("my-mirror").find((v) => v.key.partition === 1)!.key;
    env.coordinators.put(partition1, "PAUSED");
    expect((await env.admin.resumeTopics("my-mirror", "my-topic")).message).toBe(
      "Resumed mirroring for 1 topic(s): [my-topic]",
    );
    expect(env.coordinators.take()).toEqual(["RESUME my-topic-1"]);
    expect((await env.admin.resumeTopics("my-mirror", "my-topic")).message).toBe(
      "Resumed mirroring for 0 topic(s): []; 1 already mirroring: [my-topic]",
    );
    expect(env.coordinators.take()).toEqual([]);
    // Not paused, a partition FAILED: nothing to resume, and the message does not say it resumed.
    env.coordinators.put(partition1, "FAILED");
    expect((await env.admin.resumeTopics("my-mirror", "my-topic")).message).toBe(
      "Resumed mirroring for 0 topic(s): []; 1 unchanged: [my-topic (FAILED)] (FAILED partitions retry on their own or wait for a remove and add: see --describe --failed)",
    );
    expect(env.coordinators.take()).toEqual([]);
    env.coordinators.put(partition1, "MIRRORING");

    expect((await env.admin.removeTopics("my-mirror", "my-topic")).message).toBe(
      "Removed 1 topic(s) from mirror my-mirror: [my-topic]",
    );
    expect(mirrorName()).toBe("my-mirror.removed");
    expect(env.coordinators.take()).toEqual(["STOP my-topic-0", "STOP my-topic-1"]);
    expect(env.destination.controller.image.mirrors.get("my-mirror")!["topics.include"]).toBeUndefined();
  });

  it("accepts the later revision's names as aliases", async () => {
    const env = mirrorEnv();
    sourceTopic(env.source, "t");
    await env.admin.createMirror("m1", MIRROR_CONFIG);
    expect((await env.admin.startMirrorTopics("m1", "t")).message).toBe("Added 1 topic(s) to mirror m1: [t]");
    expect((await env.admin.stopMirrorTopics("m1", "t")).message).toBe(
      "Removed 1 topic(s) from mirror m1: [t]",
    );
  });

  it("a replication factor above the brokers running says the largest one that fits", async () => {
    const env = mirrorEnv();
    sourceTopic(env.source, "t");
    await env.admin.createMirror("m1", MIRROR_CONFIG);
    const live = env.destination.controller.image.liveBrokers().length;
    const refused = await rejection(env.admin.addTopics("m1", "t", { replicationFactor: live + 2 }));
    expect(refused.errorName).toBe("INVALID_REPLICATION_FACTOR");
    // Before: "... Nothing was added; try again once the cluster can.", which it never will.
    expect(refused.message).toMatch(
      new RegExp(
        `could not create 't': replication factor ${live + 2} needs that many live brokers; .* Nothing was added; give a replication factor of at most ${live} \\(the brokers running now`,
      ),
    );
    expect(env.destination.controller.image.topic("t")).toBeUndefined();
  });

  it.each([
    [-1, "-1"],
    [0, "0"],
    [1.5, "1.5"],
    ["3", '"3" (a string)'],
  ])("a replicationFactor of %j is refused as what it is, before anything changes", async (rf, shown) => {
    const env = mirrorEnv();
    sourceTopic(env.source, "t");
    await env.admin.createMirror("m1", MIRROR_CONFIG);
    // A JavaScript caller (no type check) or a typo; before, -1 and "3" reached the topic creation and came
    // back as "replication factor 3 needs that many live brokers; 3 are live (0, 1, 2)".
    const refused = await rejection(
      env.admin.addTopics("m1", "t", { replicationFactor: rf as unknown as number }),
    );
    expect(refused.errorName).toBe("INVALID_REPLICATION_FACTOR");
    expect(refused.message).toBe(
      `replicationFactor (--replication-factor) must be an integer >= 1, got ${shown}; nothing was added. Give a number such as 3, or leave it out for the mirror's default.replication.factor.`,
    );
    expect(env.destination.controller.image.topic("t")).toBeUndefined();
    expect(env.coordinators.take()).toEqual([]);
  });

  it("refuses a re-add whose new partitions cannot be placed before changing anything", async () => {
    const env = mirrorEnv();
    sourceTopic(env.source, "t");
    await env.admin.createMirror("m1", MIRROR_CONFIG);
    await env.admin.addTopics("m1", "t");
    await env.admin.removeTopics("m1", "t");
    env.coordinators.advance("STOPPING", "STOPPED");
    env.coordinators.take();
    // The source grew a partition; the destination cannot place a replica of it with its brokers down.
    env.source.controller.createPartitions("t", 2);
    const replicas = env.destination.controller.image.topic("t")!.partitions[0]!.replicas.length;
    expect(replicas).toBe(2);
    env.destination.crashBroker(1);
    const refused = await rejection(env.admin.addTopics("m1", "t", { truncateLocalWrites: true }));
    expect(refused.errorName).toBe("INVALID_REPLICATION_FACTOR");
    expect(refused.message).toBe(
      `Cannot add 't' to mirror 'm1': could not raise 't' to the source's 2 partitions: replication factor ${replicas} needs that many live brokers; 1 are live (0). Nothing was added; try again once the cluster can.`,
    );
    const topic = env.destination.controller.image.topic("t")!;
    expect(topic.configs.get("mirror.name")).toBe("m1.removed");
    expect(topic.partitions).toHaveLength(1);
    expect(env.coordinators.take()).toEqual([]);
  });

  it("re-adding a STOPPED topic sets mirror.name again and STARTs it", async () => {
    const env = mirrorEnv();
    sourceTopic(env.source, "t");
    await env.admin.createMirror("m1", MIRROR_CONFIG);
    await env.admin.addTopics("m1", "t");
    await env.admin.removeTopics("m1", "t");
    const early = await rejection(env.admin.addTopics("m1", "t"));
    expect(early).toBeInstanceOf(InvalidMirrorStateError);
    expect(early.message).toContain("Cannot START mirror partition t-0 in state STOPPING");
    env.coordinators.advance("STOPPING", "STOPPED");
    env.coordinators.take();
    await env.admin.addTopics("m1", "t");
    expect(env.destination.controller.image.topic("t")!.configs.get("mirror.name")).toBe("m1");
    expect(env.coordinators.take()).toEqual(["START t-0"]);
  });

  it("a pattern that matches only removed topics says so, with the topics the command takes", async () => {
    const env = mirrorEnv();
    sourceTopic(env.source, "t");
    sourceTopic(env.source, "u");
    await env.admin.createMirror("m1", MIRROR_CONFIG);
    await env.admin.addTopics("m1", "t|u");
    await env.admin.removeTopics("m1", "t");
    const refused = await rejection(env.admin.pauseTopics("m1", "t"));
    expect(refused.errorName).toBe("UNKNOWN_TOPIC_OR_PARTITION");
    expect(refused.message).toBe(
      "No topic of mirror 'm1' matches 't' (it matches t (removed), and this command takes only mirrored or paused topics; mirrored or paused topics in the mirror: u). t was failed over already (a --remove or --promote began it, and it ends STOPPED on its own, writable): nothing to do; --describe --mirror m1 shows whether it is STOPPED yet. (--add would mirror it again, a failback.)",
    );
    // A promote repeated after a crash inside the first one: the same answer, not advice to --add.
    const promoted = await rejection(env.admin.promoteTopics("m1", "t"));
    expect(promoted.message).toMatch(
      /t was failed over already .* --describe --mirror m1 shows whether it is STOPPED yet\./,
    );
    expect(promoted.message).not.toMatch(/Add topics/);
    const list = await rejection(env.admin.pauseTopics("m1", "u,t"));
    expect(list.message).toMatch(/Add topics with .* 'u,t' has a comma: .* e\.g\. 'u\|t'\.$/);
  });

  it("refuses a topic not in the mirror, and a command the state does not allow", async () => {
    const env = mirrorEnv();
    sourceTopic(env.source, "t");
    env.destination.controller.createTopic({ name: "local", replicationFactor: 1 });
    await env.admin.createMirror("m1", MIRROR_CONFIG);
    await env.admin.addTopics("m1", "t");
    const missing = await rejection(env.admin.pauseTopics("m1", "local"));
    expect(missing.errorName).toBe("UNKNOWN_TOPIC_OR_PARTITION");
    expect(missing.message).toBe(
      "No topic of mirror 'm1' matches 'local' (the pattern must match whole topic names; mirrored or paused topics in the mirror: t). Add topics with --add --topic REGEX --mirror m1.",
    );
    const early = await rejection(env.admin.pauseTopics("m1", "t"));
    expect(early).toBeInstanceOf(InvalidMirrorStateError);
    expect(early.errorName).toBe("INVALID_MIRROR_STATE");
    expect(early.message).toBe(
      "Cannot PAUSE mirror partition t-0 in state PREPARING: PAUSE is accepted only in MIRRORING, PAUSING, PAUSED. Wait until it gets there (--describe --mirror m1), then retry.",
    );
    expect(env.destination.controller.image.topic("t")!.configs.get("mirror.name")).toBe("m1");
  });

  it("keeps the coordinator's refusal message when a command races", async () => {
    const env = mirrorEnv();
    sourceTopic(env.source, "t");
    await env.admin.createMirror("m1", MIRROR_CONFIG);
    await env.admin.addTopics("m1", "t");
    env.coordinators.advance("PREPARING", "MIRRORING");
    const original = env.coordinators.command.bind(env.coordinators);
    env.coordinators.command = async () => {
      throw new InvalidMirrorStateError("EPOCH_FENCING", "PAUSE", null, "coordinator says no");
    };
    expect((await rejection(env.admin.pauseTopics("m1", "t"))).message).toBe("coordinator says no");
    // Refused after the state check passed: the mirror.name it had written is restored, nothing changed.
    expect(env.destination.controller.image.topic("t")!.configs.get("mirror.name")).toBe("m1");
    env.coordinators.command = original;
  });

  it("restores mirror.name when a resume is refused after its state check (the partition failed meanwhile)", async () => {
    const env = mirrorEnv();
    sourceTopic(env.source, "t");
    await env.admin.createMirror("m1", MIRROR_CONFIG);
    await env.admin.addTopics("m1", "t");
    env.coordinators.advance("PREPARING", "MIRRORING");
    await env.admin.pauseTopics("m1", "t");
    env.coordinators.advance("PAUSING", "PAUSED");
    env.coordinators.take();
    const original = env.coordinators.command.bind(env.coordinators);
    env.coordinators.command = async () => {
      throw new InvalidMirrorStateError("FAILED", "RESUME", null, "t-0 failed on the way");
    };
    expect((await rejection(env.admin.resumeTopics("m1", "t"))).message).toBe("t-0 failed on the way");
    expect(env.destination.controller.image.topic("t")!.configs.get("mirror.name")).toBe("m1.paused");
    env.coordinators.command = original;
  });

  it("says the new mirror.name stayed when restoring it fails too", async () => {
    const env = mirrorEnv();
    sourceTopic(env.source, "t");
    await env.admin.createMirror("m1", MIRROR_CONFIG);
    await env.admin.addTopics("m1", "t");
    env.coordinators.advance("PREPARING", "MIRRORING");
    const controller = env.destination.controller;
    const alter = controller.incrementalAlterConfigs.bind(controller);
    env.coordinators.command = async () => {
      // The controller becomes unavailable after the pause's own write: the restore cannot be written.
      controller.incrementalAlterConfigs = () => {
        throw new ClusterError("NOT_CONTROLLER", "no active controller");
      };
      throw new InvalidMirrorStateError("FAILED", "PAUSE", null, "t-0 failed on the way");
    };
    const refused = await rejection(env.admin.pauseTopics("m1", "t"));
    expect(refused.errorName).toBe("INVALID_MIRROR_STATE");
    expect(refused.message).toBe(
      "The pause of [t] was refused (t-0 failed on the way), and restoring their mirror.name failed too (no active controller): they stay paused. Describe the mirror, then resume them or try again.",
    );
    controller.incrementalAlterConfigs = alter;
    expect(controller.image.topic("t")!.configs.get("mirror.name")).toBe("m1.paused");
  });
});

describe("MirrorAdmin: describe", () => {
  it("reports source HW, destination LEO, lag and state, sorted, with --failed", async () => {
    const env = mirrorEnv();
    sourceTopic(env.source, "foo", 2);
    sourceTopic(env.source, "bar", 1);
    await env.admin.createMirror("m1", MIRROR_CONFIG);
    await env.admin.addTopics("m1", "foo|bar");
    appendRecords(env.source, "foo", 0, 10);
    appendRecords(env.source, "foo", 1, 4);
    appendRecords(env.destination, "foo", 0, 7);
    env.coordinators.advance("PREPARING", "MIRRORING");
    const fooKey = env.coordinators
      .describe()
      .find((v) => v.key.topic === "foo" && v.key.partition === 1)!.key;
    await env.coordinators.command(fooKey, { type: "FAIL", message: "boom", retryable: false });
    const rows = await env.admin.describe("m1");
    expect(
      rows.map((r) => [r.topic, r.partition, r.sourceOffset, r.destinationOffset, r.lag, r.state]),
    ).toEqual([
      ["bar", 0, 0n, 0n, 0n, "MIRRORING"],
      ["foo", 0, 10n, 7n, 3n, "MIRRORING"],
      ["foo", 1, 4n, 0n, 4n, "FAILED"],
    ]);
    const failed = await env.admin.describe(undefined, { failedOnly: true });
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ topic: "foo", partition: 1, errorMessage: "boom", retryAttempt: -1 });
  });

  it("shows the fetchers' source offsets when the source does not answer (lag unknown), the live destination log end, and UNKNOWN without state", async () => {
    const env = mirrorEnv();
    sourceTopic(env.source, "t", 2);
    await env.admin.createMirror("m1", MIRROR_CONFIG);
    await env.admin.addTopics("m1", "t");
    const { MirrorAdmin } = await import("../src/admin/mirror-admin");
    const admin = new MirrorAdmin({
      destination: env.destination,
      sources: env.sources,
      coordinators: env.coordinators,
      offsets: (key) =>
        key.partition === 0 ? { sourceHighWatermark: 94n, destinationLogEndOffset: 84n } : undefined,
    });
    await env.coordinators.tombstoneMirror("m1");
    env.network.reachable = false;
    const rows = await admin.describe("m1");
    expect(rows.map((r) => [r.partition, r.sourceOffset, r.destinationOffset, r.lag, r.state])).toEqual([
      // The fetcher's view of the destination (84) is ignored: the leader's log end (0) is read live. The
      // source did not answer: its last-seen offset is shown, the lag is unknown (it may be larger now).
      [0, 94n, 0n, null, "UNKNOWN"],
      [1, null, 0n, null, "UNKNOWN"],
    ]);
  });
});
