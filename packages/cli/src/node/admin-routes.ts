import type { FastifyInstance } from "fastify";
import { MAX_TIMEOUT_MS } from "../commands/int-flag";
import { BadRequestError } from "./http-errors";
import type { MirrorNode, NodeCluster } from "./mirror-node";
import {
  fieldsOf,
  optionalBool,
  optionalInt,
  optionalString,
  requiredString,
  stringList,
  stringMap,
} from "./request-fields";
import { requestSignal, untilStopping } from "./request-signal";
import { authorize, CLUSTER_RESOURCE } from "./route-auth";

/**
 * The cluster a mirror request acts on, once `principal` may: ALTER on the CLUSTER to change mirrors (as
 * Kafka asks for CreateAcls or broker configs), DESCRIBE on it to read them.
 */
function mirrorTarget(
  node: MirrorNode,
  cluster: string | undefined,
  principal: string,
  change: boolean,
): NodeCluster {
  const target = node.cluster(cluster);
  authorize(target, principal, change ? "ALTER" : "DESCRIBE", "CLUSTER", CLUSTER_RESOURCE);
  return target;
}

/** The topic actions of `kafka-mirrors` and the MirrorAdmin method each maps to. */
export const TOPIC_ACTIONS = ["add", "remove", "pause", "resume", "recover", "start", "stop"] as const;
/** One of {@link TOPIC_ACTIONS}. */
export type TopicAction = (typeof TOPIC_ACTIONS)[number];

/**
 * The mirror admin routes (every `kafka-mirrors` operation), on the destination or, with `cluster`, on a
 * named embedded cluster of the node. Changing mirrors needs ALTER on the CLUSTER, reading them DESCRIBE
 * (only enforced while the node's authorizer is on; the admin token's principal is a super user):
 * - `GET /v1/health`: clusters, ids, brokers;
 * - `GET /v1/mirrors`, `POST /v1/mirrors {name, configs}`, `DELETE /v1/mirrors/:name`,
 *   `GET /v1/mirrors/:name/config`, `PATCH /v1/mirrors/:name/config {set?, delete?}` (the config after);
 * - `POST /v1/mirrors/:name/topics/:action {topic, replicationFactor?, truncateLocalWrites?}` (add,
 *   remove, pause, resume, start, stop) -> `{topics, message}`; recover -> `{topics, partitions, message}`;
 * - `GET /v1/describe?mirror=&failed=` -> `{rows}` (offsets as decimal strings);
 * - `POST /v1/mirrors/:name/promote {topic, timeoutMs?}` -> `{topics, partitions, message}`;
 * - `GET /v1/mirrors/:name/failover-preview?topic=` -> `{rows}` (changes nothing);
 * - `GET /v1/mirrors/:name/verify` -> `{mirror, topics, ok, checks}`.
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
    return {
      mirrors: mirrorTarget(
        node,
        optionalString(q, "cluster"),
        req.principal,
        false,
      ).mirroring.admin.listMirrors(),
    };
  });

  app.post("/v1/mirrors", async (req) => {
    const body = fieldsOf(req.body);
    const admin = mirrorTarget(node, optionalString(body, "cluster"), req.principal, true).mirroring.admin;
    const mirror = await admin.createMirror(requiredString(body, "name"), stringMap(body, "configs"));
    return { mirror };
  });

  app.get<{ Params: { name: string } }>("/v1/mirrors/:name/config", async (req) => {
    const q = fieldsOf(req.query);
    return mirrorTarget(
      node,
      optionalString(q, "cluster"),
      req.principal,
      false,
    ).mirroring.admin.describeMirrorConfig(req.params.name);
  });

  app.patch<{ Params: { name: string } }>("/v1/mirrors/:name/config", async (req) => {
    const body = fieldsOf(req.body);
    const admin = mirrorTarget(node, optionalString(body, "cluster"), req.principal, true).mirroring.admin;
    return admin.alterMirrorConfig(req.params.name, {
      set: stringMap(body, "set"),
      delete: stringList(body, "delete"),
    });
  });

  app.delete<{ Params: { name: string } }>("/v1/mirrors/:name", async (req) => {
    const q = fieldsOf(req.query);
    await mirrorTarget(node, optionalString(q, "cluster"), req.principal, true).mirroring.admin.deleteMirror(
      req.params.name,
    );
    return { deleted: req.params.name };
  });

  app.post<{ Params: { name: string; action: string } }>("/v1/mirrors/:name/topics/:action", async (req) => {
    const body = fieldsOf(req.body);
    const admin = mirrorTarget(node, optionalString(body, "cluster"), req.principal, true).mirroring.admin;
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
      case "recover":
        return admin.recoverTopics(mirror, topic);
      default:
        throw new BadRequestError(`unknown topic action '${action}'; use one of ${TOPIC_ACTIONS.join(", ")}`);
    }
  });

  app.post<{ Params: { name: string } }>("/v1/mirrors/:name/promote", async (req, reply) => {
    const body = fieldsOf(req.body);
    const admin = mirrorTarget(node, optionalString(body, "cluster"), req.principal, true).mirroring.admin;
    // A client that goes away (Ctrl-C) or a node that stops cancels a promote still catching up: nothing
    // is failed over. A failover that had begun goes on (and completes on restart).
    const promote = admin.promoteTopics(req.params.name, requiredString(body, "topic"), {
      timeoutMs: optionalInt(body, "timeoutMs", 1, MAX_TIMEOUT_MS),
      signal: requestSignal(node.stopping, reply),
    });
    return untilStopping(node.stopping, promote, "the promote was cut short");
  });

  app.get<{ Params: { name: string } }>("/v1/mirrors/:name/failover-preview", async (req) => {
    const q = fieldsOf(req.query);
    const admin = mirrorTarget(node, optionalString(q, "cluster"), req.principal, false).mirroring.admin;
    return { rows: await admin.previewFailover(req.params.name, requiredString(q, "topic")) };
  });

  app.get<{ Params: { name: string } }>("/v1/mirrors/:name/verify", async (req) => {
    const q = fieldsOf(req.query);
    return mirrorTarget(
      node,
      optionalString(q, "cluster"),
      req.principal,
      false,
    ).mirroring.admin.verifyMirror(req.params.name);
  });

  app.get("/v1/describe", async (req) => {
    const q = fieldsOf(req.query);
    const admin = mirrorTarget(node, optionalString(q, "cluster"), req.principal, false).mirroring.admin;
    const rows = await admin.describe(optionalString(q, "mirror") || undefined, {
      failedOnly: optionalBool(q, "failed"),
    });
    return { rows };
  });
}
