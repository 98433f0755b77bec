import type { AclBinding, AclOperation } from "@cluster-mirror/cluster";
import { connectNode, type NodeConnectionFlags } from "../client/node-token";
import { UsageError } from "./cli-errors";

/** Flags of `cluster-mirror acls` (named after Kafka's kafka-acls.sh). */
export interface AclsFlags extends NodeConnectionFlags {
  cluster?: string;
  add?: boolean;
  list?: boolean;
  remove?: boolean;
  allowPrincipal?: string;
  denyPrincipal?: string;
  operation: string[];
  topic?: string;
  group?: string;
  transactionalId?: string;
  clusterResource?: boolean;
  resourcePatternType: string;
  host: string;
}

/** Kafka's ACL operations; a Record over the type, so a new operation cannot be left out here. */
const OPERATIONS = Object.keys({
  ALL: true,
  READ: true,
  WRITE: true,
  CREATE: true,
  DELETE: true,
  ALTER: true,
  DESCRIBE: true,
  CLUSTER_ACTION: true,
  DESCRIBE_CONFIGS: true,
  ALTER_CONFIGS: true,
  IDEMPOTENT_WRITE: true,
} satisfies Record<AclOperation, true>);

/** One binding as a line: `ALLOW User:alice WRITE on TOPIC PREFIXED 'orders-' from host *`. */
export function formatAcl(b: AclBinding): string {
  return `${b.permissionType} ${b.principal} ${b.operation} on ${b.resourceType} ${b.patternType} '${b.resourceName}' from host ${b.host}`;
}

/**
 * `cluster-mirror acls --add|--list|--remove`: ACL bindings of a cluster of the node, enforced when the
 * node runs with its authorizer on (`--principals` or `--authorizer on`).
 */
export async function runAcls(flags: AclsFlags, out: (text: string) => void): Promise<void> {
  const actions = (["add", "list", "remove"] as const).filter((a) => flags[a] === true);
  if (actions.length !== 1) throw new UsageError("use exactly one of --add, --list, --remove");
  const client = connectNode(flags);
  const where = flags.cluster ?? "the destination";
  // As kafka-acls.sh: a binding is added with a stored pattern type; --list and --remove also take the
  // filter types ANY (every pattern type, the name exactly) and MATCH (every binding that applies to the name).
  const pattern = flags.resourcePatternType.toUpperCase();
  const patterns = actions[0] === "add" ? ["LITERAL", "PREFIXED"] : ["LITERAL", "PREFIXED", "ANY", "MATCH"];
  if (!patterns.includes(pattern)) {
    throw new UsageError(
      `--resource-pattern-type must be ${patterns
        .map((p) => p.toLowerCase())
        .join(", ")
        .replace(
          /, (\w+)$/,
          " or $1",
        )}${actions[0] === "add" ? " with --add" : ""}, got '${flags.resourcePatternType}'`,
    );
  }
  const resources = [
    flags.topic === undefined ? undefined : ["TOPIC", flags.topic],
    flags.group === undefined ? undefined : ["GROUP", flags.group],
    flags.transactionalId === undefined ? undefined : ["TRANSACTIONAL_ID", flags.transactionalId],
    flags.clusterResource ? ["CLUSTER", "kafka-cluster"] : undefined,
  ].filter((r): r is string[] => r !== undefined);
  if (resources.length > 1)
    throw new UsageError("give one resource: --topic, --group, --transactional-id or --cluster-resource");
  if (flags.allowPrincipal !== undefined && flags.denyPrincipal !== undefined) {
    throw new UsageError("--allow-principal and --deny-principal cannot be used together");
  }
  const principal = flags.allowPrincipal ?? flags.denyPrincipal;
  const permissionType = flags.denyPrincipal !== undefined ? "DENY" : "ALLOW";
  const operations = flags.operation.map((o) => o.toUpperCase());
  const unknown = operations.find((o) => !OPERATIONS.includes(o));
  if (unknown !== undefined) {
    throw new UsageError(
      `--operation ${unknown} is not an ACL operation; use one of ${OPERATIONS.join(", ")}`,
    );
  }
  const badPrincipal = [flags.allowPrincipal, flags.denyPrincipal].find(
    (p) => p !== undefined && !/^[^:]+:.+$/.test(p),
  );
  if (badPrincipal !== undefined) {
    throw new UsageError(
      `principal '${badPrincipal}' is not Type:name; use e.g. User:alice (User:* for everyone)`,
    );
  }
  if (actions[0] === "add") {
    if (resources.length === 0)
      throw new UsageError(
        "--add needs a resource: --topic, --group, --transactional-id or --cluster-resource",
      );
    if (principal === undefined)
      throw new UsageError("--add needs --allow-principal User:NAME or --deny-principal User:NAME");
    if (operations.length === 0)
      throw new UsageError("--add needs --operation (e.g. --operation WRITE; repeatable)");
    const [resourceType, resourceName] = resources[0]!;
    const acls = operations.map((operation) => ({
      resourceType,
      resourceName,
      patternType: pattern,
      principal,
      host: flags.host,
      operation,
      permissionType,
    }));
    const { created } = await client.post<{ created: AclBinding[] }>("/v1/acls", {
      cluster: flags.cluster,
      acls,
    });
    out(
      `Added ${created.length} ACL binding(s) to ${where}:\n${created.map((b) => `  ${formatAcl(b)}\n`).join("")}`,
    );
    return;
  }
  // --list and --remove: every flag given narrows the filter; one filter per --operation (or any operation).
  const base: Record<string, string> = {};
  if (resources[0]) [base.resourceType, base.resourceName] = resources[0] as [string, string];
  if (resources[0] || pattern !== "LITERAL") base.patternType = pattern;
  if (principal !== undefined) {
    base.principal = principal;
    base.permissionType = permissionType;
  }
  if (flags.host !== "*") base.host = flags.host;
  const filters = operations.length === 0 ? [base] : operations.map((operation) => ({ ...base, operation }));
  if (actions[0] === "list") {
    const acls: AclBinding[] = [];
    for (const filter of filters) {
      const answer = await client.get<{ acls: AclBinding[] }>("/v1/acls", {
        cluster: flags.cluster,
        ...filter,
      });
      acls.push(...answer.acls);
    }
    const narrowed = Object.keys(filters[0] ?? {}).length > 0 ? " matching the flags given" : "";
    out(acls.map((b) => `${formatAcl(b)}\n`).join("") || `No ACL bindings${narrowed} on ${where}.\n`);
    return;
  }
  if (Object.keys(base).length === 0 && operations.length === 0) {
    throw new UsageError(
      "--remove needs at least a resource, a principal or an --operation (it would remove every ACL)",
    );
  }
  const { deleted } = await client.post<{ deleted: AclBinding[] }>("/v1/acls/delete", {
    cluster: flags.cluster,
    filters,
  });
  out(
    `Removed ${deleted.length} ACL binding(s) from ${where}${deleted.map((b) => `\n  ${formatAcl(b)}`).join("")}\n`,
  );
}
