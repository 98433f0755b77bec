import * as fs from "node:fs";
import type { AlteredMirrorConfig, MirrorConfigDescription, MirrorListing } from "@cluster-mirror/mirror";
import { Command, Option } from "commander";
import { connectNode, withTokenOptions } from "../client/node-token";
import { rowFromWire, type WireDescribeRow } from "../node/wire";
import { UsageError } from "./cli-errors";
import { cliVersion } from "./cli-version";
import { intFlag, MAX_TIMEOUT_MS } from "./int-flag";
import { mirrorMessages } from "./mirror-messages";
import { mirrorPath } from "./mirror-path";
import {
  formatPreviewJson,
  formatPreviewTable,
  previewRowFromWire,
  type WirePreviewRow,
} from "./mirror-tables";
import { runProgram } from "./run-program";

/** The action flags of `kafka-mirrors`; exactly one per call. */
const ACTIONS = [
  "create",
  "list",
  "delete",
  "alter",
  "describe-config",
  "add",
  "remove",
  "pause",
  "resume",
  "recover",
  "start",
  "stop",
  "describe",
  "promote",
  "failover-preview",
] as const;
type Action = (typeof ACTIONS)[number];
const TOPIC_ACTIONS: readonly Action[] = [
  "add",
  "remove",
  "pause",
  "resume",
  "recover",
  "start",
  "stop",
  "promote",
  "failover-preview",
];

/** Commander's attribute of an action flag (`--failover-preview` -> `failoverPreview`). */
const attribute = (a: Action) => a.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

const collect = (value: string, previous: string[]) => [...previous, value];

/** Default `--timeout-ms`: of the wait for the node's answer, and of each of `--promote`'s two waits. */
const DEFAULT_TIMEOUT_MS = 60_000;

/** Parsed flags of `kafka-mirrors`. */
interface MirrorsFlags extends Partial<Record<string, boolean | string | string[]>> {
  bootstrapServer?: string;
  mirror?: string;
  topic?: string;
  sourceBootstrap?: string;
  mirrorConfig?: string;
  addConfig?: string[];
  deleteConfig?: string[];
  replicationFactor?: string;
  truncateLocalWrites?: boolean;
  failed?: boolean;
  json?: boolean;
  cluster?: string;
  timeoutMs?: string;
  token?: string;
  dataDir?: string;
}

