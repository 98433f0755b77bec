import {
  ClusterError,
  EmbeddedKafka,
  KafkaCluster,
  ManualClock,
  ManualScheduler,
  SeededRandom,
} from "@cluster-mirror/cluster";
import { describe, expect, it } from "vitest";
import { ClusterMirroring } from "../src/cluster-mirroring";
import { MIRROR_STATE_TOPIC } from "../src/destination/embedded-state-log";
import { EmbeddedSourceConnector, EmbeddedSourceRegistry, MirroringClosedError } from "../src/index";
import type { SourceCluster, SourceConnector } from "../src/ports";
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
      [{ maxBytes: 0 }, /options.fetch.maxBytes must be a whole number, 1 or more; got 0/],
      [{ partitionMaxBytes: -1 }, /options.fetch.partitionMaxBytes .* 1 or more; got -1/],
      [{ partitionMaxBytes: "1048576" }, /options.fetch.partitionMaxBytes .* 1 or more; got "1048576"/],
      [{ backoffMs: Number.NaN }, /options.fetch.backoffMs must be a whole number, 0 or more; got NaN/],
      [{ fetchWaitMaxMs: -5 }, /options.fetch.fetchWaitMaxMs .* 0 or more; got -5/],
      [{ backoffMaxMs: 1.5 }, /options.fetch.backoffMaxMs .* 0 or more; got 1.5/],
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

  it("ClusterMirroring.start refuses a misspelled option and a retry, fetch or timeout it cannot use", () => {
    const clock = new ManualClock(0);
    const scheduler = new ManualScheduler(clock);
    const cluster = KafkaCluster.start({ brokers: 1, clock, scheduler, random: new SeededRandom(1) });
    const sources = new EmbeddedSourceConnector(new EmbeddedSourceRegistry());
    const start = (options: object) => () =>
      ClusterMirroring.start({ cluster, sources, random: new SeededRandom(2), ...options } as never);
    const refused: [object, RegExp][] = [
      // Ignored before: the engine ran with the defaults the caller meant to change.
      [{ retries: { baseMs: 5 } }, /options has no 'retries'. Known: cluster, sources, random, .*retry/],
      [{ numStatePartition: 2 }, /options has no 'numStatePartition'; did you mean 'numStatePartitions'\?/],
      [{ coordinatorLoadTimeoutMS: 5 }, /did you mean 'coordinatorLoadTimeoutMs'\?/],
      [{ fetch: { maxByte: 1024 } }, /options.fetch has no 'maxByte'; did you mean 'maxBytes'\?/],
      // A backoff of NaN (a timer of about 1 ms) and a budget never used up, taken without a word.
      [
        { retry: { maxAttempts: 3 } },
        /options.retry needs all of baseMs, capMs and maxAttempts; baseMs, capMs are missing/,
      ],
      [
        { retry: { baseMs: 100, capMs: 1000, maxAttempts: -1 } },
        /retry.maxAttempts must be a whole number, 0 or more; 0 retries without end; got -1/,
      ],
      [
        { retry: { baseMs: "100", capMs: 1000, maxAttempts: 1 } },
        /retry.baseMs must be a whole number, 0 or more; got "100" \(a string\)/,
      ],
      [{ retry: 5 }, /options.retry must be \{ baseMs, capMs, maxAttempts \}, got 5/],
      [
        { coordinatorLoadTimeoutMs: -1 },
        /coordinatorLoadTimeoutMs must be a whole number, 0 or more; got -1/,
      ],
      [{ coordinatorLoadTimeoutMs: Number.NaN }, /coordinatorLoadTimeoutMs must be a whole number/],
      [{ defaultApiTimeoutMs: 0 }, /defaultApiTimeoutMs must be a whole number, 1 or more; got 0/],
      [{ defaultApiTimeoutMS: 60_000 }, /did you mean 'defaultApiTimeoutMs'\?/],
      [{ fetch: { maxBytes: 0 } }, /fetch.maxBytes must be a whole number, 1 or more; got 0/],
      [{ fetch: { backoffMs: -5 } }, /fetch.backoffMs must be a whole number, 0 or more; got -5/],
      [{ warn: "console" }, /options.warn must be a function/],
      // The application's client in place of the cluster failed deep inside with a TypeError.
      [
        { cluster: new EmbeddedKafka(cluster) },
        /options.cluster must be a KafkaCluster \(from KafkaCluster.start\), got an object of class EmbeddedKafka/,
      ],
    ];
    for (const [options, message] of refused) {
      let error: unknown;
      try {
        start(options)();
      } catch (e) {
        error = e;
      }
      expect(error, Object.keys(options).join()).toBeInstanceOf(ClusterError);
      expect((error as ClusterError).errorName).toBe("INVALID_REQUEST");
      expect((error as Error).message).toMatch(message);
    }
    // Nothing was started by the refused ones: a good start, with every option, still starts.
    expect(cluster.controller.image.topic("__mirror_state")).toBeUndefined();
    const mirroring = start({
      numStatePartitions: 2,
      lingerMs: 0,
      retry: { baseMs: 10, capMs: 100, maxAttempts: 0 },
      fetch: { maxBytes: 1024, partitionMaxBytes: 512, backoffMs: 0, backoffMaxMs: 10, fetchWaitMaxMs: 5 },
      warn: () => {},
      coordinatorLoadTimeoutMs: 0,
      defaultApiTimeoutMs: 60_000,
      onTransition: () => {},
    })();
    mirroring.close();
  });

  it("EmbeddedSourceRegistry.register refuses the engine in place of mirroring.asSource(), and misspelled options", () => {
    const env = embeddedApiEnv();
    const refusal = (options: unknown) => {
      try {
        env.registry.register("a:9092", env.destination, options as never);
      } catch (error) {
        return error as ClusterError;
      }
      throw new Error("expected a refusal");
    };
    // Taken before as a source without its answers: LME -1 for every partition, and no mirrors.
    const engine = refusal(env.mirroring);
    expect(engine.errorName).toBe("INVALID_REQUEST");
    expect(engine.message).toContain("options is a ClusterMirroring: pass mirroring.asSource()");
    expect(refusal({ ...env.mirroring.asSource(), principle: "User:mirror" }).message).toMatch(
      /options has no 'principle'; did you mean 'principal'\?/,
    );
    expect(() => env.registry.register("", env.destination)).toThrow(/bootstrap must be the address/);
    expect(() => env.registry.register("a:9092", env.mirroring as never)).toThrow(
      /cluster must be a KafkaCluster/,
    );
    // None of them registered anything; a good registration does.
    expect(env.registry.lookup("a:9092")).toBeUndefined();
    env.registry.register("a:9092", env.destination, { ...env.mirroring.asSource(), principal: "User:m" });
    expect(env.registry.lookup("a:9092")).toBe(env.destination);
  });

  it("after close() every admin call fails with MirroringClosedError and writes nothing", async () => {
    const env = await mirrored();
    env.source.controller.createTopic({ name: "payments", replicaAssignment: [[0]], configs: {} });
    const kafka = new EmbeddedKafka(env.destination);
    const stateRecords = async () =>
      (await runUntil(env, kafka.admin().fetchTopicOffsets(MIRROR_STATE_TOPIC)))
        .map((o) => Number(o.high))
        .reduce((a, b) => a + b, 0);
    const recordsBefore = await stateRecords();
    const m1Before = env.destination.controller.image.mirrors.get("m1");
    env.mirroring.close();
    const admin = env.mirroring.admin;
    // listMirrors and describeMirrorConfig answer at once (no promise): they throw.
    for (const call of [() => admin.listMirrors(), () => admin.describeMirrorConfig("m1")]) {
      expect(call).toThrow(MirroringClosedError);
    }
    const calls: (() => Promise<unknown>)[] = [
      () => admin.createMirror("m2", { "bootstrap.servers": SOURCE_BOOTSTRAP }),
      () => admin.alterMirrorConfig("m1", { set: { "topics.include": "payments" } }),
      () => admin.addTopics("m1", "payments"),
      () => admin.removeTopics("m1", "orders"),
      () => admin.pauseTopics("m1", "orders"),
      () => admin.resumeTopics("m1", "orders"),
      () => admin.recoverTopics("m1", "orders"),
      () => admin.previewFailover("m1", "orders"),
      () => admin.verifyMirror("m1"),
      () => admin.describe("m1"),
      () => admin.deleteMirror("m1"),
    ];
    for (const call of calls) {
      const error = await refusal(() => runUntil(env, call()));
      expect(error, String(error)).toBeInstanceOf(MirroringClosedError);
      expect(error.message).toMatch(/ClusterMirroring.close\(\).*start it again to go on/);
    }
    // Nothing reached the cluster: no mirror m2, no topic added, no __mirror_state record.
    expect([...env.destination.controller.image.mirrors.keys()]).toEqual(["m1"]);
    expect(env.destination.controller.image.topic("payments")).toBeUndefined();
    expect(env.destination.controller.image.mirrors.get("m1")).toEqual(m1Before);
    expect(await stateRecords()).toBe(recordsBefore);
  });

  it("calls made before close() that run after it fail with MirroringClosedError and write nothing", async () => {
    const env = await mirrored();
    env.source.controller.createTopic({ name: "payments", replicaAssignment: [[0]], configs: {} });
    const m1Before = env.destination.controller.image.mirrors.get("m1");
    const ordersBefore = env.destination.controller.image.topic("orders")?.configs;
    const admin = env.mirroring.admin;
    // Each passes its own closed check, then runs in the mirror's command queue: after close().
    const outcomes = [
      admin.alterMirrorConfig("m1", { set: { "topics.exclude": "payments" } }),
      admin.addTopics("m1", "payments"),
      admin.pauseTopics("m1", "orders"),
      admin.removeTopics("m1", "orders"),
      admin.createMirror("m2", { "bootstrap.servers": SOURCE_BOOTSTRAP }),
    ].map((call) =>
      call.then(
        () => undefined,
        (error: unknown) => error,
      ),
    );
    env.mirroring.close();
    for (const outcome of outcomes) {
      const error = await runUntil(env, outcome);
      expect(error, String(error)).toBeInstanceOf(MirroringClosedError);
    }
    // Failed, so nothing changed: alterMirrorConfig stored its change before failing.
    expect(env.destination.controller.image.mirrors.get("m1")).toEqual(m1Before);
    expect([...env.destination.controller.image.mirrors.keys()]).toEqual(["m1"]);
    expect(env.destination.controller.image.topic("payments")).toBeUndefined();
    expect(env.destination.controller.image.topic("orders")?.configs).toEqual(ordersBefore);
  });
});

