import { type AclBinding, type AclBindingFilter, AdminHandler } from "@cluster-mirror/cluster";
import type { FastifyInstance } from "fastify";
import { BadRequestError } from "./http-errors";
import type { MirrorNode } from "./mirror-node";
import { fieldsOf, optionalString } from "./request-fields";

const BINDING_FIELDS = [
  "resourceType",
  "resourceName",
  "patternType",
  "principal",
  "host",
  "operation",
  "permissionType",
] as const;

/**
 * The ACL routes (Kafka's CreateAcls / DescribeAcls / DeleteAcls, as `kafka-acls.sh` uses them), on the
 * destination or a named embedded cluster, authorized as Kafka does: ALTER on the CLUSTER to change ACLs,
 * DESCRIBE to list them.
 * - `GET /v1/acls?cluster=&<binding fields>` -> `{acls}`: the bindings matching the fields given (a filter as
 *   DescribeAcls takes it; patternType also ANY or MATCH), all without any;
 * - `POST /v1/acls {cluster?, acls: [binding]}` -> `{created}` (a binding: resourceType TOPIC|GROUP|CLUSTER|
 *   TRANSACTIONAL_ID, resourceName, patternType LITERAL|PREFIXED (default LITERAL), principal `User:x`,
 *   host (default `*`), operation, permissionType ALLOW|DENY (default ALLOW));
 * - `POST /v1/acls/delete {cluster?, filters: [partial binding]}` -> `{deleted}`.
 */
export function registerAclRoutes(app: FastifyInstance, node: MirrorNode): void {
  const handlerOf = (cluster: string | undefined) => new AdminHandler(node.cluster(cluster).cluster);
  app.get("/v1/acls", async (req) => {
    const { cluster, ...query } = fieldsOf(req.query);
    return {
      acls: handlerOf(optionalString({ cluster }, "cluster")).describeAcls(
        { principal: req.principal },
        filter(query, "the query"),
      ),
    };
  });
  app.post("/v1/acls", async (req) => {
    const body = fieldsOf(req.body);
    const acls = listOf(body, "acls").map((raw, i) => binding(raw, i));
    handlerOf(optionalString(body, "cluster")).createAcls({ principal: req.principal }, acls);
    return { created: acls };
  });
  app.post("/v1/acls/delete", async (req) => {
    const body = fieldsOf(req.body);
    const filters = listOf(body, "filters").map((raw, i) => filter(raw, `filters[${i}]`));
    const deleted = handlerOf(optionalString(body, "cluster")).deleteAcls(
      { principal: req.principal },
      filters,
    );
    return { deleted: deleted.flat() };
  });
}

function listOf(body: Record<string, unknown>, name: string): Record<string, unknown>[] {
  const list = body[name];
  if (!Array.isArray(list) || list.length === 0) {
    throw new BadRequestError(`field '${name}' must be a non-empty array of ACL objects`);
  }
  return list.map((item, i) => {
    if (typeof item !== "object" || item === null || Array.isArray(item))
      throw new BadRequestError(`${name}[${i}] must be an object`);
    return item as Record<string, unknown>;
  });
}

/** A filter (DescribeAcls' or DeleteAcls'): the binding fields given, each a string; `where` names it in errors. */
function filter(raw: Record<string, unknown>, where: string): AclBindingFilter {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(raw)) {
    if (!(BINDING_FIELDS as readonly string[]).includes(k))
      throw new BadRequestError(`${where} has unknown field '${k}' (fields: ${BINDING_FIELDS.join(", ")})`);
    if (typeof v !== "string") throw new BadRequestError(`${where}: field '${k}' must be a string`);
    out[k] = v;
  }
  return out as AclBindingFilter;
}

/** A binding from JSON with Kafka's defaults; the authorizer validates the values (INVALID_REQUEST). */
function binding(raw: Record<string, unknown>, i: number): AclBinding {
  const f = filter(raw, `acls[${i}]`) as Partial<AclBinding>;
  for (const k of ["resourceType", "resourceName", "principal", "operation"] as const) {
    if (f[k] === undefined) throw new BadRequestError(`acls[${i}] needs '${k}'`);
  }
  return {
    resourceType: f.resourceType!,
    resourceName: f.resourceName!,
    patternType: f.patternType ?? "LITERAL",
    principal: f.principal!,
    host: f.host ?? "*",
    operation: f.operation!,
    permissionType: f.permissionType ?? "ALLOW",
  };
}