/** The `kafka-mirrors` program (spec §9): one action per call against a node's admin endpoint. */
export function kafkaMirrorsProgram(): Command {
  const program = new Command("kafka-mirrors")
    .description("Manage cluster mirrors (KIP-1279) on a cluster-mirror node")
    .version(cliVersion(), "-V, --version", "print the version of @cluster-mirror/cli")
    .option("--bootstrap-server <host:port>", "the node's admin endpoint (':9094' means 127.0.0.1:9094)")
    .option("--create", "create a mirror (needs --mirror and --source-bootstrap or --mirror-config)")
    .option("--list", "list mirrors")
    .option("--delete", "delete a mirror (its topics must be removed and STOPPED first)")
    .option(
      "--alter",
      "change a mirror's config (--add-config, --delete-config, --mirror-config): a new source address or password is tried first and must reach the same source cluster",
    )
    .option(
      "--describe-config",
      "show a mirror's config: every key set or with a default, and its value (secrets hidden)",
    )
    .option("--add", "add the source topics matching --topic to --mirror (start mirroring)")
    .option("--remove", "remove topics from --mirror (failover: they become writable)")
    .option("--pause", "pause mirroring of topics (they stay read-only)")
    .option("--resume", "resume paused topics")
    .option(
      "--recover",
      "retry the FAILED partitions of --topic now, with a fresh retry budget (out of retries or not); they stay read-only",
    )
    .option("--start", "alias of --add")
    .option("--stop", "alias of --remove")
    .option("--describe", "describe mirror partitions: offsets, lag, state")
    .option(
      "--promote",
      "planned switch once the source's writers stopped: wait until --topic has lag 0 against the source, then fail over (--remove) and wait for STOPPED",
    )
    .option(
      "--failover-preview",
      "dry run of --remove for --topic: per partition the lag, open transactions aborted, LME, leader epoch after the bump, records a failback would truncate",
    )
    .option("--mirror <name>", "the mirror")
    .addOption(new Option("--topic <regex>", "topics (a regex matching whole names)"))
    .addOption(new Option("--topics <regex>", "alias of --topic").hideHelp())
    .option("--source-bootstrap <servers>", "the source's bootstrap.servers (with --create)")
    .option(
      "--mirror-config <file>",
      "mirror definition as a Java properties file (with --create; with --alter: the keys to set)",
    )
    .option("--add-config <key=value>", "with --alter: a mirror config to set (repeatable)", collect, [])
    .option(
      "--delete-config <key>",
      "with --alter: a mirror config to delete, back to its default (repeatable)",
      collect,
      [],
    )
    .option("--replication-factor <n>", "replication factor of created mirror topics (with --add/--start)")
    .option(
      "--truncate-local-writes",
      "with --add/--start: let the failback truncation drop records written on this cluster since the topics' failover (refused without it)",
    )
    .option("--failed", "with --describe: only FAILED partitions, with RETRY and ERROR columns")
    .option("--json", "with --describe, --describe-config or --failover-preview: JSON output")
    .option(
      "--timeout-ms <ms>",
      `how long to wait for the node's answer; with --promote, bound of the wait for lag 0 and of the wait for STOPPED (default ${DEFAULT_TIMEOUT_MS})`,
    )
    .option("--cluster <name>", "act on this embedded cluster of the node instead of its destination")
    // Words without a flag are refused in the action, where the message can name the flag meant.
    .allowExcessArguments(true);
  withTokenOptions(program);
  program.action(async (flags: MirrorsFlags & { topics?: string }) => {
    rejectWords(program.args);
    if (flags.topics !== undefined && flags.topic === undefined) flags.topic = flags.topics;
    await runMirrors(
      flags,
      (text) => process.stdout.write(text),
      (text) => process.stderr.write(text),
    );
  });
  return program;
}

/** Runs `kafka-mirrors` with `argv` (without node and script); resolves with the exit code. */
export function kafkaMirrorsMain(argv: readonly string[]): Promise<number> {
  return runProgram(kafkaMirrorsProgram(), argv);
}

