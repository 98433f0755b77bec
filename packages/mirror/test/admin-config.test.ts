import { describe, expect, it } from "vitest";
import { InvalidMirrorConfigError, InvalidMirrorNameError } from "../src/admin/errors";
import {
  checkMirrorConfigKeys,
  isExcludedTopicConfig,
  parseMirrorConfig,
  validateMirrorName,
} from "../src/admin/mirror-config";
import { parseProperties } from "../src/admin/properties";

describe("mirror names", () => {
  it("accepts Kafka-like names", () => {
    for (const name of ["m", "my-mirror", "a.b_c-1", "x".repeat(249)])
      expect(() => validateMirrorName(name)).not.toThrow();
  });

  it.each([
    ["", "must not be empty"],
    ["x".repeat(250), "at most 249"],
    ["..", "reserved"],
    ["my mirror", "' '"],
    ["a/b", "'/'"],
    ["m.paused", "'.paused'"],
    ["m.removed", "'.removed'"],
  ])("refuses %j with INVALID_MIRROR_NAME", (name, why) => {
    const error = (() => {
      try {
        validateMirrorName(name);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(InvalidMirrorNameError);
    expect((error as InvalidMirrorNameError).errorName).toBe("INVALID_MIRROR_NAME");
    expect((error as InvalidMirrorNameError).code).toBe(-1);
    expect((error as Error).message).toContain(why);
  });
});

describe("mirror configs", () => {
  it("fills in defaults", () => {
    const def = parseMirrorConfig("m", { "bootstrap.servers": "s:9092" });
    expect(def).toMatchObject({
      bootstrapServers: "s:9092",
      topicsInclude: [],
      topicsExclude: ["__.*"],
      groupsInclude: [".*"],
      groupsExclude: [],
      aclsSyncEnable: true,
      configsSyncEnable: true,
      logStartOffsetSyncEnable: false,
      numReplicaFetchers: 1,
      metadataRefreshIntervalMs: 30_000,
      defaultReplicationFactor: undefined,
      sourceClusterId: undefined,
    });
  });

  it("requires bootstrap.servers", () => {
    expect(() => parseMirrorConfig("m", {})).toThrow(/needs bootstrap.servers/);
  });

  it("names the bad regex and its syntax error (INVALID_CONFIG)", () => {
    let error: unknown;
    try {
      parseMirrorConfig("m", { "bootstrap.servers": "s", "topics.include": "ok.*, bad(" });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InvalidMirrorConfigError);
    const e = error as InvalidMirrorConfigError;
    expect(e.errorName).toBe("INVALID_CONFIG");
    expect(e.code).toBe(40);
    expect(e.config).toBe("topics.include");
    expect(e.pattern).toBe("bad(");
    expect(e.message).toMatch(/^Invalid regular expression 'bad\(' in topics.include: .*Unterminated group/);
  });

  it("refuses bad numbers and booleans", () => {
    const base = { "bootstrap.servers": "s" };
    expect(() => parseMirrorConfig("m", { ...base, "mirror.metadata.refresh.interval.ms": "0" })).toThrow(
      /must be an integer from 1 to 2147483647, got '0'/,
    );
    // Longer than a timer waits: it would fire every millisecond (a sync loop), so it is refused.
    expect(() =>
      parseMirrorConfig("m", { ...base, "mirror.metadata.refresh.interval.ms": "2147483648" }),
    ).toThrow(
      /mirror.metadata.refresh.interval.ms must be an integer from 1 to 2147483647, got '2147483648'/,
    );
    expect(
      parseMirrorConfig("m", { ...base, "mirror.metadata.refresh.interval.ms": "2147483647" })
        .metadataRefreshIntervalMs,
    ).toBe(2147483647);
    expect(() => parseMirrorConfig("m", { ...base, "acls.sync.enable": "yes" })).toThrow(/true or false/);
    expect(() => parseMirrorConfig("m", { ...base, "log.start.offset.sync.enable": "no" })).toThrow(
      /log.start.offset.sync.enable .*true or false/,
    );
    // A misspelt security protocol gets the one meant.
    expect(() => checkMirrorConfigKeys({ ...base, "security.protocol": "sasl_plaintxt" })).toThrow(
      /security.protocol=sasl_plaintxt is not supported: .* Did you mean SASL_PLAINTEXT\? Supported: .*Fix the mirror config/,
    );
    expect(() => parseMirrorConfig("m", { ...base, "default.replication.factor": "x" })).toThrow(
      /default.replication.factor/,
    );
  });

  it("excludes mirror.name, throttles, min.insync.replicas, timestamps and unclean election from sync", () => {
    for (const name of [
      "mirror.name",
      "leader.replication.throttled.replicas",
      "follower.replication.throttled.replicas",
      "mirror.replication.throttled.replicas",
      "min.insync.replicas",
      "message.timestamp.type",
      "message.timestamp.after.max.ms",
      "unclean.leader.election.enable",
    ]) {
      expect(isExcludedTopicConfig(name), name).toBe(true);
    }
    expect(isExcludedTopicConfig("retention.ms")).toBe(false);
    expect(isExcludedTopicConfig("retention.ms", ["retention.ms"])).toBe(true);
  });
});

describe("parseProperties", () => {
  it("reads Java properties: separators, comments, continuations, escapes", () => {
    const text = [
      "# a comment",
      "! another",
      "",
      "bootstrap.servers=source:9092",
      "  topics.include = orders.*, \\",
      "      payments",
      "groups.include: app-.*",
      "security.protocol PLAINTEXT",
      "sasl.jaas.config=a\\=b\\tc\\u0041",
      "empty=",
      "bootstrap.servers=override:9092",
    ].join("\r\n");
    expect(parseProperties(text)).toEqual({
      "bootstrap.servers": "override:9092",
      "topics.include": "orders.*, payments",
      "groups.include": "app-.*",
      "security.protocol": "PLAINTEXT",
      "sasl.jaas.config": "a=b\tcA",
      empty: "",
    });
  });

  it("gives a key alone on its line the empty value, and tells onBareKey which line it was on", () => {
    const bare: [string, number][] = [];
    const text = "a=1\ntopics.include   \nb:\nc \\\n  d\ne = \nx\\=y\nk\\ \nv \u00a0";
    const parsed = parseProperties(text, { onBareKey: (key, line) => bare.push([key, line]) });
    expect(parsed).toEqual({
      a: "1",
      "topics.include": "",
      b: "",
      c: "d",
      e: "",
      "x=y": "",
      "k ": "",
      v: "\u00a0",
    });
    expect(bare).toEqual([
      ["topics.include", 2],
      ["x=y", 7],
      ["k ", 8],
    ]);
  });

  it("keeps an escaped trailing backslash and does not continue comments", () => {
    expect(parseProperties("path=c:\\\\\n# c \\\nnext=1")).toEqual({ path: "c:\\", next: "1" });
  });
});
