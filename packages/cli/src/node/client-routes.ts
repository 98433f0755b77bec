import type { FastifyInstance } from "fastify";
import { consume, produce } from "./console-clients";
import { BadRequestError } from "./http-errors";
import type { MirrorNode } from "./mirror-node";
import { partitionLog } from "./partition-log-view";
import {
  fieldsOf,
  optionalBool,
  optionalInt,
  optionalString,
  requiredString,
  stringMap,
} from "./request-fields";

/**
 * The routes that let a person try the clusters out through the node's embedded clients:
 * - `POST /v1/produce {cluster?, topic, key?, value?, count?, partition?, transactionalId?, abort?, leaveOpen?}`;
 * - `POST /v1/consume {cluster?, topic, group?, fromBeginning?, isolation?, maxMessages?, timeoutMs?}`;
 * - `POST /v1/topics {cluster?, topic, partitions?, replicationFactor?, configs?}`: creates a topic;
 * - `GET /v1/log?cluster=&topic=&partition=`: a partition's offsets and batch headers on its leader
 *   (control batches with their type: ABORT 0, COMMIT 1, MIRROR_PID_RESET 7).
 */
export function registerClientRoutes(app: FastifyInstance, node: MirrorNode): void {
  app.post("/v1/produce", async (req) => {
    const body = fieldsOf(req.body);
    const value = optionalString(body, "value");
    const count = optionalInt(body, "count", 1);
    if (value === undefined && count === undefined) {
      throw new BadRequestError("give a value or a count of messages to produce");
    }
    return produce(node.cluster(optionalString(body, "cluster")), {
      topic: requiredString(body, "topic"),
      key: optionalString(body, "key"),
      value,
      count: count ?? 1,
      partition: optionalInt(body, "partition", 0),
      transactionalId: optionalString(body, "transactionalId"),
      abort: optionalBool(body, "abort"),
      leaveOpen: optionalBool(body, "leaveOpen"),
    });
  });

  app.post("/v1/consume", async (req) => {
    const body = fieldsOf(req.body);
    const isolation = optionalString(body, "isolation") ?? "read_uncommitted";
    if (isolation !== "read_committed" && isolation !== "read_uncommitted") {
      throw new BadRequestError(`isolation must be read_committed or read_uncommitted, got '${isolation}'`);
    }
    return consume(node.cluster(optionalString(body, "cluster")), {
      topic: requiredString(body, "topic"),
      group: optionalString(body, "group"),
      fromBeginning: optionalBool(body, "fromBeginning"),
      isolation,
      maxMessages: optionalInt(body, "maxMessages", 1) ?? 1_000_000,
      timeoutMs: optionalInt(body, "timeoutMs", 0) ?? 2000,
    });
  });

  app.post("/v1/topics", async (req) => {
    const body = fieldsOf(req.body);
    const topic = requiredString(body, "topic");
    const configs = stringMap(body, "configs");
    await node
      .cluster(optionalString(body, "cluster"))
      .kafka.admin()
      .createTopics({
        topics: [
          {
            topic,
            numPartitions: optionalInt(body, "partitions", 1) ?? 1,
            replicationFactor: optionalInt(body, "replicationFactor", 1),
            configEntries: Object.entries(configs).map(([name, value]) => ({ name, value })),
          },
        ],
      });
    return { created: topic };
  });

  app.get("/v1/log", async (req) => {
    const q = fieldsOf(req.query);
    const partition = optionalInt(q, "partition", 0) ?? 0;
    return partitionLog(
      node.cluster(optionalString(q, "cluster")).cluster,
      requiredString(q, "topic"),
      partition,
    );
  });
}