async function runMirrors(
  flags: MirrorsFlags,
  out: (text: string) => void,
  err: (text: string) => void,
): Promise<void> {
  const action = validate(flags);
  if (flags.topic !== undefined) await checkTopicPattern(flags.topic);
  const timeoutMs = flags.timeoutMs === undefined ? DEFAULT_TIMEOUT_MS : Number(flags.timeoutMs);
  // A promote answers after its two waits: the HTTP call must outlive them.
  const client = connectNode(
    { bootstrapServer: flags.bootstrapServer!, token: flags.token, dataDir: flags.dataDir },
    action === "promote" ? Math.min(2 * timeoutMs + 30_000, MAX_TIMEOUT_MS) : timeoutMs,
    action === "promote" ? undefined : "--timeout-ms sets this wait",
  );
  const cluster = flags.cluster;
  const mirror = flags.mirror!;
  const path = mirrorPath(mirror);
  switch (action) {
    case "create": {
      const configs = flags.mirrorConfig
        ? await readMirrorConfig(flags.mirrorConfig)
        : { "bootstrap.servers": flags.sourceBootstrap! };
      const { mirror: m } = await client.post<{ mirror: MirrorListing }>("/v1/mirrors", {
        cluster,
        name: mirror,
        configs,
      });
      out(`${mirrorMessages.created(m)}\n`);
      return;
    }
    case "list": {
      const { mirrors } = await client.get<{ mirrors: MirrorListing[] }>("/v1/mirrors", { cluster });
      const { formatListTable } = await mirrorFormats();
      out(formatListTable(mirrors));
      return;
    }
    case "alter": {
      const set = await alterations(flags);
      const deleted = [...new Set(flags.deleteConfig ?? [])];
      const altered = await client.patch<Partial<AlteredMirrorConfig>>(`${path}/config`, {
        cluster,
        set,
        delete: deleted,
      });
      out(`${mirrorMessages.altered(mirror, Object.keys(set), deleted)}\n`);
      const unmatched = altered?.unmatchedTopics ?? [];
      if (unmatched.length > 0) out(`${mirrorMessages.stillMirrored(mirror, unmatched)}\n`);
      return;
    }
    case "describe-config": {
      const description = await client.get<MirrorConfigDescription>(`${path}/config`, { cluster });
      out(flags.json ? `${JSON.stringify(description, null, 2)}\n` : formatConfigTable(description));
      return;
    }
    case "delete":
      await client.delete(path, { cluster });
      out(`${mirrorMessages.deleted(mirror)}\n`);
      return;
    case "describe": {
      const { rows } = await client.get<{ rows: WireDescribeRow[] }>("/v1/describe", {
        cluster,
        mirror: flags.mirror,
        failed: flags.failed ? "true" : undefined,
      });
      const parsed = rows.map(rowFromWire);
      const { formatDescribeJson, formatDescribeTable } = await mirrorFormats();
      out(
        flags.json
          ? `${formatDescribeJson(parsed)}\n`
          : formatDescribeTable(parsed, { failed: flags.failed }),
      );
      // A table with no rows says why, on stderr (stdout stays the table for scripts).
      if (!flags.json && parsed.length === 0) err(`${emptyDescribeHint(flags.mirror, flags.failed)}\n`);
      return;
    }
    case "promote": {
      const result = await client.post<{ message: string }>(`${path}/promote`, {
        cluster,
        topic: flags.topic,
        timeoutMs,
      });
      out(`${result.message}\n`);
      return;
    }
    case "failover-preview": {
      const { rows } = await client.get<{ rows: WirePreviewRow[] }>(`${path}/failover-preview`, {
        cluster,
        topic: flags.topic,
      });
      const parsed = rows.map(previewRowFromWire);
      out(flags.json ? `${formatPreviewJson(parsed)}\n` : formatPreviewTable(mirror, parsed));
      return;
    }
    default: {
      const rf = flags.replicationFactor === undefined ? undefined : Number(flags.replicationFactor);
      const result = await client.post<{ message: string }>(`${path}/topics/${action}`, {
        cluster,
        topic: flags.topic,
        replicationFactor: rf,
        truncateLocalWrites: flags.truncateLocalWrites === true ? true : undefined,
      });
      out(`${result.message}\n`);
    }
  }
}

/**
 * kafka-mirrors takes flags only; a word such as `list` or `describe` (as other CLIs' subcommands) is
 * refused naming the action flag it resembles.
 */
function rejectWords(words: readonly string[]): void {
  const word = words[0];
  if (word === undefined) return;
  const action = ACTIONS.find((a) => a === word.toLowerCase());
  throw new UsageError(
    action === undefined
      ? `unexpected argument '${word}': kafka-mirrors takes only flags (a value with spaces needs quotes)`
      : `unexpected argument '${word}': actions are flags, use --${action}`,
  );
}

