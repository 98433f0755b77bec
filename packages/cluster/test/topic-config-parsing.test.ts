import { describe, expect, it } from "vitest";
import { ClusterError, Controller, SeededRandom } from "../src/index";
import { canonicalTopicConfigValue, validateTopicConfig } from "../src/topic-configs";

function controller(): Controller {
  const c = new Controller({ random: new SeededRandom(1) });
  for (const id of [0, 1]) c.registerBroker(id);
  return c;
}

/** The value a topic created with `name=value` holds (as DescribeConfigs shows it). */
function stored(name: string, value: string): string | undefined {
  const c = controller();
  c.createTopic({ name: "t", configs: { [name]: value } });
  return c.image.topic("t")?.configs.get(name);
}

function refusal(name: string, value: string): string {
  try {
    controller().createTopic({ name: "t", configs: { [name]: value } });
  } catch (error) {
    if (error instanceof ClusterError && error.errorName === "INVALID_CONFIG") return error.message;
    throw error;
  }
  throw new Error(`${name}=${JSON.stringify(value)} was accepted`);
}

/**
 * Kafka parses a config value leniently (ConfigDef.parseType: the value trimmed, then Long.parseLong,
 * Double.parseDouble, a case-blind boolean) and describes the parsed value (ConfigHelper:
 * ConfigDef.convertToString). This cluster accepts the same values and stores that form.
 */
describe("topic config values parsed as Kafka's ConfigDef parses them", () => {
  it.each([
    ["retention.ms", "+5", "5"],
    ["retention.ms", " 600000 ", "600000"],
    ["retention.ms", "007", "7"],
    ["retention.bytes", "-1", "-1"],
    ["segment.bytes", "\t1048576\n", "1048576"],
    ["unclean.leader.election.enable", "TRUE", "true"],
    ["unclean.leader.election.enable", " False ", "false"],
    ["min.cleanable.dirty.ratio", "0.5d", "0.5"],
    ["min.cleanable.dirty.ratio", "1", "1.0"],
    ["min.cleanable.dirty.ratio", "1e-1", "0.1"],
    ["min.cleanable.dirty.ratio", ".25F", "0.25"],
    ["min.cleanable.dirty.ratio", "0.0001", "1.0E-4"],
    ["compression.type", " gzip ", "gzip"],
    ["message.timestamp.type", "LogAppendTime ", "LogAppendTime"],
    ["cleanup.policy", " compact , delete ", "compact,delete"],
    ["cleanup.policy", " ", ""],
  ])("%s=%j is stored as %j", (name, value, described) => {
    expect(stored(name, value)).toBe(described);
    expect(canonicalTopicConfigValue(name, value)).toBe(described);
  });

  it("an alter stores the parsed form too, so setting the same value another way changes nothing", () => {
    const c = controller();
    c.createTopic({ name: "t", configs: { "retention.ms": "+5" } });
    c.incrementalAlterConfigs({ type: "topic", name: "t" }, [
      { name: "retention.ms", op: "SET", value: " 5" },
    ]);
    expect(c.image.topic("t")?.configs.get("retention.ms")).toBe("5");
    c.incrementalAlterConfigs({ type: "topic", name: "t" }, [
      { name: "cleanup.policy", op: "APPEND", value: " compact" },
    ]);
    expect(c.image.topic("t")?.configs.get("cleanup.policy")).toBe("delete,compact");
    c.incrementalAlterConfigs({ type: "topic", name: "t" }, [
      { name: "cleanup.policy", op: "SUBTRACT", value: "delete " },
    ]);
    expect(c.image.topic("t")?.configs.get("cleanup.policy")).toBe("compact");
  });

  it("a value set in another case takes effect: TRUE enables unclean leader election", () => {
    const c = controller();
    c.createTopic({
      name: "t",
      replicaAssignment: [[0, 1]],
      configs: { "unclean.leader.election.enable": "TRUE" },
    });
    const leader = c.image.partition("t", 0)!.leader;
    const other = leader === 0 ? 1 : 0;
    // The other replica leaves the ISR, then the leader goes: only an unclean election brings it back.
    c.alterPartition("t", 0, { leader, leaderEpoch: c.image.partition("t", 0)!.leaderEpoch, isr: [leader] });
    c.fenceBroker(leader);
    expect(c.image.partition("t", 0)!.leader).toBe(other);
  });

  it.each([
    ["retention.ms", "5ms", "must be an integer"],
    ["retention.ms", "1.5", "must be an integer"],
    ["retention.ms", "9223372036854775808", "must fit in a 64-bit integer"],
    ["segment.bytes", "2147483648", "must fit in a 32-bit integer"],
    ["retention.ms", "-2", "must be at least -1"],
    ["min.cleanable.dirty.ratio", "1.5", "must be between 0 and 1"],
    ["min.cleanable.dirty.ratio", "NaN", "must be a number"],
    ["min.cleanable.dirty.ratio", "0.5x", "must be a number"],
    ["unclean.leader.election.enable", "yes", "must be true or false"],
    ["compression.type", "brotli", "must be one of"],
    ["cleanup.policy", "compact,", "'' is not allowed"],
  ])("%s=%j is refused: %s", (name, value, problem) => {
    expect(refusal(name, value)).toContain(problem);
    expect(validateTopicConfig(name, value)).toContain(problem);
  });
});

