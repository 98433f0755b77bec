import { KafkaError } from "@cluster-mirror/protocol";
import { describe, expect, it } from "vitest";
import { InvalidMirrorConfigError, SourceUnreachableError } from "../src/admin/errors";
import { checkMirrorConfigKeys, compilePattern, parseMirrorConfig } from "../src/admin/mirror-config";
import { exactTopicPattern, topicPattern } from "../src/admin/topic-selection";
import { MIRROR_CONFIG, mirrorEnv } from "./meta-helpers";

async function rejection(work: Promise<unknown>): Promise<KafkaError> {
  try {
    await work;
  } catch (error) {
    return error as KafkaError;
  }
  throw new Error("expected a rejection");
}

describe("MirrorAdmin: a source connector that refuses the mirror's settings", () => {
  it("passes INVALID_CONFIG on as a config error, not as an unreachable source", async () => {
    const env = mirrorEnv();
    // As the kafkajs connector refuses `bootstrap.servers=localhost` or `sasl.mechanism=GSSAPI`.
    env.network.connect = () => {
      throw new KafkaError(
        "INVALID_CONFIG",
        40,
        false,
        "mirror 'm': bootstrap.servers entry 'localhost' is not host:port (e.g. 127.0.0.1:9092)",
      );
    };
    const error = await rejection(
      env.admin.createMirror("m", { ...MIRROR_CONFIG, "bootstrap.servers": "localhost" }),
    );
    expect(error).not.toBeInstanceOf(SourceUnreachableError);
    expect(error).toBeInstanceOf(InvalidMirrorConfigError);
    expect(error.errorName).toBe("INVALID_CONFIG");
    expect(error.retriable).toBe(false);
    expect(error.message).toContain("bootstrap.servers entry 'localhost' is not host:port");
    expect(error.message).not.toContain("Cannot reach");
    expect(error.message).toContain("Fix the mirror config");
    expect(env.admin.listMirrors()).toEqual([]);
  });

  it("keeps the config key the connector names", async () => {
    const env = mirrorEnv();
    env.network.connect = () => {
      throw Object.assign(new KafkaError("INVALID_CONFIG", 40, false, "mirror 'm': sasl.mechanism: GSSAPI"), {
        config: "sasl.mechanism",
      });
    };
    const error = await rejection(env.admin.createMirror("m", MIRROR_CONFIG));
    expect(error).toBeInstanceOf(InvalidMirrorConfigError);
    expect((error as InvalidMirrorConfigError).config).toBe("sasl.mechanism");
  });

  it("still reports a refused connection as NETWORK_EXCEPTION (retriable)", async () => {
    const env = mirrorEnv();
    env.network.reachable = false;
    const error = await rejection(env.admin.createMirror("m", MIRROR_CONFIG));
    expect(error).toBeInstanceOf(SourceUnreachableError);
    expect(error.retriable).toBe(true);
  });
});

describe("an unknown mirror config key", () => {
  function refusal(configs: Record<string, string>): string {
    try {
      checkMirrorConfigKeys(configs);
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidMirrorConfigError);
      return (error as Error).message;
    }
    throw new Error("expected a refusal");
  }

  it("names the key it was probably meant to be", () => {
    const message = refusal({ "bootstrap.servers": "s:9092", "mirror.num.replica.fetcher": "2" });
    expect(message).toContain(
      "Unknown mirror config 'mirror.num.replica.fetcher'. Did you mean 'mirror.num.replica.fetchers'?",
    );
    expect(refusal({ "topic.include": "x" })).toContain("Did you mean 'topics.include'?");
    // With several unknown keys, each hint names the key it is for.
    expect(refusal({ "topic.include": "x", "group.include": "y" })).toContain(
      "Did you mean 'topics.include' for 'topic.include', 'groups.include' for 'group.include'?",
    );
    expect(refusal({ "Bootstrap.Servers": "s:9092" })).toContain("Did you mean 'bootstrap.servers'");
  });

  it("gives no guess for a key unlike any known one, and still lists the valid keys", () => {
    const message = refusal({ "bootstrap.servers": "s:9092", "linger.ms": "5" });
    expect(message).not.toContain("Did you mean");
    expect(message).toContain("Valid keys: bootstrap.servers,");
  });
});

