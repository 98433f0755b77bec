import { DEFAULT_RETRY_BACKOFF, MAX_MIRROR_STATE_PARTITIONS } from "@cluster-mirror/mirror";
import { type Logger, pino } from "pino";
import { type NodeRuntime, startNodeRuntime } from "../node/node-runtime";
import { DEFAULT_REQUEST_LIMITS } from "../node/request-limits";
import { prepareDataDir } from "../persistence/data-dir";
import { readPrincipalsFile } from "../security/principals-file";
import { UsageError } from "./cli-errors";
import { adminPortFlag, intFlag, portFlag } from "./int-flag";
import { checkPortFree } from "./port-check";
import { MAX_EMBEDDED_BROKERS, parseClusterName, parseSources } from "./source-spec";

/** Flags of `cluster-mirror node`. */
export interface NodeFlags {
  dataDir: string;
  name: string;
  brokers: string;
  port: string;
  metricsPort: string;
  source: string[];
  /** Absent: a random seed per start. */
  seed?: string;
  logLevel: string;
  /** Absent: the engine's default (DEFAULT_MIRROR_STATE_PARTITIONS), one default for every caller. */
  statePartitions?: string;
  /** Absent: the engine's default (DEFAULT_RETRY_BACKOFF). */
  failedRetryMaxAttempts?: string;
  fsync: boolean;
  maxPartitionsPerRequest: string;
  maxPartitionsPerCluster: string;
  maxProduceCount: string;
  /** Host names (besides the loopback ones) the admin API answers to. */
  allowedHost: string[];
  /** JSON file of principals and their admin API tokens. */
  principals?: string;
  /** `auto` (on when --principals is given), `on` or `off`. */
  authorizer: string;
}

const LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];

/**
 * `--state-partitions`: `__mirror_state` is one topic the node creates at its first start, before it
 * listens, so it is held to the node's limit for one topic's creation (`--max-partitions-per-request`).
 * Unbounded, a typo such as 100000 kept the node busy for minutes (no log line, the port not open) while it
 * filled the data dir with partition directories.
 */
function statePartitionsFlag(value: string, maxPartitionsPerRequest: number): number {
  const n = intFlag("--state-partitions", value, 1);
  // The engine's own bound (`ClusterMirroring.start` refuses more): checked here too, or a raised
  // --max-partitions-per-request let it through and the node failed only after it created the data dir.
  if (n > MAX_MIRROR_STATE_PARTITIONS) {
    const most = Math.min(maxPartitionsPerRequest, MAX_MIRROR_STATE_PARTITIONS);
    throw new UsageError(
      `--state-partitions ${n} is more than the ${MAX_MIRROR_STATE_PARTITIONS} partitions __mirror_state may have; pass at most ${most} (the default is 50)`,
    );
  }
  if (n > maxPartitionsPerRequest) {
    throw new UsageError(
      `--state-partitions ${n} is more than the ${maxPartitionsPerRequest} partitions one topic may be created with (--max-partitions-per-request); pass at most ${maxPartitionsPerRequest} (the default is 50), or raise --max-partitions-per-request`,
    );
  }
  return n;
}

/**
 * Runs the node until SIGTERM/SIGINT: the destination cluster (and `--source` clusters) on `--data-dir`,
 * mirroring, the admin endpoint and the metrics endpoint; JSON logs on stdout. Resolves when it stopped.
 */
