import { closestName } from "@cluster-mirror/cluster";
import { type AclIncludeRule, parseAclsInclude } from "../metadata/acl-sync";
import { InvalidMirrorConfigError, InvalidMirrorNameError } from "./errors";

/** Longest mirror name, as for topics (Kafka's 249). */
export const MAX_MIRROR_NAME_LENGTH = 249;

/** Suffixes of a topic's `mirror.name` that ask for a pause or a removal (spec §4 triggers). */
export const PAUSED_SUFFIX = ".paused";
/** See {@link PAUSED_SUFFIX}. */
export const REMOVED_SUFFIX = ".removed";

/** Mirror-level config keys this engine reads (the rest, e.g. security settings, are passed to the source client). */
export const MIRROR_CONFIG_KEYS = {
  BOOTSTRAP_SERVERS: "bootstrap.servers",
  SOURCE_CLUSTER_ID: "source.cluster.id",
  TOPICS_INCLUDE: "topics.include",
  TOPICS_EXCLUDE: "topics.exclude",
  GROUPS_INCLUDE: "groups.include",
  GROUPS_EXCLUDE: "groups.exclude",
  ACLS_SYNC_ENABLE: "acls.sync.enable",
  ACLS_INCLUDE: "acls.include",
  CONFIGS_SYNC_ENABLE: "configs.sync.enable",
  LOG_START_OFFSET_SYNC_ENABLE: "log.start.offset.sync.enable",
  TOPIC_PROPERTIES_EXCLUDE: "topic.properties.exclude",
  NUM_REPLICA_FETCHERS: "mirror.num.replica.fetchers",
  METADATA_REFRESH_INTERVAL_MS: "mirror.metadata.refresh.interval.ms",
  DEFAULT_REPLICATION_FACTOR: "default.replication.factor",
} as const;

/** `security.protocol`, read here to refuse a value Kafka does not have. */
export const SECURITY_PROTOCOL_CONFIG = "security.protocol";
/**
 * Kafka's `security.protocol` values. Which of them a source supports is the source connector's call: an
 * embedded cluster (reached in process) takes PLAINTEXT only, the kafkajs source all four.
 */
export const SUPPORTED_SECURITY_PROTOCOLS: readonly string[] = [
  "PLAINTEXT",
  "SSL",
  "SASL_PLAINTEXT",
  "SASL_SSL",
];

/** The source client's settings a mirror may carry (passed to the source connector, e.g. kafkajs). */
export const SOURCE_CLIENT_CONFIGS: readonly string[] = [
  SECURITY_PROTOCOL_CONFIG,
  "sasl.mechanism",
  "sasl.jaas.config",
  "ssl.truststore.type",
  "ssl.truststore.location",
  "ssl.truststore.certificates",
  "ssl.truststore.password",
  "ssl.keystore.type",
  "ssl.keystore.location",
  "ssl.keystore.certificate.chain",
  "ssl.keystore.key",
  "ssl.keystore.password",
  "ssl.key.password",
  "ssl.endpoint.identification.algorithm",
];

/**
 * Settings that hold a secret (passwords, a private key): stored as given, since the source client needs
 * them, but never shown back; describing a mirror's configs gives them as null, as Kafka's DescribeConfigs
 * does for its sensitive configs (`isSensitive`).
 */
export const SENSITIVE_MIRROR_CONFIGS: ReadonlySet<string> = new Set([
  "sasl.jaas.config",
  "ssl.keystore.key",
  "ssl.keystore.password",
  "ssl.key.password",
  "ssl.truststore.password",
]);

/** Every config key a mirror may be created with: the mirror-level keys and the source client's settings. */
export const KNOWN_MIRROR_CONFIGS: readonly string[] = [
  ...Object.values(MIRROR_CONFIG_KEYS),
  ...SOURCE_CLIENT_CONFIGS,
];

/**
 * Refuses, with InvalidMirrorConfigError naming the valid keys or values, a config key this engine does not
 * read (a typo such as `topic.include` would otherwise be accepted and ignored), a `security.protocol`
 * it cannot honour, and a pattern list whose comma cut a regex repetition. Checked on the configs a creation
 * or an alteration gives; mirrors already stored are loaded as they are.
 */
