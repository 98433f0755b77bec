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
  /** Largest allowed number. */
  max?: number;
  /** A value allowed besides the range (Kafka's compression levels: -1, the codec's default). */
  alsoAllowed?: number;
  /** Why a `true` value is refused here (a feature this cluster does not have). */
  trueRefused?: string;
  /** The form a string config's value must have, and how to say it. */
  pattern?: { regex: RegExp; hint: string };
}

/**
 * Topic-level configs this cluster knows: Kafka 3.9's (LogConfig), with its defaults and validators. Anything
 * else is refused with INVALID_CONFIG, as Kafka does. `mirror.name` and
 * `mirror.replication.throttled.replicas` come from KIP-1279. Some are stored and described but change
 * nothing here, as the log has no such feature: `segment.jitter.ms`, `segment.index.bytes`,
 * `index.interval.bytes` (the index takes Kafka's default interval), `preallocate`, the compression levels
 * (batches are stored as produced), `message.downconversion.enable`, `message.format.version` and
 * `max.compaction.lag.ms`; tiered storage is refused (`remote.storage.enable=true`).
 */
export const TOPIC_CONFIGS: Readonly<Record<string, ConfigDef>> = {
  "cleanup.policy": { kind: "list", defaultValue: "delete", allowed: ["delete", "compact"] },
  "compression.type": {
    kind: "string",
    defaultValue: "producer",
    allowed: ["producer", "uncompressed", "gzip", "snappy", "lz4", "zstd"],
  },
  "compression.gzip.level": { kind: "int", defaultValue: "-1", min: 1, max: 9, alsoAllowed: -1 },
  "compression.lz4.level": { kind: "int", defaultValue: "9", min: 1, max: 17 },
  "compression.zstd.level": { kind: "int", defaultValue: "3", min: -131072, max: 22 },
  "delete.retention.ms": { kind: "long", defaultValue: "86400000", min: 0 },
  "file.delete.delay.ms": { kind: "long", defaultValue: "60000", min: 0 },
  "flush.messages": { kind: "long", defaultValue: "9223372036854775807", min: 1 },
  "flush.ms": { kind: "long", defaultValue: "9223372036854775807", min: 0 },
  "max.compaction.lag.ms": { kind: "long", defaultValue: "9223372036854775807", min: 1 },
  "index.interval.bytes": { kind: "int", defaultValue: "4096", min: 0 },
  "local.retention.bytes": { kind: "long", defaultValue: "-2", min: -2 },
  "local.retention.ms": { kind: "long", defaultValue: "-2", min: -2 },
  "max.message.bytes": { kind: "int", defaultValue: "1048588", min: 0 },
  "message.downconversion.enable": { kind: "boolean", defaultValue: "true" },
  "message.format.version": {
    kind: "string",
    defaultValue: "3.0-IV1",
    pattern: { regex: /^\d+\.\d+(\.\d+)?(-IV\d+)?$/, hint: "a Kafka version such as 3.0 or 3.0-IV1" },
  },
  "message.timestamp.difference.max.ms": { kind: "long", defaultValue: "9223372036854775807", min: 0 },
  "message.timestamp.type": {
    kind: "string",
    defaultValue: "CreateTime",
    allowed: ["CreateTime", "LogAppendTime"],
  },
  "message.timestamp.before.max.ms": { kind: "long", defaultValue: "9223372036854775807", min: 0 },
  "message.timestamp.after.max.ms": { kind: "long", defaultValue: "9223372036854775807", min: 0 },
  "min.cleanable.dirty.ratio": { kind: "double", defaultValue: "0.5", min: 0, max: 1 },
  "min.compaction.lag.ms": { kind: "long", defaultValue: "0", min: 0 },
  "min.insync.replicas": { kind: "int", defaultValue: "1", min: 1 },
  preallocate: { kind: "boolean", defaultValue: "false" },
  "remote.log.copy.disable": { kind: "boolean", defaultValue: "false" },
  "remote.log.delete.on.disable": { kind: "boolean", defaultValue: "false" },
  "remote.storage.enable": {
    kind: "boolean",
    defaultValue: "false",
    trueRefused:
      "tiered storage is not available on this cluster (Kafka refuses it too while remote.log.storage.system.enable is off); leave remote.storage.enable false or exclude it from the mirror (topic.properties.exclude)",
  },
  "retention.bytes": { kind: "long", defaultValue: "-1" },
  "retention.ms": { kind: "long", defaultValue: "604800000", min: -1 },
  "segment.bytes": { kind: "int", defaultValue: "1073741824", min: 14 },
  "segment.index.bytes": { kind: "int", defaultValue: "10485760", min: 4 },
  "segment.jitter.ms": { kind: "long", defaultValue: "0", min: 0 },
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
  const parsed = parseTopicConfig(name, def, value);
  return typeof parsed === "string" ? parsed : undefined;
}