describe("a mirror config value that is not a string (from JavaScript or JSON)", () => {
  it("is refused with the key and how to write it, not a TypeError", async () => {
    const env = mirrorEnv();
    const configs = { ...MIRROR_CONFIG, "mirror.num.replica.fetchers": 2 } as unknown as Record<
      string,
      string
    >;
    const error = await rejection(env.admin.createMirror("m", configs));
    expect(error).toBeInstanceOf(InvalidMirrorConfigError);
    expect(error).toMatchObject({ config: "mirror.num.replica.fetchers", retriable: false });
    expect(error.message).toBe(
      "Mirror config 'mirror.num.replica.fetchers' must be a string, got number 2; write it as a string (\"2\").",
    );
    const nulled = { ...MIRROR_CONFIG, "topics.exclude": null } as unknown as Record<string, string>;
    expect((await rejection(env.admin.createMirror("m", nulled))).message).toBe(
      "Mirror config 'topics.exclude' must be a string, got null; write it as a string.",
    );
    expect(env.admin.listMirrors()).toEqual([]);
  });

  it("a name or configs of the wrong type are typed errors too", async () => {
    const env = mirrorEnv();
    const loose = env.admin as unknown as { createMirror(...args: unknown[]): Promise<unknown> };
    expect((await rejection(loose.createMirror(42, MIRROR_CONFIG))).message).toBe(
      "Mirror name '42' is invalid: it must be a string, got number.",
    );
    expect((await rejection(loose.createMirror(undefined, MIRROR_CONFIG))).errorName).toBe(
      "INVALID_MIRROR_NAME",
    );
    const noConfigs = await rejection(loose.createMirror("m"));
    expect(noConfigs).toBeInstanceOf(InvalidMirrorConfigError);
    expect(noConfigs.message).toBe(
      'A mirror\'s configs are an object of string values, e.g. { "bootstrap.servers": "source:9092" }; got undefined.',
    );
    expect(env.admin.listMirrors()).toEqual([]);
  });
});

describe("an invalid --topic regex", () => {
  function refusal(compile: () => unknown): string {
    try {
      compile();
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidMirrorConfigError);
      return (error as Error).message;
    }
    throw new Error("expected a refusal");
  }

  it("says --topic is one regex (not a comma list) and that '*' is not a glob", () => {
    expect(refusal(() => topicPattern("*"))).toBe(
      "Invalid regular expression '*' in --topic: Nothing to repeat. Fix the pattern (one regex matching whole topic names, e.g. 'orders|payments' for two topics, '.*' for all). It is a regex, not a glob: '.*' matches any name.",
    );
    const group = refusal(() => topicPattern("orders("));
    expect(group).toBe(
      "Invalid regular expression 'orders(' in --topic: Unterminated group. Fix the pattern (one regex matching whole topic names, e.g. 'orders|payments' for two topics, '.*' for all).",
    );
  });

  it("a config's pattern still says lists are comma-separated", () => {
    expect(refusal(() => compilePattern("topics.include", "bad("))).toBe(
      "Invalid regular expression 'bad(' in topics.include: Unterminated group. Fix the pattern (lists are comma-separated; each entry must match whole names).",
    );
  });
});

describe("a repetition {n,m} in a comma-separated pattern list", () => {
  it("is refused when given, saying the comma cut it, instead of matching names with literal braces", () => {
    const config = { "bootstrap.servers": "source:9092", "topics.include": "orders, log{1,3}x" };
    let error: unknown;
    try {
      checkMirrorConfigKeys(config);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InvalidMirrorConfigError);
    expect((error as InvalidMirrorConfigError).config).toBe("topics.include");
    expect((error as Error).message).toBe(
      "topics.include is a comma-separated list, so 'log{1,3}x' was cut at its comma into 'log{1' and '3}x'. A repetition with a comma ({n,m}) cannot be written in it: spell the alternatives out with '|' (e.g. 'ab{1,2}' as 'ab|abb'), or use '+' or '*'.",
    );
    expect(() => checkMirrorConfigKeys({ "groups.exclude": "g{2,}" })).toThrow(
      /groups.exclude is a comma-separated/,
    );
    // A repetition without a comma, and braces the list did not cut, are patterns like any other.
    expect(() => checkMirrorConfigKeys({ ...config, "topics.include": "log{2}x,a{1},2" })).not.toThrow();
    // A mirror stored so by an earlier version is loaded as it is: it keeps running as it did.
    expect(parseMirrorConfig("m", config).topicsInclude).toEqual(["orders", "log{1", "3}x"]);
  });

  it("is refused by an alteration that sets it, changing nothing", async () => {
    const env = mirrorEnv();
    await env.admin.createMirror("m1", MIRROR_CONFIG);
    await expect(
      env.admin.alterMirrorConfig("m1", { set: { "topics.exclude": "tmp{1,2}" } }),
    ).rejects.toThrow(/topics.exclude is a comma-separated list, so 'tmp\{1,2\}' was cut/);
    expect(env.destination.controller.image.mirrors.get("m1")!["topics.exclude"]).toBeUndefined();
  });
});

describe("exactTopicPattern", () => {
  it("matches exactly the names given: dots and other regex characters are taken literally", () => {
    const names = ["orders.v1", "a+b", "x(1)"];
    const pattern = topicPattern(exactTopicPattern(names));
    for (const n of names) expect(pattern.test(n)).toBe(true);
    for (const n of ["ordersXv1", "aab", "x1", "orders.v1x", "a+b|x(1)"]) expect(pattern.test(n)).toBe(false);
  });
});