export function checkMirrorConfigKeys(configs: Readonly<Record<string, string>>): void {
  if (typeof configs !== "object" || configs === null || Array.isArray(configs)) {
    throw new InvalidMirrorConfigError(
      MIRROR_CONFIG_KEYS.BOOTSTRAP_SERVERS,
      `A mirror's configs are an object of string values, e.g. { "bootstrap.servers": "source:9092" }; got ${configs === null ? "null" : Array.isArray(configs) ? "an array" : typeof configs}.`,
    );
  }
  // From JavaScript (or JSON) a value may be a number or a boolean: configs are strings, as in Kafka.
  for (const [key, value] of Object.entries(configs as Readonly<Record<string, unknown>>)) {
    if (typeof value !== "string")
      throw new InvalidMirrorConfigError(
        key,
        `Mirror config '${key}' must be a string, got ${value === null ? "null" : `${typeof value} ${JSON.stringify(value) ?? String(value)}`}; write it as a string${typeof value === "number" || typeof value === "boolean" ? ` ("${value}")` : ""}.`,
      );
  }
  const unknown = Object.keys(configs).filter((k) => !KNOWN_MIRROR_CONFIGS.includes(k));
  if (unknown.length > 0) {
    const hints = unknown.flatMap((k) => {
      const close = closestName(k, KNOWN_MIRROR_CONFIGS);
      if (close === undefined) return [];
      return [unknown.length === 1 ? `'${close}'` : `'${close}' for '${k}'`];
    });
    const hint = hints.length === 0 ? "" : ` Did you mean ${hints.join(", ")}?`;
    throw new InvalidMirrorConfigError(
      unknown[0]!,
      `Unknown mirror config ${unknown.map((k) => `'${k}'`).join(", ")}.${hint} Valid keys: ${KNOWN_MIRROR_CONFIGS.join(", ")}.`,
    );
  }
  const protocol = configs[SECURITY_PROTOCOL_CONFIG];
  if (protocol !== undefined && !SUPPORTED_SECURITY_PROTOCOLS.includes(protocol.trim().toUpperCase())) {
    const close = closestName(protocol.trim().toUpperCase(), SUPPORTED_SECURITY_PROTOCOLS);
    throw new InvalidMirrorConfigError(
      SECURITY_PROTOCOL_CONFIG,
      `${SECURITY_PROTOCOL_CONFIG}=${protocol} is not supported: it is not one of Kafka's security protocols.${close === undefined ? "" : ` Did you mean ${close}?`} Supported: ${SUPPORTED_SECURITY_PROTOCOLS.join(", ")}. Fix the mirror config and try again.`,
    );
  }
  // Checked on what is given, not in parseMirrorConfig: a mirror stored by an earlier version with such a
  // list keeps running as it did (its patterns still compile) instead of stopping at the upgrade.
  const K = MIRROR_CONFIG_KEYS;
  for (const key of [K.TOPICS_INCLUDE, K.TOPICS_EXCLUDE, K.GROUPS_INCLUDE, K.GROUPS_EXCLUDE]) {
    if (configs[key] !== undefined) checkNoCutRepetition(key, splitList(configs[key]));
  }
}

/**
 * Defaults of the mirror-level configs (KIP-1279's `ClusterMirrorConfig`, early-revision refresh interval).
 * `topics.include` is empty: only topics added explicitly (and the patterns given to `addTopics`) are mirrored.
 * `default.replication.factor` has no default here: the destination's own default applies.
 */
export const MIRROR_CONFIG_DEFAULTS: Readonly<Record<string, string>> = {
  "topics.include": "",
  "topics.exclude": "__.*",
  "groups.include": ".*",
  "groups.exclude": "",
  "acls.sync.enable": "true",
  "acls.include": "*",
  "configs.sync.enable": "true",
  // A mirror stored without it was created before it existed: it keeps what its source deletes. New
  // mirrors are created with {@link LOG_START_OFFSET_SYNC_FOR_NEW_MIRRORS}.
  "log.start.offset.sync.enable": "false",
  "topic.properties.exclude": "",
  "mirror.num.replica.fetchers": "1",
  "mirror.metadata.refresh.interval.ms": "30000",
};

