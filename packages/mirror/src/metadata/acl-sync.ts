import type { AclBinding, Authorizer } from "@cluster-mirror/cluster";
import { InvalidMirrorConfigError } from "../admin/errors";
import type { NameFilter } from "../admin/mirror-config";

/** The mirror config that selects which ACL bindings a mirror syncs (the later KIP-1279 revision's name). */
export const ACLS_INCLUDE_CONFIG = "acls.include";

/**
 * One `acls.include` rule, `resourceType;resourceName;operation;permissionType;principal` (the later KIP
 * revision's format): each field `*` for any, the resource name a regex matched against the binding's whole
 * resource name (for a PREFIXED binding, its prefix).
 */
export interface AclIncludeRule {
  resourceType: "TOPIC" | "GROUP" | undefined;
  resourceName: RegExp | undefined;
  operation: string | undefined;
  permissionType: "ALLOW" | "DENY" | undefined;
  principal: string | undefined;
}

/** The rule `*`: every binding the mirror may sync at all. */
const ANY_RULE: AclIncludeRule = {
  resourceType: undefined,
  resourceName: undefined,
  operation: undefined,
  permissionType: undefined,
  principal: undefined,
};

const OPERATIONS = [
  "ALL",
  "READ",
  "WRITE",
  "CREATE",
  "DELETE",
  "ALTER",
  "DESCRIBE",
  "CLUSTER_ACTION",
  "DESCRIBE_CONFIGS",
  "ALTER_CONFIGS",
  "IDEMPOTENT_WRITE",
];

/**
 * Parses `acls.include`: rules separated by commas (so a rule's regex cannot contain one), `*` for every
 * binding, empty for none. Throws InvalidMirrorConfigError naming the rule and what is wrong with it.
 */
export function parseAclsInclude(value: string): AclIncludeRule[] {
  const rules: AclIncludeRule[] = [];
  for (const raw of value.split(",")) {
    const text = raw.trim();
    if (text === "") continue;
    if (text === "*") {
      rules.push(ANY_RULE);
      continue;
    }
    const fields = text.split(";").map((f) => f.trim());
    const bad = (why: string): never => {
      throw new InvalidMirrorConfigError(
        ACLS_INCLUDE_CONFIG,
        `${ACLS_INCLUDE_CONFIG} rule '${text}' ${why}. A rule is resourceType;resourceName;operation;permissionType;principal, each field * for any (e.g. TOPIC;orders.*;READ;ALLOW;*), rules separated by commas.`,
      );
    };
    if (fields.length !== 5) bad(`has ${fields.length} field(s), not 5`);
    const [type, name, operation, permission, principal] = fields as [string, string, string, string, string];
    const any = (f: string) => f === "*";
    const upper = (f: string) => f.toUpperCase();
    if (!any(type) && !["TOPIC", "GROUP"].includes(upper(type)))
      bad(`names resource type '${type}': a mirror syncs only TOPIC and GROUP bindings`);
    if (!any(operation) && !OPERATIONS.includes(upper(operation)))
      bad(`names operation '${operation}' (one of ${OPERATIONS.join(", ")})`);
    if (!any(permission) && !["ALLOW", "DENY"].includes(upper(permission)))
      bad(`names permission type '${permission}' (ALLOW or DENY)`);
    if (!any(principal) && !/^[^:]+:.+$/.test(principal)) bad(`names principal '${principal}' (Type:name)`);
    let regex: RegExp | undefined;
    if (!any(name)) {
      try {
        regex = new RegExp(`^(?:${name})$`);
      } catch (error) {
        bad(`has a resource name that is not a valid regex (${(error as Error).message})`);
      }
    }
    rules.push({
      resourceType: any(type) ? undefined : (upper(type) as "TOPIC" | "GROUP"),
      resourceName: regex,
      operation: any(operation) ? undefined : upper(operation),
      permissionType: any(permission) ? undefined : (upper(permission) as "ALLOW" | "DENY"),
      principal: any(principal) ? undefined : principal,
    });
  }
  return rules;
}

/** True when some `acls.include` rule admits the binding. */
export function aclIncluded(binding: AclBinding, rules: readonly AclIncludeRule[]): boolean {
  return rules.some(
    (r) =>
      (r.resourceType === undefined || r.resourceType === binding.resourceType) &&
      (r.resourceName === undefined || r.resourceName.test(binding.resourceName)) &&
      (r.operation === undefined || r.operation === binding.operation) &&
      (r.permissionType === undefined || r.permissionType === binding.permissionType) &&
      (r.principal === undefined || r.principal === binding.principal),
  );
}

