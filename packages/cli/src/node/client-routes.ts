import { ClusterError } from "@cluster-mirror/cluster";
import type { FastifyInstance } from "fastify";
import { MAX_TIMEOUT_MS } from "../commands/int-flag";
import { consume, produce } from "./console-clients";
import { ConsoleConsumer, type ConsumeRequest } from "./console-consumer";
import { ConsumeSessions } from "./consume-stream";
import { BadRequestError } from "./http-errors";
import type { MirrorNode, NodeCluster } from "./mirror-node";
import { partitionLog } from "./partition-log-view";
import {
  fieldsOf,
  optionalBool,
  optionalInt,
  optionalString,
  requiredString,
  stringMap,
} from "./request-fields";
import { DEFAULT_REQUEST_LIMITS, type RequestLimits } from "./request-limits";
import { requestSignal } from "./request-signal";
import { asPrincipal, authorize } from "./route-auth";
import { NDJSON } from "./wire";

/**
 * The routes that let a person try the clusters out through the node's embedded clients:
 * - `POST /v1/produce {cluster?, topic, key?, value?, count?, partition?, transactionalId?, abort?, leaveOpen?}`;
 * - `POST /v1/consume {cluster?, topic, group?, fromBeginning?, isolation?, maxMessages?, timeoutMs?}`: every
 *   message at the end, or, with `Accept: application/x-ndjson`, each one as it is consumed (see
 *   ConsumeStreamLine);
 * - `POST /v1/consume/stop {consumer, printed}`: ends a streamed consume, its group committing the first
 *   `printed` messages it sent (a Ctrl-C of `cluster-mirror consume`);
 * - `POST /v1/topics {cluster?, topic, partitions?, replicationFactor?, configs?}`: creates a topic;
 * - `GET /v1/log?cluster=&topic=&partition=&fromOffset=&maxBatches=`: a partition's offsets and batch headers
 *   on its leader (control batches with their type: ABORT 0, COMMIT 1, MIRROR_PID_RESET 7), from `fromOffset`
 *   (default: the log start), at most `maxBatches` of them (default: all; `truncated` says more follow).
 */
export function registerClientRoutes(
  app: FastifyInstance,
  node: MirrorNode,
  limits: RequestLimits = DEFAULT_REQUEST_LIMITS,
): void {
  app.post("/v1/produce", async (req) => {
    const body = fieldsOf(req.body);
    const value = optionalString(body, "value");
    const count = optionalCount(body, limits.maxProduceCount);
    if (value === undefined && count === undefined) {
      throw new BadRequestError("give a value or a count of messages to produce");
    }
    const topic = requiredString(body, "topic");
    const target = asPrincipal(node.cluster(optionalString(body, "cluster")), req.principal);
    // Authorized before the topic is looked up: a principal without WRITE learns nothing about it.
    authorize(target, req.principal, "WRITE", "TOPIC", topic);
    // The producer would retry UNKNOWN_TOPIC_OR_PARTITION for seconds: a topic that does not exist is
    // answered at once.
    requireTopic(target, topic);
    return produce(target, {
      topic,
      key: optionalString(body, "key"),
      value,
      count: count ?? 1,
      partition: optionalInt(body, "partition", 0),
      transactionalId: optionalString(body, "transactionalId"),
      abort: optionalBool(body, "abort"),
      leaveOpen: optionalBool(body, "leaveOpen"),
    });
  });

  const consumes = new ConsumeSessions();
  app.post("/v1/consume", async (req, reply) => {
    const body = fieldsOf(req.body);
    const isolation = optionalString(body, "isolation") ?? "read_uncommitted";
    if (isolation !== "read_committed" && isolation !== "read_uncommitted") {
      throw new BadRequestError(`isolation must be read_committed or read_uncommitted, got '${isolation}'`);
    }
    const topic = requiredString(body, "topic");
    const target = asPrincipal(node.cluster(optionalString(body, "cluster")), req.principal);
    authorize(target, req.principal, "READ", "TOPIC", topic);
    requireTopic(target, topic);
    const request: ConsumeRequest = {
      topic,
      group: optionalString(body, "group"),
      fromBeginning: optionalBool(body, "fromBeginning"),
      isolation,
      maxMessages: optionalInt(body, "maxMessages", 1) ?? 1_000_000,
      timeoutMs: optionalInt(body, "timeoutMs", 0, MAX_TIMEOUT_MS) ?? 2000,
      signal: requestSignal(node.stopping, reply),
    };
    // A client that accepts NDJSON gets each message as it is consumed; any other, all of them at the end.
    if (!(req.headers.accept ?? "").includes(NDJSON)) return consume(target, request);
    const consumer = await ConsoleConsumer.open(target, request);
    await consumes.stream(reply, req.principal, consumer);
  });

  app.post("/v1/consume/stop", async (req) => {
    const body = fieldsOf(req.body);
    const printed = optionalInt(body, "printed", 0);
    if (printed === undefined) {
      throw new BadRequestError("field 'printed' (the number of messages the client printed) is required");
    }
    return consumes.stop(requiredString(body, "consumer"), req.principal, printed);
  });

  app.post("/v1/topics", async (req) => {
    const body = fieldsOf(req.body);
    const topic = requiredString(body, "topic");
    const configs = stringMap(body, "configs");
    // The embedded admin client checks CREATE (on the CLUSTER or the topic) as the principal.
    const target = asPrincipal(node.cluster(optionalString(body, "cluster")), req.principal);
    const partitions = optionalInt(body, "partitions", 1) ?? 1;
    checkPartitionLimits(target, partitions, limits);
    // The kafkajs-shaped admin answers false, not an error, for a topic that exists (as kafkajs does).
    const created = await target.kafka.admin().createTopics({
      topics: [
        {
          topic,
          numPartitions: partitions,
          replicationFactor: optionalInt(body, "replicationFactor", 1),
          configEntries: Object.entries(configs).map(([name, value]) => ({ name, value })),
        },
      ],
    });
    if (!created) {
      throw new ClusterError(
        "TOPIC_ALREADY_EXISTS",
        `topic '${topic}' already exists on cluster ${target.name}; nothing was changed. Use another name, or use the topic as it is`,
      );
    }
    return { created: topic };
  });

  app.get("/v1/log", async (req) => {
    const q = fieldsOf(req.query);
    const unknown = Object.keys(q).find((k) => !LOG_QUERY_FIELDS.includes(k));
    if (unknown !== undefined) {
      throw new BadRequestError(`unknown field '${unknown}' (fields: ${LOG_QUERY_FIELDS.join(", ")})`);
    }
    const partition = optionalInt(q, "partition", 0) ?? 0;
    const fromOffset = optionalOffset(q, "fromOffset");
    const maxBatches = optionalInt(q, "maxBatches", 0);
    const target = node.cluster(optionalString(q, "cluster"));
    const topic = requiredString(q, "topic");
    authorize(target, req.principal, "READ", "TOPIC", topic);
    return partitionLog(target.cluster, topic, partition, {
      ...(fromOffset === undefined ? {} : { fromOffset }),
      ...(maxBatches === undefined ? {} : { maxBatches }),
    });
  });
}

