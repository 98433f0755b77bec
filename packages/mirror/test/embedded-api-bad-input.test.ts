import {
  ClusterError,
  KafkaCluster,
  ManualClock,
  ManualScheduler,
  SeededRandom,
} from "@cluster-mirror/cluster";
import { describe, expect, it } from "vitest";
import { ClusterMirroring } from "../src/cluster-mirroring";
import { EmbeddedSourceConnector, EmbeddedSourceRegistry } from "../src/index";
import { embeddedApiEnv, runUntil, SOURCE_BOOTSTRAP } from "./embedded-api-helpers";

type Refusal = Error & { errorName?: string };

async function refusal(work: () => Promise<unknown>): Promise<Refusal> {
  try {
    await work();
  } catch (error) {
    return error as Refusal;
  }
  throw new Error("expected a refusal");
}

/** An embedded mirror `m1` of the source's `orders`, MIRRORING. */
async function mirrored() {
  const env = embeddedApiEnv();
  env.source.controller.createTopic({ name: "orders", replicaAssignment: [[0]], configs: {} });
  await runUntil(env, env.mirroring.admin.createMirror("m1", { "bootstrap.servers": SOURCE_BOOTSTRAP }));
  await runUntil(env, env.mirroring.admin.addTopics("m1", "orders"));
  await runUntil(env, env.mirroring.whenState("m1", "MIRRORING"));
  return env;
}

describe("the library refuses bad input with a typed error that says what to pass", () => {
  it("a topic selection that is not a string (a RegExp, nothing) is refused before anything changes", async () => {
    const env = await mirrored();
    const admin = env.mirroring.admin;
    const asRegExp = await refusal(() => admin.addTopics("m1", /orders/ as unknown as string));
    expect(asRegExp).toBeInstanceOf(ClusterError);
    expect(asRegExp.errorName).toBe("INVALID_REQUEST");
    expect(asRegExp.message).toContain('pass its source as a string ("orders")');
    for (const call of [
      () => admin.removeTopics("m1", undefined as unknown as string),
      () => admin.pauseTopics("m1", 5 as unknown as string),
      () => admin.resumeTopics("m1", null as unknown as string),
      () => admin.promoteTopics("m1", /o/ as unknown as string),
      () => admin.previewFailover("m1", undefined as unknown as string),
    ]) {
      const error = await refusal(call);
      expect(error.errorName).toBe("INVALID_REQUEST");
      expect(error.message).toMatch(/the topics to select must be a string/);
    }
    // Nothing was failed over or paused.
    expect((await admin.describe("m1")).map((r) => r.state)).toEqual(["MIRRORING"]);
  });

  it("a mirror name that is not a string, and config changes of the wrong shape", async () => {
    const env = await mirrored();
    const admin = env.mirroring.admin;
    const named = await refusal(() => admin.describe(5 as unknown as string));
    expect(named.errorName).toBe("INVALID_MIRROR_NAME");
    expect(named.message).toContain("a mirror name is a string");
    const nullChanges = await refusal(() => admin.alterMirrorConfig("m1", null as never));
    expect(nullChanges.errorName).toBe("INVALID_REQUEST");
    expect(nullChanges.message).toContain("{ set?:");
    const stringDelete = await refusal(() =>
      admin.alterMirrorConfig("m1", { delete: "topics.include" as unknown as string[] }),
    );
    expect(stringDelete.errorName).toBe("INVALID_REQUEST");
    expect(stringDelete.message).toContain('["topics.include"]');
  });

  it("a timeoutMs that is no whole number of 0 or more is refused instead of waiting for ever", async () => {
    const env = await mirrored();
    const { mirroring } = env;
    for (const timeoutMs of [Number.NaN, -5, "abc" as unknown as number, 1.5]) {
      const state = await refusal(() => mirroring.whenState("m1", "PAUSED", { timeoutMs }));
      expect(state.errorName).toBe("INVALID_REQUEST");
      expect(state.message).toContain("timeoutMs must be a whole number of milliseconds");
      expect((await refusal(() => mirroring.whenCaughtUp("m1", { timeoutMs }))).errorName).toBe(
        "INVALID_REQUEST",
      );
      expect((await refusal(() => mirroring.whenSynced("m1", { timeoutMs }))).errorName).toBe(
        "INVALID_REQUEST",
      );
      const promote = await refusal(() => mirroring.admin.promoteTopics("m1", "orders", { timeoutMs }));
      expect(promote.errorName).toBe("INVALID_REQUEST");
    }
    // The promote refused before failing anything over.
    expect((await mirroring.admin.describe("m1")).map((r) => r.state)).toEqual(["MIRRORING"]);
  });

  it("ClusterMirroring.start needs a source connector and a __mirror_state size it can create", () => {
    const clock = new ManualClock(0);
    const scheduler = new ManualScheduler(clock);
    const cluster = KafkaCluster.start({ brokers: 1, clock, scheduler, random: new SeededRandom(1) });
    const start = (options: object) => () =>
      ClusterMirroring.start({ cluster, random: new SeededRandom(2), ...options } as never);
    expect(start({})).toThrow(/options.sources is missing: pass a SourceConnector/);
    // Review s54: no options at all was a TypeError ("Cannot read properties of undefined (reading 'cluster')").
    expect(() => ClusterMirroring.start(undefined as never)).toThrow(
      /ClusterMirroring.start: options.cluster is missing/,
    );
    const sources = new EmbeddedSourceConnector(new EmbeddedSourceRegistry());
    for (const numStatePartitions of [0, 1e6, 2.5, "4"]) {
      expect(start({ sources, numStatePartitions })).toThrow(
        /numStatePartitions \(mirror.topic.num.partitions\) must be a whole number from 1 to 1000/,
      );
    }
    // Fetch sizes of no bytes (an embedded source then answers nothing, ever: the mirror stalls without a
    // word) and waits that are not whole milliseconds.
    for (const [fetch, message] of [
      [
        { maxBytes: 0 },
        /fetch.maxBytes \(fetch.response.max.bytes: .*\) must be a whole number of bytes, at least 1, got 0/,
      ],
      [{ partitionMaxBytes: -1 }, /fetch.partitionMaxBytes .* at least 1, got -1/],
      [{ partitionMaxBytes: "1048576" }, /fetch.partitionMaxBytes .* at least 1, got "1048576"/],
      [
        { backoffMs: Number.NaN },
        /fetch.backoffMs \(fetch.backoff.ms\) must be a whole number of milliseconds, 0 or more, got NaN/,
      ],
      [{ fetchWaitMaxMs: -5 }, /fetch.fetchWaitMaxMs .* 0 or more, got -5/],
      [{ backoffMaxMs: 1.5 }, /fetch.backoffMaxMs .* 0 or more, got 1.5/],
    ] as const) {
      expect(start({ sources, fetch }), JSON.stringify(fetch)).toThrow(message);
    }
    // Nothing was created by the refused starts; a good one still starts.
    expect(cluster.controller.image.topic("__mirror_state")).toBeUndefined();
    const mirroring = ClusterMirroring.start({
      cluster,
      sources,
      random: new SeededRandom(2),
      numStatePartitions: 2,
      fetch: { maxBytes: 1, partitionMaxBytes: 1, backoffMs: 0, fetchWaitMaxMs: 0 },
    });
    expect(cluster.controller.image.topic("__mirror_state")?.partitions.length).toBe(2);
    mirroring.close();
  });
});