/**
 * Which ACL bindings a mirror syncs (its "included rules"), before `acls.include`:
 * - TOPIC LITERAL bindings on one of the mirror's ACTIVE topics;
 * - TOPIC PREFIXED bindings whose prefix starts at least one of them (the usual `orders*` pattern: without
 *   it, clients lose access after a failover). Such a binding also reaches local topics of the destination
 *   with that prefix, as it does on the source;
 * - GROUP LITERAL bindings (not `*`) on a group that `groups.include`/`groups.exclude` admit, and GROUP
 *   PREFIXED bindings whose prefix they admit as a name.
 * The LITERAL `*` wildcard and CLUSTER and TRANSACTIONAL_ID bindings are never synced: they reach
 * resources the mirror does not own. `include` (parsed `acls.include`, default `*`) narrows this further.
 */
export function aclInScope(
  binding: AclBinding,
  topics: ReadonlySet<string>,
  groups: NameFilter,
  include: readonly AclIncludeRule[] = [ANY_RULE],
): boolean {
  const name = binding.resourceName;
  const prefixed = binding.patternType === "PREFIXED";
  if (!prefixed && binding.patternType !== "LITERAL") return false;
  let reaches: boolean;
  if (binding.resourceType === "TOPIC") {
    reaches = prefixed ? [...topics].some((t) => t.startsWith(name)) : topics.has(name);
  } else if (binding.resourceType === "GROUP") {
    reaches = (prefixed || name !== "*") && groups.matches(name);
  } else {
    reaches = false;
  }
  return reaches && aclIncluded(binding, include);
}

/** A stable identity of a binding. */
export function aclKey(b: AclBinding): string {
  return [
    b.resourceType,
    b.patternType,
    b.resourceName,
    b.principal,
    b.host,
    b.operation,
    b.permissionType,
  ].join("\u0000");
}

/** What one ACL reconcile did. */
export interface AclSyncResult {
  created: AclBinding[];
  deleted: AclBinding[];
}

/** What a mirror's ACL sync needs besides the source's bindings. */
export interface AclScope {
  /** The mirror that syncs: it owns what it creates (the destination's metadata log records the owner). */
  mirror: string;
  topics: ReadonlySet<string>;
  groups: NameFilter;
  /** Parsed `acls.include` (default: every binding in scope). */
  include?: readonly AclIncludeRule[];
}

/**
 * Reconciles the destination's ACLs with the source's for the bindings in scope ({@link aclInScope}):
 * creates the source's missing ones, owned by `scope.mirror`; adopts identical ones nobody owns (and
 * ones this mirror owns already); deletes the in-scope ones this mirror owns that vanished from the source
 * (a binding on a topic that failed over is out of scope and stays). Ownership is kept with each binding in the destination's metadata log, so a restart of the
 * engine or the node neither orphans a binding the mirror created (it is still deleted when the source
 * drops it) nor creates it twice. Bindings made locally on the destination, or owned by another mirror,
 * are never deleted.
 */
export function reconcileAcls(
  authorizer: Authorizer,
  sourceAcls: readonly AclBinding[],
  scope: AclScope,
): AclSyncResult {
  const inScope = (b: AclBinding) => aclInScope(b, scope.topics, scope.groups, scope.include);
  const wanted = new Map(sourceAcls.filter(inScope).map((b) => [aclKey(b), b]));
  const present = new Map(authorizer.describeAcls().map((b) => [aclKey(b), b]));
  const mine = (b: AclBinding) => authorizer.ownerOf(b) === scope.mirror;
  const created = [...wanted].filter(([k]) => !present.has(k)).map(([, b]) => b);
  // Present ones that nobody owns are adopted (the source has them too); another mirror's stay its own.
  const adopted = [...wanted]
    .filter(([k]) => present.has(k) && authorizer.ownerOf(present.get(k)!) === undefined)
    .map(([, b]) => b);
  if (created.length + adopted.length > 0)
    authorizer.createAcls([...created, ...adopted], { owner: scope.mirror });
  // Only in-scope ones: a binding on a topic that failed over (no longer ACTIVE) keeps serving its clients.
  const deleted = [...present].filter(([k, b]) => inScope(b) && mine(b) && !wanted.has(k)).map(([, b]) => b);
  if (deleted.length > 0) authorizer.deleteAcls(deleted);
  return { created, deleted };
}