/** What `GET /v1/log` takes; anything else (a misspelt `maxBatch`, say) is refused rather than ignored. */
const LOG_QUERY_FIELDS = ["cluster", "topic", "partition", "fromOffset", "maxBatches"];

/** An optional offset field: decimal digits, as a bigint (offsets go past Number's safe integers). */
function optionalOffset(fields: Record<string, unknown>, name: string): bigint | undefined {
  const v = fields[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "string" || !/^\d{1,19}$/.test(v) || BigInt(v) > 2n ** 63n - 1n) {
    throw new BadRequestError(
      `field '${name}' must be an offset >= 0 (decimal digits), got ${JSON.stringify(v)}`,
    );
  }
  return BigInt(v);
}

/** The `count` of a produce request, at most `max`: larger ones are refused before any message is built. */
function optionalCount(body: Record<string, unknown>, max: number): number | undefined {
  const raw = optionalInt(body, "count", 1);
  if (raw !== undefined && raw > max) {
    throw new BadRequestError(
      `field 'count' (produce --count) asks for ${raw} messages; one produce request writes at most ${max} (the node's --max-produce-count). Produce in several requests`,
    );
  }
  return raw;
}

/** UNKNOWN_TOPIC_OR_PARTITION, naming the cluster, unless `topic` exists on it. */
function requireTopic(target: NodeCluster, topic: string): void {
  if (target.cluster.controller.image.topic(topic)) return;
  throw new ClusterError(
    "UNKNOWN_TOPIC_OR_PARTITION",
    `topic '${topic}' does not exist on cluster ${target.name}; create it first (cluster-mirror create-topic --topic ${topic})`,
  );
}

/** INVALID_PARTITIONS when a create-topic asks for more partitions than a request or the cluster may have. */
function checkPartitionLimits(target: NodeCluster, partitions: number, limits: RequestLimits): void {
  if (partitions > limits.maxPartitionsPerRequest) {
    throw new ClusterError(
      "INVALID_PARTITIONS",
      `${partitions} partitions asked for; one create-topic request creates at most ${limits.maxPartitionsPerRequest} (the node's --max-partitions-per-request)`,
    );
  }
  let existing = 0;
  for (const t of target.cluster.controller.image.topicsById.values()) existing += t.partitions.length;
  if (existing + partitions > limits.maxPartitionsPerCluster) {
    throw new ClusterError(
      "INVALID_PARTITIONS",
      `cluster ${target.name} has ${existing} partitions; ${partitions} more would pass its limit of ${limits.maxPartitionsPerCluster} (the node's --max-partitions-per-cluster)`,
    );
  }
}
