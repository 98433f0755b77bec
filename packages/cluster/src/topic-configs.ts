import { closestName } from "./closest-name";

/**
 * How a dynamic config's value is checked. `throttledReplicas` is Kafka's ThrottledReplicaListValidator:
 * `*`, or a comma-separated list of `partition:brokerId` (empty entries allowed, so `""` clears it).
 */
type ConfigKind = "long" | "int" | "boolean" | "string" | "list" | "double" | "throttledReplicas";

interface ConfigDef {
  kind: ConfigKind;
  defaultValue: string | null;
  /** Allowed values for a string or list config. */
  allowed?: readonly string[];
  /** Smallest allowed number. */
  min?: number;
}

/**
 * Topic-level configs this cluster knows, with Kafka's defaults. Anything else is refused with
 * INVALID_CONFIG, as Kafka does. `mirror.name` and `mirror.replication.throttled.replicas` come from KIP-1279.
 */
export const TOPIC_CONFIGS: Readonly<Record<string, ConfigDef>> = {
  "cleanup.policy": { kind: "list", defaultValue: "delete", allowed: ["delete", "compact"] },
  "compression.type": {
    kind: "string",
    defaultValue: "producer",
    allowed: ["producer", "uncompressed", "gzip", "snappy", "lz4", "zstd"],
  },
  "delete.retention.ms": { kind: "long", defaultValue: "86400000", min: 0 },
  "file.delete.delay.ms": { kind: "long", defaultValue: "60000", min: 0 },
  "flush.messages": { kind: "long", defaultValue: "9223372036854775807", min: 1 },
  "flush.ms": { kind: "long", defaultValue: "9223372036854775807", min: 0 },
  "max.compaction.lag.ms": { kind: "long", defaultValue: "9223372036854775807", min: 1 },
  "max.message.bytes": { kind: "int", defaultValue: "1048588", min: 0 },
  "message.timestamp.type": {
    kind: "string",
    defaultValue: "CreateTime",
    allowed: ["CreateTime", "LogAppendTime"],
  },
  "message.timestamp.before.max.ms": { kind: "long", defaultValue: "9223372036854775807", min: 0 },
  "message.timestamp.after.max.ms": { kind: "long", defaultValue: "9223372036854775807", min: 0 },
  "min.cleanable.dirty.ratio": { kind: "double", defaultValue: "0.5", min: 0 },
  "min.compaction.lag.ms": { kind: "long", defaultValue: "0", min: 0 },
  "min.insync.replicas": { kind: "int", defaultValue: "1", min: 1 },
  "retention.bytes": { kind: "long", defaultValue: "-1" },
  "retention.ms": { kind: "long", defaultValue: "604800000", min: -1 },
  "segment.bytes": { kind: "int", defaultValue: "1073741824", min: 14 },
  "segment.ms": { kind: "long", defaultValue: "604800000", min: 1 },
  "unclean.leader.election.enable": { kind: "boolean", defaultValue: "false" },
  "leader.replication.throttled.replicas": { kind: "throttledReplicas", defaultValue: "" },
  "follower.replication.throttled.replicas": { kind: "throttledReplicas", defaultValue: "" },
  "mirror.name": { kind: "string", defaultValue: null },
  "mirror.replication.throttled.replicas": { kind: "throttledReplicas", defaultValue: "" },
};

/**
 * The definition of a topic config this cluster knows, or undefined: own keys only, so a name such as
 * `toString` or `constructor` (inherited by every object) is unknown, as Kafka calls it.
 */
export function topicConfigDef(name: string): (typeof TOPIC_CONFIGS)[string] | undefined {
  return Object.hasOwn(TOPIC_CONFIGS, name) ? TOPIC_CONFIGS[name] : undefined;
}

/**
 * Checks one topic config; returns a message saying what is wrong, or undefined when the value is valid.
 */
