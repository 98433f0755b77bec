import { Command, Option } from "commander";
import { withTokenOptions } from "../client/node-token";
import { DEFAULT_REQUEST_LIMITS } from "../node/request-limits";
import { prepareDataDir, requireEmptyDataDir } from "../persistence/data-dir";
import { cliVersion } from "./cli-version";
import { runConsume, runCreateTopic, runProduce } from "./console-commands";
import { adminPortFlag, intFlag } from "./int-flag";
import type { NodeFlags } from "./node-command";
import { checkPortFree } from "./port-check";
import { runProgram } from "./run-program";
import type { VerifyFlags } from "./verify-command";

const collect = (value: string, previous: string[]) => [...previous, value];

/** The `cluster-mirror` program: `node`, `produce`, `consume` and `demo`. */
export function clusterMirrorProgram(): Command {
  const program = new Command("cluster-mirror")
    .description(
      "Kafka Cluster Mirroring (KIP-1279) on embedded clusters: run a node, try it out, or watch the demo",
    )
    .version(cliVersion(), "-V, --version", "print the version of @cluster-mirror/cli");
  program
    .command("node")
    .description("run the destination cluster with mirroring, an admin endpoint and a metrics endpoint")
    .requiredOption("--data-dir <dir>", "where the clusters keep their data (restart recovers it)")
    .option(
      "--name <name>",
      "the destination cluster's name (clusters of this node that mirror from it reach it as NAME:9092; not a Kafka listener)",
      "destination",
    )
    .option("--brokers <n>", "destination brokers", "3")
    .option("--port <port>", "admin endpoint port on 127.0.0.1 (0: any free port)", "9094")
    .option("--metrics-port <port>", "Prometheus endpoint port (GET /metrics)", "9404")
    .option(
      "--source <name[=brokers]>",
      "also run an embedded source cluster of that many brokers (default 3), reached as <name>:9092 (repeatable)",
      collect,
      [],
    )
    .option(
      "--seed <n>",
      "seed of the clusters' random ids and jitter, for a run that must repeat (default: random per start; a data dir keeps its cluster id in meta.properties)",
    )
    .option(
      "--state-partitions <n>",
      "mirror.topic.num.partitions of __mirror_state when it is created (default 50; an existing topic keeps its count)",
    )
    .option(
      "--failed-retry-max-attempts <n>",
      "mirror.failed.retry.max.attempts: how often a partition FAILED on a retriable error (its source unreachable, say) retries before it stays FAILED until an operator acts; 0: never give up (default 10, backoff 1 s doubling up to 300 s)",
    )
    .option("--no-fsync", "do not fsync writes (faster, not crash-safe)")
    .option(
      "--max-partitions-per-request <n>",
      "most partitions one create-topic request may create",
      String(DEFAULT_REQUEST_LIMITS.maxPartitionsPerRequest),
    )
    .option(
      "--max-partitions-per-cluster <n>",
      "most partitions (all topics) a cluster of the node may reach through create-topic",
      String(DEFAULT_REQUEST_LIMITS.maxPartitionsPerCluster),
    )
    .option(
      "--max-produce-count <n>",
      "most messages one produce request may write",
      String(DEFAULT_REQUEST_LIMITS.maxProduceCount),
    )
    .option(
      "--allowed-host <name>",
      "a host name (besides 127.0.0.1, localhost, [::1]) the admin API answers to in the Host header (repeatable)",
      collect,
      [],
    )
    .option(
      "--principals <file>",
      'principals with their own admin API tokens, a JSON array [{"principal": "User:alice", "token": "..."}] (mode 0600)',
    )
    .option(
      "--authorizer <mode>",
      "enforce ACLs in the node's clusters: auto (on when --principals is given), on, off",
      "auto",
    )
    .addOption(new Option("--log-level <level>", "pino log level").default("info"))
    .action(async (flags: NodeFlags) => (await import("./node-command")).runNodeCommand(flags));
  withTokenOptions(program.command("create-topic"))
    .description("create a topic through the node (on its destination, or on --cluster NAME)")
    .requiredOption("--bootstrap-server <host:port>", "the node's admin endpoint")
    .option("--cluster <name>", "an embedded cluster of the node (default: the destination)")
    .requiredOption("--topic <topic>", "the topic")
    .option("--partitions <n>", "partition count", "1")
    .option("--replication-factor <n>", "replication factor (default: min(3, brokers))")
    .option("--config <key=value>", "topic config (repeatable)", collect, [])
    .action((flags) => runCreateTopic(flags, (t) => process.stdout.write(t)));
  withTokenOptions(program.command("produce"))
    .description("write messages through the node (to its destination, or to --cluster NAME)")
    .requiredOption("--bootstrap-server <host:port>", "the node's admin endpoint")
    .option("--cluster <name>", "an embedded cluster of the node (default: the destination)")
    .requiredOption("--topic <topic>", "the topic")
    .option("--key <key>", "message key")
    .option("--value <value>", "message value (with --count, suffixed -0, -1, ...)")
    .option("--count <n>", "number of messages")
    .option("--partition <n>", "partition (default: by key)")
    .option("--transactional-id <id>", "send inside a transaction (committed unless --abort/--leave-open)")
    .option("--abort", "abort the transaction")
    .option("--leave-open", "leave the transaction open (a failover aborts it on the mirror)")
    .action((flags) => runProduce(flags, (t) => process.stdout.write(t)));
  withTokenOptions(program.command("consume"))
    .description("read messages through the node (from its destination, or from --cluster NAME)")
    .requiredOption("--bootstrap-server <host:port>", "the node's admin endpoint")
    .option("--cluster <name>", "an embedded cluster of the node (default: the destination)")
    .requiredOption("--topic <topic>", "the topic")
    .option("--group <group>", "consumer group (commits the offsets it read)")
    .option("--from-beginning", "start at the log start when the group has no offset")
    .option("--isolation <level>", "read_committed or read_uncommitted", "read_uncommitted")
    .option("--max-messages <n>", "stop after n messages")
    .option("--timeout-ms <ms>", "stop when no message arrived for this long", "2000")
    .action((flags) =>
      runConsume(
        flags,
        (t) => process.stdout.write(t),
        (t) => process.stderr.write(t),
      ),
    );
  withTokenOptions(program.command("acls"))
    .description(
      "add, list or remove ACL bindings of a cluster of the node (as kafka-acls.sh); enforced when the node's authorizer is on",
    )
    .requiredOption("--bootstrap-server <host:port>", "the node's admin endpoint")
    .option("--cluster <name>", "an embedded cluster of the node (default: the destination)")
    .option("--add", "add bindings")
    .option("--list", "list the bindings matching the flags given (all without any)")
    .option("--remove", "remove the bindings matching the flags given")
    .option("--allow-principal <principal>", "e.g. User:alice")
    .option("--deny-principal <principal>", "e.g. User:mallory")
    .option("--operation <op>", "READ, WRITE, DESCRIBE, ALL, ... (repeatable)", collect, [])
    .option("--topic <name>", "a TOPIC resource (a prefix with --resource-pattern-type prefixed)")
    .option("--group <name>", "a GROUP resource")
    .option("--transactional-id <id>", "a TRANSACTIONAL_ID resource")
    .option("--cluster-resource", "the CLUSTER resource (mirrors need ALTER on it, reading them DESCRIBE)")
    .option(
      "--resource-pattern-type <type>",
      "literal or prefixed; with --list or --remove also any (every pattern type) or match (every binding that applies to the name)",
      "literal",
    )
    .option("--host <host>", "client host the binding applies to", "*")
    .action(async (flags) => (await import("./acls-command")).runAcls(flags, (t) => process.stdout.write(t)));
  withTokenOptions(program.command("verify"))
    .description(
      "compare a mirror's topics with its source: batches byte for byte, offsets, topic ids, configs, ACLs, group offsets (exit 0 only when all agree)",
    )
    .requiredOption("--bootstrap-server <host:port>", "the node's admin endpoint")
    .requiredOption("--mirror <name>", "the mirror to verify")
    .option("--cluster <name>", "the node's cluster that runs the mirror (default: the destination)")
    .option("--json", "JSON output")
    .action(async (flags: VerifyFlags) =>
      (await import("./verify-command")).runVerify(flags, (t) => process.stdout.write(t)),
    );
  program
    .command("demo")
    .description("a guided failover and failback between two embedded clusters, verified at the end")
    .option("--keep-running", "stay up afterwards, serving the admin endpoint for kafka-mirrors")
    .option(
      "--data-dir <dir>",
      "keep the clusters on disk here, a new or empty directory (default: in memory)",
    )
    .option("--port <port>", "admin endpoint port with --keep-running", "9094")
    .option("--seed <n>", "seed of the clusters' random ids and jitter", "7")
    .action(async (flags: { keepRunning?: boolean; dataDir?: string; port: string; seed: string }) => {
      // Flags and the data dir are checked before the demo starts anything.
      const port = adminPortFlag(flags.port);
      const seed = intFlag("--seed", flags.seed, 0);
      if (flags.keepRunning) await checkPortFree("--port", "127.0.0.1", port);
      if (flags.dataDir !== undefined) {
        prepareDataDir("--data-dir", flags.dataDir);
        requireEmptyDataDir("--data-dir", flags.dataDir, "the demo");
      }
      await (await import("../demo/demo")).runDemo({
        keepRunning: flags.keepRunning ?? false,
        dataDir: flags.dataDir,
        port,
        seed,
        out: (t) => process.stdout.write(t),
        color: process.stdout.isTTY === true,
      });
    });
  return program;
}

/** Runs `cluster-mirror` with `argv` (without node and script); resolves with the exit code. */
export function clusterMirrorMain(argv: readonly string[]): Promise<number> {
  // An empty message (`--value ''`) or key is a message; any other empty flag is a mistake.
  return runProgram(clusterMirrorProgram(), argv, { allowEmpty: ["--value", "--key"] });
}