/** Checks the flag combination; returns the one action. UsageError naming what is wrong otherwise. */
function validate(flags: MirrorsFlags): Action {
  const given = ACTIONS.filter((a) => flags[attribute(a)] === true);
  const all = ACTIONS.map((a) => `--${a}`).join(", ");
  if (given.length === 0) throw new UsageError(`no action given: use exactly one of ${all}`);
  if (given.length > 1) {
    throw new UsageError(
      `${given.map((a) => `--${a}`).join(" and ")} cannot be used together: use exactly one action`,
    );
  }
  const action = given[0]!;
  if (flags.bootstrapServer === undefined) {
    throw new UsageError(
      "--bootstrap-server is required: pass the node's admin endpoint, e.g. --bootstrap-server :9094",
    );
  }
  const only = (flag: string, set: boolean, allowed: readonly Action[]) => {
    if (set && !allowed.includes(action)) {
      throw new UsageError(
        `${flag} cannot be used with --${action}; it is valid only with ${allowed.map((a) => `--${a}`).join(", ")}`,
      );
    }
  };
  only("--topic", flags.topic !== undefined, TOPIC_ACTIONS);
  only("--replication-factor", flags.replicationFactor !== undefined, ["add", "start"]);
  only("--truncate-local-writes", flags.truncateLocalWrites === true, ["add", "start"]);
  only("--source-bootstrap", flags.sourceBootstrap !== undefined, ["create"]);
  only("--mirror-config", flags.mirrorConfig !== undefined, ["create", "alter"]);
  only("--add-config", (flags.addConfig ?? []).length > 0, ["alter"]);
  only("--delete-config", (flags.deleteConfig ?? []).length > 0, ["alter"]);
  only("--failed", flags.failed === true, ["describe"]);
  only("--json", flags.json === true, ["describe", "describe-config", "failover-preview"]);
  if (flags.timeoutMs !== undefined) intFlag("--timeout-ms", flags.timeoutMs, 1, MAX_TIMEOUT_MS);
  only(
    "--mirror",
    flags.mirror !== undefined,
    ACTIONS.filter((a) => a !== "list"),
  );
  if (action !== "list" && action !== "describe" && flags.mirror === undefined) {
    throw new UsageError(`--${action} needs --mirror NAME`);
  }
  if (TOPIC_ACTIONS.includes(action) && flags.topic === undefined) {
    throw new UsageError(`--${action} needs --topic REGEX (e.g. --topic 'orders|payments' or --topic '.*')`);
  }
  if (action === "create") {
    if (flags.sourceBootstrap === undefined && flags.mirrorConfig === undefined) {
      throw new UsageError("--create needs --source-bootstrap SERVERS or --mirror-config FILE");
    }
    if (flags.sourceBootstrap !== undefined && flags.mirrorConfig !== undefined) {
      throw new UsageError(
        "--source-bootstrap and --mirror-config cannot be used together: put bootstrap.servers in the config file, or use --source-bootstrap alone",
      );
    }
  }
  if (
    action === "alter" &&
    flags.mirrorConfig === undefined &&
    (flags.addConfig ?? []).length === 0 &&
    (flags.deleteConfig ?? []).length === 0
  ) {
    throw new UsageError(
      "--alter needs what to change: --add-config KEY=VALUE, --delete-config KEY (both repeatable) or --mirror-config FILE",
    );
  }
  // The same check as every other integer flag: `1e3` or `0x2` are not replication factors.
  if (flags.replicationFactor !== undefined) intFlag("--replication-factor", flags.replicationFactor, 1);
  return action;
}

/**
 * Refuses a `--topic` that is not a regex as a usage error, with the node's own message: it compiles the
 * pattern as the node does (`compilePattern`, a whole-name match), so a call the node would refuse for its
 * pattern never reaches it. The mirror package is loaded only for a pattern that does not compile.
 */