/** Kafka 3.9's topic configs beyond those the log acts on: a real source topic may set any of them. */
describe("Kafka 3.9's other topic configs", () => {
  it.each([
    ["segment.jitter.ms", "1000"],
    ["segment.index.bytes", "4096"],
    ["index.interval.bytes", "8192"],
    ["preallocate", "true"],
    ["compression.gzip.level", "-1"],
    ["compression.gzip.level", "9"],
    ["compression.lz4.level", "17"],
    ["compression.zstd.level", "-131072"],
    ["message.downconversion.enable", "false"],
    ["message.format.version", "3.0-IV1"],
    ["local.retention.ms", "-2"],
    ["remote.storage.enable", "false"],
  ])("%s=%s is accepted and described", (name, value) => {
    expect(stored(name, value)).toBe(value);
  });

  it.each([
    ["compression.gzip.level", "0", "must be between 1 and 9 (or -1)"],
    ["compression.gzip.level", "10", "must be between 1 and 9 (or -1)"],
    ["compression.lz4.level", "-1", "must be between 1 and 17"],
    ["compression.zstd.level", "23", "must be between -131072 and 22"],
    ["segment.index.bytes", "3", "must be at least 4"],
    ["message.format.version", "banana", "must be a Kafka version"],
    ["remote.storage.enable", "true", "tiered storage is not available on this cluster"],
  ])("%s=%j is refused: %s", (name, value, problem) => {
    expect(refusal(name, value)).toContain(problem);
  });
});

describe("topic config values stored before they were stored canonical", () => {
  it("a metadata log written before (compact, delete; 1 for a double; 007) reads back as Kafka describes it", () => {
    // Records an earlier version decided and persisted: it stored values as given, and its checks took
    // `compact, delete` (each item trimmed), `1` for a double and `007`; min.cleanable.dirty.ratio=2
    // (no upper bound then) is refused now.
    const c = new Controller({ random: new SeededRandom(1) });
    const topic = (name: string, topicId: string, configs: Record<string, string>) => [
      { type: "Topic" as const, name, topicId },
      ...Object.entries(configs).map(([config, value]) => ({
        type: "Config" as const,
        resourceType: "topic" as const,
        resourceName: name,
        name: config,
        value,
      })),
    ];
    c.replay([
      ...topic("old", "0f2a6d9e-8b1c-4e5f-9a3b-7c6d5e4f3a2b", {
        "cleanup.policy": "compact, delete",
        "min.cleanable.dirty.ratio": "1",
        "retention.ms": "007",
      }),
      ...topic("beyond", "1e3b7c0f-9d2e-4f6a-8b4c-6d5e4f3a2b1c", { "min.cleanable.dirty.ratio": "2" }),
    ]);
    const configs = c.image.topic("old")?.configs;
    expect(Object.fromEntries(configs ?? [])).toEqual({
      "cleanup.policy": "compact,delete",
      "min.cleanable.dirty.ratio": "1.0",
      "retention.ms": "7",
    });
    // Kept as it was: no form today's checks accept.
    expect(c.image.topic("beyond")?.configs.get("min.cleanable.dirty.ratio")).toBe("2");
    // Setting the value Kafka describes (what the mirror's config sync sets) is no change: no record.
    const before = c.image.offset;
    c.incrementalAlterConfigs({ type: "topic", name: "old" }, [
      { name: "cleanup.policy", op: "SET", value: "compact,delete" },
      { name: "min.cleanable.dirty.ratio", op: "SET", value: "1.0" },
    ]);
    expect(c.image.offset).toBe(before);
  });
});