/** `log.start.offset.sync.enable` of a mirror created without it: its copy follows the source's log start. */
export const LOG_START_OFFSET_SYNC_FOR_NEW_MIRRORS = "true";

/** A mirror's definition, validated and typed. */
export interface MirrorDefinition {
  name: string;
  bootstrapServers: string;
  /** The source cluster id pinned at creation (undefined only before creation pins it). */
  sourceClusterId: string | undefined;
  topicsInclude: string[];
  topicsExclude: string[];
  groupsInclude: string[];
  groupsExclude: string[];
  aclsSyncEnable: boolean;
  /** Parsed `acls.include`: which in-scope ACL bindings are synced (default `*`, all). */
  aclsInclude: AclIncludeRule[];
  configsSyncEnable: boolean;
  /**
   * `log.start.offset.sync.enable` (true for mirrors created now, stored at creation; false for one stored
   * without it by an earlier version): the copy's log start follows the source's while it mirrors (records
   * deleted there, by DeleteRecords or retention, leave the copy too), as a Kafka follower's follows its
   * leader's. False: the copy keeps them until its own retention drops them.
   */
  logStartOffsetSyncEnable: boolean;
  /** Topic config names never copied, on top of {@link isExcludedTopicConfig}'s fixed list. */
  topicPropertiesExclude: string[];
  numReplicaFetchers: number;
  metadataRefreshIntervalMs: number;
  defaultReplicationFactor: number | undefined;
  /** The stored configs, as given (without defaults). */
  configs: Readonly<Record<string, string>>;
}

/**
 * Throws InvalidMirrorNameError unless `name` is 1..249 of [a-zA-Z0-9._-], not `.`/`..`, not starting with
 * `__` (internal names, e.g. `__mirror_state`), without a reserved suffix.
 */
export function validateMirrorName(name: string): void {
  // From JavaScript a name may be anything: say so rather than fail on a string method.
  if (typeof name !== "string")
    throw new InvalidMirrorNameError(
      String(name),
      `it must be a string, got ${name === null ? "null" : typeof name}`,
    );
  if (name.length === 0) throw new InvalidMirrorNameError(name, "it must not be empty");
  if (name.length > MAX_MIRROR_NAME_LENGTH) {
    throw new InvalidMirrorNameError(
      name,
      `it is ${name.length} characters long; use at most ${MAX_MIRROR_NAME_LENGTH}`,
    );
  }
  if (name === "." || name === "..") throw new InvalidMirrorNameError(name, "'.' and '..' are reserved");
  if (name.startsWith("__")) {
    throw new InvalidMirrorNameError(
      name,
      "names starting with '__' are reserved for internal topics such as __mirror_state; pick another name",
    );
  }
  const bad = [...new Set(name.replace(/[a-zA-Z0-9._-]/g, ""))];
  if (bad.length > 0) {
    throw new InvalidMirrorNameError(
      name,
      `it contains ${bad.map((c) => `'${c}'`).join(", ")}; use only ASCII letters, digits, '.', '_' and '-'`,
    );
  }
  for (const suffix of [PAUSED_SUFFIX, REMOVED_SUFFIX]) {
    if (name.endsWith(suffix)) {
      throw new InvalidMirrorNameError(
        name,
        `it ends in '${suffix}', which the mirror.name topic config uses to pause or remove topics`,
      );
    }
  }
}

