import { execFile, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { promisify } from "node:util";
import { EventLoopScheduler, KafkaCluster, SeededRandom, SystemClock } from "@cluster-mirror/cluster";
import { ClusterMirroring, type SourceCluster } from "@cluster-mirror/mirror";
import {
  type CompressionType,
  compress,
  decompress,
  loadCompressionCodecs,
  type RecordBatch,
  recordBatches,
} from "@cluster-mirror/protocol";
import kafkajs, { type Admin, type ITopicConfig } from "kafkajs";
import { inject } from "vitest";
import { KafkajsSourceConnector } from "../../src/index";

export const { Kafka, CompressionTypes, CompressionCodecs, logLevel } = kafkajs;

/** A kafkajs client of the run's broker (its own log silenced: the retries it logs while the broker loads its coordinators are expected). */
export function kafkaClient(clientId: string, bootstrap = inject("kafkaBootstrap")) {
  return new Kafka({
    brokers: bootstrap.split(","),
    clientId,
    logLevel: logLevel.NOTHING,
    retry: { retries: 8 },
  });
}

/**
 * Metadata and ListOffsets errors of a topic that exists but is not served yet by its leader (kafkajs names
 * NOT_LEADER_OR_FOLLOWER by its old name, NOT_LEADER_FOR_PARTITION).
 */
const NOT_SERVED_YET = new Set([
  "UNKNOWN_TOPIC_OR_PARTITION",
  "LEADER_NOT_AVAILABLE",
  "NOT_LEADER_FOR_PARTITION",
  "NOT_LEADER_OR_FOLLOWER",
]);

function notServedYet(error: unknown): boolean {
  const e = error as { type?: string; originalError?: { type?: string } } | undefined;
  return NOT_SERVED_YET.has(e?.type ?? "") || NOT_SERVED_YET.has(e?.originalError?.type ?? "");
}

/**
 * Creates topics and waits until every partition's leader serves it. kafkajs's own `waitForLeaders` retries
 * LEADER_NOT_AVAILABLE only, and a KRaft broker that has not applied the new topic's metadata yet answers
 * UNKNOWN_TOPIC_OR_PARTITION ("This server does not host this topic-partition"), which kafkajs's Metadata
 * parser throws: under heavy load, createTopics itself then failed. The condition waited on here is the one
 * the tests need: each partition's leader answers ListOffsets for it.
 */
export async function createServedTopics(admin: Admin, topics: ITopicConfig[]): Promise<void> {
  await admin.createTopics({ waitForLeaders: false, topics });
  await until(async () => {
    for (const t of topics) {
      const partitions = t.replicaAssignment?.length || t.numPartitions || 1;
      try {
        const served = await admin.fetchTopicOffsets(t.topic);
        if (served.length < partitions)
          return `${t.topic}: ${served.length} of ${partitions} partitions served`;
      } catch (error) {
        if (!notServedYet(error)) throw error;
        return `${t.topic}: ${error instanceof Error ? error.message : String(error)}`;
      }
    }
    return undefined;
  });
}

let codecsReady: Promise<void> | undefined;

/**
 * Teaches kafkajs (which ships gzip only) snappy, lz4 and zstd with our protocol package's codecs, so the
 * broker receives every codec from kafkajs; the broker validates (decompresses) each batch it stores.
 */
export function registerKafkajsCodecs(): Promise<void> {
  codecsReady ??= loadCompressionCodecs().then(() => {
    const codec = (type: CompressionType) => () => ({
      compress: async (encoder: { buffer: Buffer }) => compress(type, encoder.buffer),
      decompress: async (buffer: Buffer) => decompress(type, buffer),
    });
    const codecs = CompressionCodecs as Record<number, unknown>;
    codecs[CompressionTypes.Snappy] = codec(2);
    codecs[CompressionTypes.LZ4] = codec(3);
    codecs[CompressionTypes.ZSTD] = codec(4);
  });
  return codecsReady;
}

/**
 * Every batch of a partition as the broker stored it: its segment files (`<base offset>.log`, in offset
 * order) read straight from the broker's log dir, split into batches. This is the oracle of "byte for
 * byte": it reads no protocol at all.
 */
export function storedBatches(
  topic: string,
  partition: number,
  dataDir = inject("kafkaDataDir"),
): RecordBatch[] {
  const dir = path.join(dataDir, `${topic}-${partition}`);
  // The log cleaner swaps segments under us (old `.log` renamed to `.deleted`, the cleaned `.swap` renamed
  // to `.log`): a read that overlapped a swap can miss or repeat a segment. Retry until the listing is the
  // same before and after the read and every file was still there.
  for (let attempt = 0; ; attempt++) {
    const before = logSegments(dir);
    try {
      const bytes = Buffer.concat(before.map((f) => fs.readFileSync(path.join(dir, f))));
      if (before.join() === logSegments(dir).join()) return [...recordBatches(bytes)];
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "ENOENT" || attempt > 100) throw e;
    }
  }
}

const logSegments = (dir: string) =>
  fs
    .readdirSync(dir)
    .filter((f) => f.endsWith(".log"))
    .sort();

/**
 * Undefined once the broker's cleaner has cleaned everything it can of a partition: its checkpointed
 * first dirty offset is the active segment's base offset and no swap is under way; else what it waits for.
 */