async function checkTopicPattern(pattern: string): Promise<void> {
  try {
    new RegExp(pattern);
    new RegExp(`^(?:${pattern})$`);
    return;
  } catch {
    // Described below, in the node's words.
  }
  const { compilePattern } = await mirrorFormats();
  try {
    compilePattern("--topic", pattern, TOPIC_PATTERN_HINT);
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

/** How `--topic` is written: the hint of the node's message for a pattern that does not compile. */
const TOPIC_PATTERN_HINT =
  "one regex matching whole topic names, e.g. 'orders|payments' for two topics, '.*' for all";

/**
 * The mirror package's formatters, loaded only when output needs them: it pulls in the whole engine, and
 * usage errors and topic actions should not pay for that at startup.
 */
function mirrorFormats() {
  return import("@cluster-mirror/mirror");
}

/**
 * The keys `--alter` sets: those of `--mirror-config` (a file keeps secrets off the command line), then each
 * `--add-config KEY=VALUE` (split at the first `=`: values such as `sasl.jaas.config` hold more).
 */
async function alterations(flags: MirrorsFlags): Promise<Record<string, string>> {
  const set = flags.mirrorConfig ? await readMirrorConfig(flags.mirrorConfig, false) : {};
  for (const pair of flags.addConfig ?? []) {
    const eq = pair.indexOf("=");
    if (eq <= 0) {
      throw new UsageError(
        `--add-config '${pair}' is not KEY=VALUE; write e.g. --add-config bootstrap.servers=source:9092`,
      );
    }
    const value = pair.slice(eq + 1);
    // kafka-configs takes `a=1,b=2` in one flag; here that would set a to "1,b=2" without a word.
    const another = /,\s*([\w.-]+)=/.exec(value)?.[1];
    if (another !== undefined && (await mirrorFormats()).KNOWN_MIRROR_CONFIGS.includes(another)) {
      throw new UsageError(
        `--add-config '${pair}' holds another setting (${another}=...): give each KEY=VALUE its own --add-config`,
      );
    }
    set[pair.slice(0, eq).trim()] = value;
  }
  if (flags.mirrorConfig && Object.keys(set).length === 0 && (flags.deleteConfig ?? []).length === 0) {
    throw new UsageError(`--mirror-config ${flags.mirrorConfig} has no settings: nothing to change`);
  }
  return set;
}

/** The `--describe-config` table: `CONFIG VALUE SOURCE`, secrets as `(hidden)`. */
function formatConfigTable(d: MirrorConfigDescription): string {
  const rows = d.configs.map((c) => [
    c.name,
    c.isSensitive ? "(hidden)" : (c.value ?? ""),
    c.isDefault ? "default" : "set",
  ]);
  const width = Math.max(6, ...rows.map((r) => r[0]!.length)) + 2;
  const valueWidth = Math.max(5, ...rows.map((r) => r[1]!.length)) + 2;
  const line = (r: string[]) => `${r[0]!.padEnd(width)}${r[1]!.padEnd(valueWidth)}${r[2]!}`.trimEnd();
  return `${[line(["CONFIG", "VALUE", "SOURCE"]), ...rows.map(line)].join("\n")}\n`;
}

async function readMirrorConfig(file: string, needsBootstrap = true): Promise<Record<string, string>> {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (error) {
    const code = (error as { code?: string }).code ?? String(error);
    throw new UsageError(
      `cannot read --mirror-config ${file} (${code}); pass a readable Java properties file`,
    );
  }
  const { parseProperties } = await mirrorFormats();
  // Editors on Windows save UTF-8 with a byte order mark; left in, it became part of the first key, and a
  // file that starts with bootstrap.servers was refused for having none.
  // A key alone on its line is an empty value to Java, but here far more likely a value left out (an
  // empty topics.include would stop the mirror taking new topics without a word).
  const bare: string[] = [];
  const configs = parseProperties(text.replace(/^\uFEFF/, ""), {
    onBareKey: (key, line) => bare.push(`line ${line}: '${key}'`),
  });
  if (bare.length > 0) {
    throw new UsageError(
      `--mirror-config ${file} has a key without a value (${bare.join(", ")}); write KEY=VALUE, or KEY= for an empty value`,
    );
  }
  if (needsBootstrap && !configs["bootstrap.servers"]) {
    // A misspelt key (`boostrap.servers`) is why, more often than a line left out: name it, as the node's
    // did-you-mean would, which this refusal came before.
    const { closestName } = await import("@cluster-mirror/cluster");
    const misspelt = Object.keys(configs).find(
      (key) => closestName(key, ["bootstrap.servers"]) !== undefined,
    );
    throw new UsageError(
      `--mirror-config ${file} has no bootstrap.servers${
        misspelt === undefined
          ? ""
          : ` ('${misspelt}' is no mirror config: did you mean 'bootstrap.servers'?)`
      }; add bootstrap.servers=HOST:PORT of the source`,
    );
  }
  return configs;
}

/** Why a describe has no rows, and what to do. */
function emptyDescribeHint(mirror: string | undefined, failedOnly: boolean | undefined): string {
  if (failedOnly)
    return `No partition of ${mirror === undefined ? "any mirror" : `mirror ${mirror}`} is FAILED.`;
  return mirror === undefined
    ? "No mirror has topics yet: create one with --create and add topics with --add --topic REGEX --mirror NAME."
    : `Mirror ${mirror} has no topics: add some with --add --topic REGEX --mirror ${mirror}.`;
}