/** Splits a comma-separated list, trimming entries and dropping empty ones. */
export function splitList(value: string | undefined): string[] {
  return (value ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
}

/**
 * Refuses a pattern list in which a regex repetition `{n,m}` was cut at its comma (`a{1,3}` read as the two
 * patterns `a{1` and `3}`, each a valid regex of literal braces, as Kafka's list configs would split it too):
 * silently it would match names nobody meant.
 */
function checkNoCutRepetition(config: string, list: readonly string[]): void {
  for (let i = 0; i + 1 < list.length; i++) {
    const [left, right] = [list[i]!, list[i + 1]!];
    if (/\{\d+$/.test(left) && /^\d*\}/.test(right)) {
      throw new InvalidMirrorConfigError(
        config,
        `${config} is a comma-separated list, so '${left},${right}' was cut at its comma into '${left}' and '${right}'. A repetition with a comma ({n,m}) cannot be written in it: spell the alternatives out with '|' (e.g. 'ab{1,2}' as 'ab|abb'), or use '+' or '*'.`,
        `${left},${right}`,
      );
    }
  }
}

/**
 * Compiles one regex as a whole-name match (Java's `Pattern.matches`): `foo` matches only `foo`, `foo.*`
 * every name that starts with `foo`. Throws InvalidMirrorConfigError naming the pattern and the syntax error;
 * `hint` says how the pattern is written where it came from (default: a config's comma-separated list).
 */
export function compilePattern(
  config: string,
  pattern: string,
  hint = "lists are comma-separated; each entry must match whole names",
): RegExp {
  try {
    new RegExp(pattern);
    return new RegExp(`^(?:${pattern})$`);
  } catch (error) {
    // V8 repeats "Invalid regular expression: /PATTERN/: " before the reason; the message already names both.
    const why = (error instanceof Error ? error.message : String(error)).replace(
      /^Invalid regular expression: \/[\s\S]*\/[a-z]*: /,
      "",
    );
    const glob = /^\*|[^.\]]\*/.test(pattern) ? " It is a regex, not a glob: '.*' matches any name." : "";
    throw new InvalidMirrorConfigError(
      config,
      `Invalid regular expression '${pattern}' in ${config}: ${why}. Fix the pattern (${hint}).${glob}`,
      pattern,
      { cause: error },
    );
  }
}

/** An include/exclude pair: a name passes when some include matches and no exclude does. */
export class NameFilter {
  private readonly include: RegExp[];
  private readonly exclude: RegExp[];

  constructor(include: RegExp[], exclude: RegExp[]) {
    this.include = include;
    this.exclude = exclude;
  }

  /** Compiles comma-separated include and exclude lists (validated). */
  static of(includeConfig: string, include: string[], excludeConfig: string, exclude: string[]): NameFilter {
    return new NameFilter(
      include.map((p) => compilePattern(includeConfig, p)),
      exclude.map((p) => compilePattern(excludeConfig, p)),
    );
  }

  /** True when `name` is included and not excluded. */
  matches(name: string): boolean {
    return this.include.some((r) => r.test(name)) && !this.excluded(name);
  }

  /** True when an exclude pattern matches `name`. */
  excluded(name: string): boolean {
    return this.exclude.some((r) => r.test(name));
  }
}

/**
 * Validates a mirror's configs and returns its typed definition (defaults filled in). Throws
 * InvalidMirrorNameError or InvalidMirrorConfigError saying which key is wrong and how to fix it.
 */