/**
 * A valid topic config's value as Kafka describes it (ConfigDef.convertToString of the parsed value): `+5`
 * and ` 5 ` are `5`, `TRUE` is `true`, `1` for a double is `1.0`, ` compact , delete ` is `compact,delete`.
 * Kafka parses leniently (ConfigDef.parseType) and describes the parsed value; this cluster stores that form,
 * so a value set either way reads back as Kafka would show it. Throws on an invalid value.
 */
export function canonicalTopicConfigValue(name: string, value: string): string {
  const def = topicConfigDef(name);
  const parsed = def === undefined ? validateTopicConfig(name, value) : parseTopicConfig(name, def, value);
  if (typeof parsed === "string" || parsed === undefined)
    throw new Error(parsed ?? `invalid config '${name}'`);
  return parsed.canonical;
}

/**
 * The form a topic config is kept in once its Config record is applied: `canonicalTopicConfigValue` when
 * the value is valid, the record's value as it is otherwise. Records written before values were stored
 * canonical (a data dir from an earlier version: `compact, delete`, `1` for a double) then read back as
 * Kafka describes them, as new ones do: else the mirror's config sync, comparing canonical source values
 * with them, and `verify`, comparing them with a source's, saw differences that are none. A value today's
 * checks refuse (accepted by an earlier version) is kept unchanged.
 */
export function storedTopicConfigValue(name: string, value: string): string {
  const def = topicConfigDef(name);
  if (def === undefined) return value;
  const parsed = parseTopicConfig(name, def, value);
  return typeof parsed === "string" ? value : parsed.canonical;
}

/** Java's String.trim: drops every character up to U+0020 at both ends. */
function javaTrim(value: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && value.charCodeAt(start) <= 0x20) start++;
  while (end > start && value.charCodeAt(end - 1) <= 0x20) end--;
  return value.slice(start, end);
}

/** What Java's Long.parseLong / Integer.parseInt accept (ASCII digits). */
const JAVA_INTEGER = /^[+-]?\d+$/;
/** What Java's Double.parseDouble accepts in decimal (hexadecimal floats, NaN and Infinity are refused here). */
const JAVA_DOUBLE = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?[fFdD]?$/;