export function validateTopicConfig(name: string, value: string): string | undefined {
  const def = topicConfigDef(name);
  if (!def) {
    const known = Object.keys(TOPIC_CONFIGS);
    const close = closestName(name, known);
    const hint = close === undefined ? "." : `; did you mean '${close}'?`;
    return `unknown topic config '${name}'${hint} Known configs are: ${known.join(", ")}`;
  }
  switch (def.kind) {
    case "long":
    case "int": {
      if (!/^-?\d+$/.test(value)) return `config '${name}' must be an integer, got '${value}'`;
      const n = Number(value);
      if (def.kind === "int" && (n > 2147483647 || n < -2147483648))
        return `config '${name}' must fit in a 32-bit integer, got '${value}'`;
      if (def.min !== undefined && n < def.min)
        return `config '${name}' must be at least ${def.min}, got ${value}`;
      return undefined;
    }
    case "double": {
      const n = Number(value);
      if (value.trim() === "" || Number.isNaN(n)) return `config '${name}' must be a number, got '${value}'`;
      if (def.min !== undefined && n < def.min)
        return `config '${name}' must be at least ${def.min}, got ${value}`;
      return undefined;
    }
    case "boolean":
      return value === "true" || value === "false"
        ? undefined
        : `config '${name}' must be true or false, got '${value}'`;
    case "string":
      if (def.allowed && !def.allowed.includes(value))
        return `config '${name}' must be one of ${def.allowed.join(", ")}, got '${value}'`;
      return undefined;
    case "list": {
      // Kafka's ConfigDef parses a blank LIST value as the empty list, which ValidList accepts (it checks
      // each element): Kafka 3.9 takes `cleanup.policy=""`, so a source topic may hold it.
      if (!def.allowed || value.trim() === "") return undefined;
      const bad = value.split(",").filter((v) => !def.allowed!.includes(v.trim()));
      return bad.length === 0
        ? undefined
        : `config '${name}' takes a list of ${def.allowed.join(", ")}; '${bad.join(",")}' is not allowed`;
    }
    case "throttledReplicas":
      return throttledReplicasProblem(name, value);
  }
}

const THROTTLED_REPLICA = /^\d+:\d+$/;

/**
 * Kafka's ThrottledReplicaListValidator: the literal `*`, or a comma-separated list whose entries (trimmed) are
 * `partition:brokerId` or empty. Anything else would be stored and then throttle nothing.
 */
function throttledReplicasProblem(name: string, value: string): string | undefined {
  if (value.trim() === "*") return undefined;
  const bad = value
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "" && !THROTTLED_REPLICA.test(entry));
  if (bad.length === 0) return undefined;
  return `config '${name}' must be '*' (every replica) or a comma-separated list of partition:brokerId pairs such as '0:1,3:2' (or empty for none), got '${value}': ${bad.map((b) => `'${b}'`).join(", ")} ${bad.length === 1 ? "is" : "are"} not partition:brokerId`;
}

/** Broker-level dynamic config: bytes/s a destination broker may mirror for its throttled partitions (KIP-1279). */
export const MIRROR_REPLICATION_THROTTLED_RATE_CONFIG = "mirror.replication.throttled.rate";

const LONG_MAX = 9223372036854775807n;

/**
 * Checks one dynamic broker config (of one broker, or the cluster default); returns a message saying what is
 * wrong, or undefined when the value is valid. Broker configs this cluster does not know are stored as they
 * are; the mirror's throttle rate must be a whole number of bytes per second, at least 1 and without units,
 * because the fetchers could only read anything else as "no throttle".
 */
export function validateBrokerConfig(name: string, value: string): string | undefined {
  if (name !== MIRROR_REPLICATION_THROTTLED_RATE_CONFIG) return undefined;
  const accepted = `a whole number of bytes per second from 1 to ${LONG_MAX}, without units (e.g. 10485760 for 10 MiB/s); delete the config to remove the throttle`;
  if (!/^\d+$/.test(value)) return `config '${name}' must be ${accepted}, got '${value}'`;
  const rate = BigInt(value);
  if (rate === 0n) {
    return `config '${name}' cannot be 0: a rate of 0 would stop mirroring altogether; use kafka-mirrors --pause to stop mirroring, or delete the config to remove the throttle (it takes a whole number of bytes per second, at least 1)`;
  }
  if (rate > LONG_MAX) return `config '${name}' must be ${accepted}, got '${value}'`;
  return undefined;
}

/** The effective value of a topic config: the dynamic value, else Kafka's default. */
export function topicConfigValue(configs: ReadonlyMap<string, string>, name: string): string | undefined {
  return configs.get(name) ?? topicConfigDef(name)?.defaultValue ?? undefined;
}

/**
 * Topic configs the mirroring engine owns: `mirror.name` says which mirror a topic belongs to and, with its
 * `.paused` / `.removed` suffix, what the mirror does with it (a user setting it would make a fake mirror
 * topic; deleting it would make a mirrored topic writable behind the mirror's back). Client requests
 * (CreateTopics, AlterConfigs) may not set or delete them; the engine writes them through the controller.
 */
export const RESERVED_TOPIC_CONFIGS: readonly string[] = ["mirror.name"];

/** The message refusing a client's change of a reserved config, or undefined when `name` is not reserved. */
export function reservedTopicConfigProblem(name: string): string | undefined {
  if (!RESERVED_TOPIC_CONFIGS.includes(name)) return undefined;
  return `topic config '${name}' is reserved for cluster mirroring and cannot be set or deleted by a client; use kafka-mirrors --add/--pause/--resume/--remove to change a topic's mirror`;
}