export function parseMirrorConfig(name: string, configs: Readonly<Record<string, string>>): MirrorDefinition {
  validateMirrorName(name);
  const K = MIRROR_CONFIG_KEYS;
  const get = (key: string): string | undefined => configs[key] ?? MIRROR_CONFIG_DEFAULTS[key];
  const bootstrap = (configs[K.BOOTSTRAP_SERVERS] ?? "").trim();
  if (bootstrap === "") {
    throw new InvalidMirrorConfigError(
      K.BOOTSTRAP_SERVERS,
      `Mirror '${name}' needs ${K.BOOTSTRAP_SERVERS}: set it to the source cluster's host:port list in the mirror config.`,
    );
  }
  const patterns = (key: string): string[] => {
    const list = splitList(get(key));
    for (const p of list) compilePattern(key, p);
    return list;
  };
  const sourceClusterId = configs[K.SOURCE_CLUSTER_ID]?.trim();
  if (sourceClusterId === "") {
    throw new InvalidMirrorConfigError(
      K.SOURCE_CLUSTER_ID,
      `${K.SOURCE_CLUSTER_ID} must not be empty; leave it out and it is pinned from the source at creation.`,
    );
  }
  const rf = configs[K.DEFAULT_REPLICATION_FACTOR];
  return {
    name,
    bootstrapServers: bootstrap,
    sourceClusterId,
    topicsInclude: patterns(K.TOPICS_INCLUDE),
    topicsExclude: patterns(K.TOPICS_EXCLUDE),
    groupsInclude: patterns(K.GROUPS_INCLUDE),
    groupsExclude: patterns(K.GROUPS_EXCLUDE),
    aclsSyncEnable: bool(K.ACLS_SYNC_ENABLE, get(K.ACLS_SYNC_ENABLE)!),
    aclsInclude: parseAclsInclude(get(K.ACLS_INCLUDE)!),
    configsSyncEnable: bool(K.CONFIGS_SYNC_ENABLE, get(K.CONFIGS_SYNC_ENABLE)!),
    logStartOffsetSyncEnable: bool(K.LOG_START_OFFSET_SYNC_ENABLE, get(K.LOG_START_OFFSET_SYNC_ENABLE)!),
    topicPropertiesExclude: splitList(get(K.TOPIC_PROPERTIES_EXCLUDE)),
    numReplicaFetchers: int(K.NUM_REPLICA_FETCHERS, get(K.NUM_REPLICA_FETCHERS)!, 1),
    metadataRefreshIntervalMs: int(
      K.METADATA_REFRESH_INTERVAL_MS,
      get(K.METADATA_REFRESH_INTERVAL_MS)!,
      1,
      MAX_INTERVAL_MS,
    ),
    defaultReplicationFactor: rf === undefined ? undefined : int(K.DEFAULT_REPLICATION_FACTOR, rf, 1),
    configs: { ...configs },
  };
}

/** The topic filter of a mirror (`topics.include` / `topics.exclude`). */
export function topicFilter(def: MirrorDefinition): NameFilter {
  const K = MIRROR_CONFIG_KEYS;
  return NameFilter.of(K.TOPICS_INCLUDE, def.topicsInclude, K.TOPICS_EXCLUDE, def.topicsExclude);
}

/** The group filter of a mirror (`groups.include` / `groups.exclude`). */
export function groupFilter(def: MirrorDefinition): NameFilter {
  const K = MIRROR_CONFIG_KEYS;
  return NameFilter.of(K.GROUPS_INCLUDE, def.groupsInclude, K.GROUPS_EXCLUDE, def.groupsExclude);
}

/**
 * Topic configs never copied from the source (spec §7): `mirror.name`, every throttle
 * (`*.replication.throttled.*`), `min.insync.replicas`, timestamp settings (`message.timestamp.*`,
 * `log.message.timestamp.*`), `unclean.leader.election.enable` and `mirror.support.unclean.leader.election`,
 * plus the mirror's own `topic.properties.exclude` names.
 */
export function isExcludedTopicConfig(name: string, extra: readonly string[] = []): boolean {
  return (
    name === "mirror.name" ||
    name.includes(".replication.throttled.") ||
    name === "min.insync.replicas" ||
    name.startsWith("message.timestamp.") ||
    name.startsWith("log.message.timestamp.") ||
    name === "unclean.leader.election.enable" ||
    name === "mirror.support.unclean.leader.election" ||
    extra.includes(name)
  );
}

function bool(key: string, value: string): boolean {
  const v = value.trim().toLowerCase();
  if (v === "true") return true;
  if (v === "false") return false;
  throw new InvalidMirrorConfigError(key, `${key} must be true or false, got '${value}'.`);
}

function int(key: string, value: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const v = value.trim();
  const n = Number(v);
  if (!/^-?\d+$/.test(v) || !Number.isSafeInteger(n) || n < min || n > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `from ${min} to ${max}`;
    throw new InvalidMirrorConfigError(key, `${key} must be an integer ${range}, got '${value}'.`);
  }
  return n;
}

/** Longest interval a config in milliseconds takes: Kafka's int configs, and the longest a timer waits. */
const MAX_INTERVAL_MS = 2_147_483_647;