/** A message saying what is wrong, or the value's canonical form (as Kafka describes it). */
function parseTopicConfig(name: string, def: ConfigDef, value: string): string | { canonical: string } {
  const trimmed = javaTrim(value);
  switch (def.kind) {
    case "long":
    case "int": {
      if (!JAVA_INTEGER.test(trimmed)) return `config '${name}' must be an integer, got '${value}'`;
      const n = BigInt(trimmed);
      const [lo, hi] = def.kind === "int" ? [-(2n ** 31n), 2n ** 31n - 1n] : [-(2n ** 63n), 2n ** 63n - 1n];
      if (n < lo || n > hi) {
        return `config '${name}' must fit in a ${def.kind === "int" ? 32 : 64}-bit integer, got '${value}'`;
      }
      if (def.alsoAllowed !== undefined && n === BigInt(def.alsoAllowed)) return { canonical: n.toString() };
      const range = rangeProblem(name, def, Number(n), value);
      return range ?? { canonical: n.toString() };
    }
    case "double": {
      if (!JAVA_DOUBLE.test(trimmed)) return `config '${name}' must be a number, got '${value}'`;
      const n = Number(trimmed.replace(/[fFdD]$/, ""));
      if (!Number.isFinite(n)) return `config '${name}' must be a finite number, got '${value}'`;
      return rangeProblem(name, def, n, value) ?? { canonical: javaDoubleToString(n) };
    }
    case "boolean": {
      const lower = trimmed.toLowerCase();
      if (lower !== "true" && lower !== "false") {
        return `config '${name}' must be true or false, got '${value}'`;
      }
      if (lower === "true" && def.trueRefused) return `config '${name}' cannot be true: ${def.trueRefused}`;
      return { canonical: lower };
    }
    case "string":
      if (def.allowed && !def.allowed.includes(trimmed))
        return `config '${name}' must be one of ${def.allowed.join(", ")}, got '${value}'`;
      if (def.pattern && !def.pattern.regex.test(trimmed))
        return `config '${name}' must be ${def.pattern.hint}, got '${value}'`;
      return { canonical: trimmed };
    case "list": {
      // Kafka's ConfigDef parses a blank LIST value as the empty list, which ValidList accepts (it checks
      // each element): Kafka 3.9 takes `cleanup.policy=""`, so a source topic may hold it.
      if (trimmed === "") return { canonical: "" };
      const items = trimmed.split(/\s*,\s*/);
      const bad = def.allowed ? items.filter((v) => !def.allowed!.includes(v)) : [];
      return bad.length === 0
        ? { canonical: items.join(",") }
        : `config '${name}' takes a list of ${def.allowed!.join(", ")}; '${bad.join(",")}' is not allowed`;
    }
    case "throttledReplicas": {
      const problem = throttledReplicasProblem(name, value);
      if (problem !== undefined) return problem;
      return { canonical: trimmed === "" ? "" : trimmed.split(/\s*,\s*/).join(",") };
    }
  }
}

function rangeProblem(name: string, def: ConfigDef, n: number, value: string): string | undefined {
  const also = def.alsoAllowed === undefined ? "" : ` (or ${def.alsoAllowed})`;
  if (def.min !== undefined && def.max !== undefined && (n < def.min || n > def.max))
    return `config '${name}' must be between ${def.min} and ${def.max}${also}, got ${value}`;
  if (def.min !== undefined && n < def.min)
    return `config '${name}' must be at least ${def.min}${also}, got ${value}`;
  if (def.max !== undefined && n > def.max)
    return `config '${name}' must be at most ${def.max}${also}, got ${value}`;
  return undefined;
}

/** Java's Double.toString for a finite double: `1.0`, `0.5`, `1.0E7`, `1.0E-4`. */
function javaDoubleToString(n: number): string {
  const abs = Math.abs(n);
  if (abs === 0) return Object.is(n, -0) ? "-0.0" : "0.0";
  if (abs >= 1e-3 && abs < 1e7) {
    const plain = String(n);
    return plain.includes(".") ? plain : `${plain}.0`;
  }
  const [mantissa, exponent] = n.toExponential().split("e") as [string, string];
  return `${mantissa.includes(".") ? mantissa : `${mantissa}.0`}E${exponent.replace("+", "")}`;
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
 * because the fetchers could only read anything else as "no throttle"; `unclean.leader.election.enable` must be
 * true or false (case aside), as Kafka checks it, because the controller reads it as the topics' default.
 */
export function validateBrokerConfig(name: string, value: string): string | undefined {
  if (name === "unclean.leader.election.enable" && !/^\s*(true|false)\s*$/i.test(value)) {
    return `config '${name}' must be true or false, got '${value}'`;
  }
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