/** A connector to the registry's sources that calls close() right after the source is asked `closeDuring`. */
class ClosingConnector implements SourceConnector {
  inner: SourceConnector | undefined;
  close: (() => void) | undefined;
  closeDuring: keyof SourceCluster | undefined;

  connect(...args: Parameters<SourceConnector["connect"]>): SourceCluster {
    const source = this.inner!.connect(...args);
    return new Proxy(source, {
      get: (target, property, receiver) => {
        const value: unknown = Reflect.get(target, property, receiver);
        if (typeof value !== "function") return value;
        return (...callArgs: unknown[]) => {
          const answer: unknown = value.apply(target, callArgs);
          if (property === this.closeDuring) {
            this.closeDuring = undefined;
            this.close?.();
          }
          return answer;
        };
      },
    });
  }
}

describe("close() while an admin call waits on the source", () => {
  async function closingEnv() {
    const connector = new ClosingConnector();
    const env = embeddedApiEnv({ sources: connector });
    connector.inner = new EmbeddedSourceConnector(env.registry);
    connector.close = () => env.mirroring.close();
    env.registry.register("source-alias:9092", env.source);
    env.source.controller.createTopic({ name: "orders", replicaAssignment: [[0]], configs: {} });
    env.source.controller.createTopic({ name: "payments", replicaAssignment: [[0]], configs: {} });
    await runUntil(env, env.mirroring.admin.createMirror("m1", { "bootstrap.servers": SOURCE_BOOTSTRAP }));
    await runUntil(env, env.mirroring.admin.addTopics("m1", "orders"));
    await runUntil(env, env.mirroring.whenState("m1", "MIRRORING"));
    return { env, connector };
  }

  it("addTopics fails with MirroringClosedError and creates no mirror topic (it left a read-only one)", async () => {
    const { env, connector } = await closingEnv();
    // The mirror-loop check asks the source for its mirrors, after the coordinators were waited for.
    connector.closeDuring = "listMirrors";
    const error = await refusal(() => runUntil(env, env.mirroring.admin.addTopics("m1", "payments")));
    expect(error, String(error)).toBeInstanceOf(MirroringClosedError);
    expect(env.destination.controller.image.topic("payments")).toBeUndefined();
    expect(env.destination.controller.image.mirrors.get("m1")?.["topics.include"]).toBe("orders");
  });

  it("alterMirrorConfig of the connection fails with MirroringClosedError and stores nothing", async () => {
    const { env, connector } = await closingEnv();
    const before = env.destination.controller.image.mirrors.get("m1");
    connector.closeDuring = "clusterId";
    const error = await refusal(() =>
      runUntil(
        env,
        env.mirroring.admin.alterMirrorConfig("m1", { set: { "bootstrap.servers": "source-alias:9092" } }),
      ),
    );
    expect(error, String(error)).toBeInstanceOf(MirroringClosedError);
    expect(env.destination.controller.image.mirrors.get("m1")).toEqual(before);
  });
});
