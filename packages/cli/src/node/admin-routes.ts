import type { FastifyInstance } from "fastify";
import { BadRequestError } from "./http-errors";
import type { MirrorNode } from "./mirror-node";
import {
  fieldsOf,
  optionalBool,
  optionalInt,
  optionalString,
  requiredString,
  stringMap,
} from "./request-fields";

/** The topic actions of `kafka-mirrors` and the MirrorAdmin method each maps to. */
export const TOPIC_ACTIONS = ["add", "remove", "pause", "resume", "start", "stop"] as const;
/** One of {@link TOPIC_ACTIONS}. */
export type TopicAction = (typeof TOPIC_ACTIONS)[number];

/**
 * The mirror admin routes (every `kafka-mirrors` operation), on the destination or, with `cluster`, on a
 * named embedded cluster of the node:
 * - `GET /v1/health`: clusters, ids, brokers;
 * - `GET /v1/mirrors`, `POST /v1/mirrors {name, configs}`, `DELETE /v1/mirrors/:name`,
 *   `GET /v1/mirrors/:name/config`;
 * - `POST /v1/mirrors/:name/topics/:action {topic, replicationFactor?, truncateLocalWrites?}` (add,
 *   remove, pause, resume, start, stop) -> `{topics, message}`;
 * - `GET /v1/describe?mirror=&failed=` -> `{rows}` (offsets as decimal strings).
 */
export function registerAdminRoutes(app: FastifyInstance, node: MirrorNode): void {
  app.get("/v1/health", async () => ({
    status: "ok",
    destination: node.destination.name,
    clusters: node.clusters().map((c) => ({
      name: c.name,
      bootstrap: c.bootstrap,
      clusterId: c.cluster.clusterId,
      brokers: c.cluster.runningBrokers(),
      recoveredMetadataRecords: c.recoveredRecords,
    })),
  }));

  app.get("/v1/mirrors", async (req) => {
    const q = fieldsOf(req.query);
    return { mirrors: node.cluster(optionalString(q, "cluster")).mirroring.admin.listMirrors() };
  });

  app.post("/v1/mirrors", async (req) => {
    const body = fieldsOf(req.body);
    const admin = node.cluster(optionalString(body, "cluster")).mirroring.admin;
    const mirror = await admin.createMirror(requiredString(body, "name"), stringMap(body, "configs"));
    return { mirror };
  });

  app.get<{ Params: { name: string } }>("/v1/mirrors/:name/config", async (req) => {
    const q = fieldsOf(req.query);
    return node.cluster(optionalString(q, "cluster")).mirroring.admin.describeMirrorConfig(req.params.name);
  });

  app.delete<{ Params: { name: string } }>("/v1/mirrors/:name", async (req) => {
    const q = fieldsOf(req.query);
    await node.cluster(optionalString(q, "cluster")).mirroring.admin.deleteMirror(req.params.name);
    return { deleted: req.params.name };
  });

  app.post<{ Params: { name: string; action: string } }>("/v1/mirrors/:name/topics/:action", async (req) => {
    const body = fieldsOf(req.body);
    const admin = node.cluster(optionalString(body, "cluster")).mirroring.admin;
    const action = req.params.action;
    const mirror = req.params.name;
    const topic = requiredString(body, "topic");
    const replicationFactor = optionalInt(body, "replicationFactor", 1);
    const truncateLocalWrites = optionalBool(body, "truncateLocalWrites");
    switch (action as TopicAction) {
      case "add":
        return admin.addTopics(mirror, topic, { replicationFactor, truncateLocalWrites });
      case "start":
        return admin.startMirrorTopics(mirror, topic, { replicationFactor, truncateLocalWrites });
      case "remove":
        return admin.removeTopics(mirror, topic);
      case "stop":
        return admin.stopMirrorTopics(mirror, topic);
      case "pause":
        return admin.pauseTopics(mirror, topic);
      case "resume":
        return admin.resumeTopics(mirror, topic);
      default:
        throw new BadRequestError(`unknown topic action '${action}'; use one of ${TOPIC_ACTIONS.join(", ")}`);
    }
  });

  app.get("/v1/describe", async (req) => {
    const q = fieldsOf(req.query);
    const admin = node.cluster(optionalString(q, "cluster")).mirroring.admin;
    const rows = await admin.describe(optionalString(q, "mirror") || undefined, {
      failedOnly: optionalBool(q, "failed"),
    });
    return { rows };
  });
}