export async function runNodeCommand(flags: NodeFlags): Promise<void> {
  if (!LEVELS.includes(flags.logLevel)) {
    throw new UsageError(`--log-level must be one of ${LEVELS.join(", ")}, got '${flags.logLevel}'`);
  }
  if (!["auto", "on", "off"].includes(flags.authorizer)) {
    throw new UsageError(`--authorizer must be auto, on or off, got '${flags.authorizer}'`);
  }
  const principals = flags.principals === undefined ? [] : readPrincipalsFile(flags.principals);
  // Every flag is checked before anything starts: a bad port must not be reported after the clusters
  // started (and wrote to the data dir).
  const maxPartitionsPerRequest = intFlag("--max-partitions-per-request", flags.maxPartitionsPerRequest, 1);
  const options = {
    name: parseClusterName(flags.name),
    dataDir: flags.dataDir,
    brokers: intFlag("--brokers", flags.brokers, 1, MAX_EMBEDDED_BROKERS),
    port: adminPortFlag(flags.port),
    metricsPort: portFlag("--metrics-port", flags.metricsPort),
    sources: parseSources(flags.source),
    seed: flags.seed === undefined ? undefined : intFlag("--seed", flags.seed, 0),
    numStatePartitions:
      flags.statePartitions === undefined
        ? undefined
        : statePartitionsFlag(flags.statePartitions, maxPartitionsPerRequest),
    ...(flags.failedRetryMaxAttempts === undefined
      ? {}
      : {
          retry: {
            ...DEFAULT_RETRY_BACKOFF,
            maxAttempts: intFlag("--failed-retry-max-attempts", flags.failedRetryMaxAttempts, 0),
          },
        }),
    fsync: flags.fsync,
    allowedHosts: flags.allowedHost,
    principals,
    enforceAcls: flags.authorizer === "on" || (flags.authorizer === "auto" && principals.length > 0),
    limits: {
      ...DEFAULT_REQUEST_LIMITS,
      maxPartitionsPerRequest,
      maxPartitionsPerCluster: intFlag("--max-partitions-per-cluster", flags.maxPartitionsPerCluster, 1),
      maxProduceCount: intFlag("--max-produce-count", flags.maxProduceCount, 1),
    },
  };
  const duplicate = [options.name, ...options.sources.map((s) => s.name)].find(
    (n, i, names) => names.indexOf(n) !== i,
  );
  if (duplicate !== undefined) {
    throw new UsageError(
      `cluster name '${duplicate}' is given twice (--name and --source, or two --source); give each cluster of the node its own name`,
    );
  }
  if (options.port !== 0 && options.port === options.metricsPort) {
    // Each is free on its own, so the checks below pass; the second listen then failed on a bare
    // EADDRINUSE after the clusters had started on the data dir.
    throw new UsageError(
      `--port and --metrics-port are both ${options.port}: the admin endpoint and the metrics endpoint each need a port of their own. Pass another --metrics-port (default 9404; 0 picks a free port).`,
    );
  }
  // Before the data dir is created (a taken port must leave nothing behind), and before any cluster starts
  // on it (and recovers it) only to stop at a bare listen error.
  await checkPortFree("--port", "127.0.0.1", options.port);
  await checkPortFree("--metrics-port", "127.0.0.1", options.metricsPort);
  prepareDataDir("--data-dir", flags.dataDir);
  const logger = pino({ level: flags.logLevel, base: { service: "cluster-mirror" } });
  const runtime = await startInterruptibly(flags.dataDir, logger, () => startNodeRuntime(options, logger));
  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      logger.info({ event: "node.signal", signal }, `received ${signal}, shutting down`);
      runtime.close().then(resolve, (error: unknown) => {
        logger.error({ err: error }, "shutdown failed");
        resolve();
      });
    };
    process.once("SIGTERM", () => stop("SIGTERM"));
    process.once("SIGINT", () => stop("SIGINT"));
  });
}

/** The exit code of a process stopped by SIGINT (128 + 2), as a shell reports it. */
const SIGINT_EXIT_CODE = 130;

/**
 * Runs the node's start-up, which a Ctrl-C (SIGINT) does not cut in the middle: the node then stops as soon
 * as it is up, saying so, and exits with code 130, so its data dir is closed as after any stop (and its
 * `.lock` released). Start-up is mostly synchronous, so a SIGINT is seen only once it yields: it yields
 * after starting before it lets the signal go, or the signal would be dropped with its handler.
 */
async function startInterruptibly(
  dataDir: string,
  logger: Logger,
  start: () => Promise<NodeRuntime>,
): Promise<NodeRuntime> {
  let interrupted = false;
  const onSigint = () => {
    interrupted = true;
  };
  process.once("SIGINT", onSigint);
  logger.info({ event: "node.starting", dataDir }, `starting on data dir ${dataDir}`);
  let runtime: NodeRuntime;
  try {
    runtime = await start();
    // Twice: the first may run in the iteration that already polled; the second runs after a poll, which
    // hands a pending SIGINT to onSigint (removed later, it would be dropped).
    for (let i = 0; i < 2; i++) await new Promise((resolve) => setImmediate(resolve));
  } finally {
    process.off("SIGINT", onSigint);
  }
  if (!interrupted) return runtime;
  logger.warn(
    { event: "node.startup_interrupted", signal: "SIGINT", dataDir },
    `start-up interrupted (SIGINT): stopping the node; the data dir ${dataDir} is left usable, start the node on it again to go on`,
  );
  await runtime.close();
  process.exit(SIGINT_EXIT_CODE);
}