export function compactionSettled(topic: string, partition: number, dataDir = inject("kafkaDataDir")) {
  const dir = path.join(dataDir, `${topic}-${partition}`);
  const files = fs.readdirSync(dir);
  const swapping = files.filter((f) => f.endsWith(".cleaned") || f.endsWith(".swap"));
  if (swapping.length > 0) return `the cleaner is swapping ${swapping.join(", ")}`;
  const active = BigInt(logSegments(dir).at(-1)!.replace(".log", ""));
  const checkpoint = path.join(dataDir, "cleaner-offset-checkpoint");
  const line = fs.existsSync(checkpoint)
    ? fs
        .readFileSync(checkpoint, "utf8")
        .split("\n")
        .find((l) => l.startsWith(`${topic} ${partition} `))
    : undefined;
  const firstDirty = line === undefined ? -1n : BigInt(line.split(" ")[2]!);
  return firstDirty === active
    ? undefined
    : `the cleaner's first dirty offset is ${firstDirty}, the active segment starts at ${active}`;
}

/** Every batch of a partition on an embedded cluster's leader. */
export function destinationBatches(cluster: KafkaCluster, topic: string, partition: number): RecordBatch[] {
  const log = cluster.leaderFor(topic, partition).replica(topic, partition)!.log;
  return [...log.batches()];
}

export const hexOf = (batches: readonly RecordBatch[]) =>
  batches.map((b) => `${b.baseOffset}:${b.buffer.toString("hex")}`);

/** An embedded destination cluster in real time, with mirroring from real Kafka sources (kafkajs). */
export function startDestination(seed: number) {
  const cluster = KafkaCluster.start({
    brokers: 3,
    clock: new SystemClock(),
    scheduler: new EventLoopScheduler({ keepAlive: false }),
    random: new SeededRandom(seed),
  });
  const sources = new KafkajsSourceConnector({ fetchMaxWaitMs: 100 });
  const warnings: string[] = [];
  const mirroring = ClusterMirroring.start({
    cluster,
    sources,
    random: new SeededRandom(seed + 1),
    numStatePartitions: 4,
    fetch: { backoffMs: 200, fetchWaitMaxMs: 50 },
    warn: (m) => warnings.push(m),
  });
  return {
    cluster,
    mirroring,
    sources,
    warnings,
    async close() {
      mirroring.close();
      cluster.close();
      await sources.close();
    },
  };
}

/** Polls `check` every 100 ms until it returns undefined (done); rejects after `timeoutMs` with its last answer. */
export async function until(check: () => Promise<string | undefined>, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const notYet = await check();
    if (notYet === undefined) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms: ${notYet}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Waits until each partition's destination log ends at the source's high watermark asked fresh from the
 * broker: an oracle that does not go through the engine's own `whenCaughtUp`.
 */
export async function caughtUpWithBroker(
  cluster: KafkaCluster,
  source: SourceCluster,
  topic: string,
  partitions: readonly number[],
): Promise<void> {
  await until(async () => {
    for (const p of partitions) {
      const high = await source.listOffsets(topic, p, -1n);
      const leo = cluster.leaderFor(topic, p).replica(topic, p)?.log.logEndOffset;
      if (leo !== high) return `${topic}-${p}: destination log end ${leo}, source high watermark ${high}`;
    }
    return undefined;
  });
}

/** `java` arguments that run `java/<program>` (a single-file program) with the broker's jars on the class path. */
function javaArgs(program: string, args: readonly string[]): string[] {
  return [
    "-Xmx256m",
    "-cp",
    `${inject("kafkaLibs")}${path.sep}*`,
    path.join(import.meta.dirname, "java", program),
    ...args,
  ];
}

/** Runs `java/<program>` to its end; resolves with what it printed. */
export async function runJava(program: string, args: readonly string[]): Promise<string> {
  const { stdout } = await promisify(execFile)("java", javaArgs(program, args), { timeout: 150_000 });
  return stdout;
}

/**
 * Starts `java/<program>` in the background: `output()` is what it printed so far, `exited` settles when it
 * ends; with `stdin: "pipe"` it runs until `child.stdin.end()` (the programs that wait for it).
 */
export function startJava(program: string, args: readonly string[], stdin: "pipe" | "ignore" = "ignore") {
  const child = spawn("java", javaArgs(program, args), { stdio: [stdin, "pipe", "inherit"] });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  let out = "";
  child.stdout?.setEncoding("utf8").on("data", (d: string) => {
    out += d;
  });
  return { child, exited, output: () => out };
}

/** The group protocol of Kafka's Java consumer: KIP-848's `consumer` on Kafka 4, `classic` before. */
export function javaGroupProtocol(): "consumer" | "classic" {
  return Number(inject("kafkaVersion").split(".")[0]) >= 4 ? "consumer" : "classic";
}

/** kafkajs's numeric ACL enums (AclResourceTypes, ResourcePatternTypes, AclOperationTypes, AclPermissionTypes). */
export const ACL_ENUMS = {
  TOPIC: 2,
  GROUP: 3,
  CLUSTER: 4,
  LITERAL: 3,
  READ: 3,
  DESCRIBE: 8,
  ALLOW: 3,
} as const;

/** A mirror's settings for the broker's SASL/PLAIN listener as `User:mirror` (its password by default). */
export function mirrorSaslConfig(password = "mirror-secret"): Record<string, string> {
  return {
    "bootstrap.servers": inject("kafkaSaslBootstrap"),
    "security.protocol": "SASL_PLAINTEXT",
    "sasl.mechanism": "PLAIN",
    "sasl.jaas.config": `org.apache.kafka.common.security.plain.PlainLoginModule required username="mirror" password="${password}";`,
  };
}
