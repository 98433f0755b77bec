import { ClusterError } from "./errors";
import type { AclRecord, RemoveAclRecord } from "./metadata-records";

/** Resource types that ACLs protect. */
export type AclResourceType = "TOPIC" | "GROUP" | "CLUSTER" | "TRANSACTIONAL_ID";
/** How a binding's resource name matches: exactly (with "*" for all), or as a prefix. */
export type AclPatternType = "LITERAL" | "PREFIXED";
/** Operations, as in Kafka's AclOperation. */
export type AclOperation =
  | "ALL"
  | "READ"
  | "WRITE"
  | "CREATE"
  | "DELETE"
  | "ALTER"
  | "DESCRIBE"
  | "CLUSTER_ACTION"
  | "DESCRIBE_CONFIGS"
  | "ALTER_CONFIGS"
  | "IDEMPOTENT_WRITE";
/** Whether a binding allows or denies. */
export type AclPermissionType = "ALLOW" | "DENY";

/** One ACL: who may (or may not) do what on which resources. */
export interface AclBinding {
  resourceType: AclResourceType;
  resourceName: string;
  patternType: AclPatternType;
  /** e.g. `User:alice`, or `User:*` for everyone. */
  principal: string;
  /** Client host, or `*`. */
  host: string;
  operation: AclOperation;
  permissionType: AclPermissionType;
}

/**
 * A filter's pattern type, as Kafka's `PatternType` in DescribeAcls / DeleteAcls: a stored one (LITERAL,
 * PREFIXED), ANY (every pattern type, the resource name compared exactly) or MATCH (every binding that
 * applies to the named resource: the LITERAL one of that name, the LITERAL `*` and the PREFIXED ones whose
 * prefix starts the name, as `kafka-acls --list --resource-pattern-type match` shows them).
 */
export type AclPatternTypeFilter = AclPatternType | "ANY" | "MATCH";

/** A filter over bindings: every field left out matches anything ("ANY"). */
export type AclBindingFilter = Partial<Omit<AclBinding, "patternType">> & {
  patternType?: AclPatternTypeFilter;
};

/** Authorizer settings. */
export interface AuthorizerConfig {
  /** With false (the default, like a Kafka broker without `authorizer.class.name`), everything is allowed. */
  enabled: boolean;
  /** Principals allowed everything. */
  superUsers?: readonly string[];
  /** Kafka's `allow.everyone.if.no.acl.found` (default false). */
  allowEveryoneIfNoAclFound?: boolean;
}

/**
 * The principal of the cluster's own internal writes (a coordinator appending to its state topic), always
 * allowed, as a Kafka broker's inter-broker principal is a super user. Clients never act under it: who a
 * client is comes from its authentication (the node's admin API maps tokens to principals).
 */
export const INTERNAL_PRINCIPAL = "User:__internal";

/** The name of the CLUSTER resource, the only one a CLUSTER binding may have (Kafka's `Resource.CLUSTER_NAME`). */
export const CLUSTER_RESOURCE_NAME = "kafka-cluster";

/** A request to authorize. */
export interface AuthorizationRequest {
  principal: string;
  host?: string;
  operation: AclOperation;
  resourceType: AclResourceType;
  resourceName: string;
}

const OPERATIONS: readonly AclOperation[] = [
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
const RESOURCE_TYPES: readonly AclResourceType[] = ["TOPIC", "GROUP", "CLUSTER", "TRANSACTIONAL_ID"];

/** Operations whose ALLOW also allows DESCRIBE (or DESCRIBE_CONFIGS), as in Kafka's StandardAuthorizer. */
const IMPLIES: Partial<Record<AclOperation, readonly AclOperation[]>> = {
  DESCRIBE: ["READ", "WRITE", "DELETE", "ALTER"],
  DESCRIBE_CONFIGS: ["ALTER_CONFIGS"],
};

/** The `owner` of an ACL record that makes its binding no mirror's (mirror names are never empty). */
const DISOWNED = "";

/**
 * Kafka's StandardAuthorizer semantics: a matching DENY wins over any ALLOW; ALL matches every operation;
 * READ, WRITE, DELETE and ALTER imply DESCRIBE; ALTER_CONFIGS implies DESCRIBE_CONFIGS; with no binding on a
 * resource, only super users (or everyone, with `allowEveryoneIfNoAclFound`) are allowed.
 */
export class Authorizer {
  private readonly bindings: AclBinding[] = [];
  /** Binding key -> the cluster mirror that created or adopted it. */
  private readonly owners = new Map<string, string>();
  private config: AuthorizerConfig;
  private log: ((records: (AclRecord | RemoveAclRecord)[]) => void) | undefined;

  constructor(config: AuthorizerConfig = { enabled: false }) {
    this.config = config;
  }

  /** Replaces the settings (dynamic, no restart). */
  configure(config: AuthorizerConfig): void {
    this.config = config;
  }

  /**
   * Sends every later change through a metadata log (the cluster's controller) instead of applying it here:
   * the log persists it and hands it back through {@link apply}, so the bindings survive a restart.
   */
  attachLog(append: (records: (AclRecord | RemoveAclRecord)[]) => void): void {
    this.log = append;
  }

  /**
   * Adds bindings; an exact duplicate is kept once. With `owner` (a cluster mirror's name), the bindings are
   * marked as that mirror's, including ones that exist already (the mirror adopts them).
   */
  createAcls(bindings: readonly AclBinding[], options: { owner?: string } = {}): void {
    for (const b of bindings) validateBinding(b);
    const records: AclRecord[] = [];
    const seen = new Set<string>();
    for (const b of bindings) {
      const key = bindingKey(b);
      if (seen.has(key)) continue;
      seen.add(key);
      const exists = this.bindings.some((x) => sameBinding(x, b));
      if (exists && (options.owner === undefined || this.owners.get(key) === options.owner)) continue;
      records.push({
        type: "Acl",
        binding: copy(b),
        ...(options.owner === undefined ? {} : { owner: options.owner }),
      });
    }
    this.emit(records);
  }

  /** Removes every binding matching any filter; returns the removed bindings. */
  deleteAcls(filters: readonly AclBindingFilter[]): AclBinding[] {
    const removed = this.bindings.filter((b) => filters.some((f) => matchesFilter(b, f))).map(copy);
    this.emit(removed.map((binding) => ({ type: "RemoveAcl", binding })));
    return removed;
  }

  /** Applies one ACL record (from the metadata log, or directly when no log is attached). */
  apply(record: AclRecord | RemoveAclRecord): void {
    const key = bindingKey(record.binding);
    const at = this.bindings.findIndex((x) => sameBinding(x, record.binding));
    if (record.type === "RemoveAcl") {
      if (at >= 0) this.bindings.splice(at, 1);
      this.owners.delete(key);
      return;
    }
    if (at < 0) this.bindings.push(copy(record.binding));
    if (record.owner === DISOWNED) this.owners.delete(key);
    else if (record.owner !== undefined) this.owners.set(key, record.owner);
  }

  /**
   * Makes the bindings `owner` (a deleted cluster mirror) created or adopted the cluster's own: they stay,
   * owned by no mirror, so a mirror created again under that name does not take them for its own (and
   * delete them when its source lacks them), and another mirror may adopt them. Returns them.
   */
  disown(owner: string): AclBinding[] {
    const owned = this.bindings.filter((b) => this.owners.get(bindingKey(b)) === owner).map(copy);
    this.emit(owned.map((binding) => ({ type: "Acl", binding, owner: DISOWNED })));
    return owned;
  }

  /** The cluster mirror that created or adopted this binding, if any. */
  ownerOf(binding: AclBinding): string | undefined {
    return this.owners.get(bindingKey(binding));
  }

  private emit(records: (AclRecord | RemoveAclRecord)[]): void {
    if (records.length === 0) return;
    if (this.log) this.log(records);
    else for (const r of records) this.apply(r);
  }

  /** Bindings matching the filter. */
  describeAcls(filter: AclBindingFilter = {}): AclBinding[] {
    return this.bindings.filter((b) => matchesFilter(b, filter)).map((b) => ({ ...b }));
  }

  /** True if the request is allowed. */
  authorize(request: AuthorizationRequest): boolean {
    if (!this.config.enabled || request.principal === INTERNAL_PRINCIPAL) return true;
    if (this.config.superUsers?.includes(request.principal)) return true;
    const host = request.host ?? "*";
    const onResource = this.bindings.filter(
      (b) => b.resourceType === request.resourceType && resourceMatches(b, request.resourceName),
    );
    const applicable = onResource.filter(
      (b) =>
        (b.principal === request.principal || b.principal === "User:*") &&
        (b.host === "*" || b.host === host),
    );
    const denies = applicable.some(
      (b) => b.permissionType === "DENY" && (b.operation === "ALL" || b.operation === request.operation),
    );
    if (denies) return false;
    const allowedOps = [request.operation, ...(IMPLIES[request.operation] ?? [])];
    const allows = applicable.some(
      (b) => b.permissionType === "ALLOW" && (b.operation === "ALL" || allowedOps.includes(b.operation)),
    );
    if (allows) return true;
    return onResource.length === 0 && (this.config.allowEveryoneIfNoAclFound ?? false);
  }

  /**
   * Throws Kafka's authorization error for the resource type when the request is not allowed: the message
   * names the principal, the operation and the resource, and says which ACL would allow it.
   */
  check(request: AuthorizationRequest): void {
    if (this.authorize(request)) return;
    const name = {
      TOPIC: "TOPIC_AUTHORIZATION_FAILED",
      GROUP: "GROUP_AUTHORIZATION_FAILED",
      CLUSTER: "CLUSTER_AUTHORIZATION_FAILED",
      TRANSACTIONAL_ID: "TRANSACTIONAL_ID_AUTHORIZATION_FAILED",
    } as const;
    throw new ClusterError(
      name[request.resourceType],
      `${request.principal} may not ${request.operation} ${request.resourceType} '${request.resourceName}'; an ALLOW ACL for that operation (and no DENY) is needed`,
    );
  }
}

function resourceMatches(b: AclBinding, name: string): boolean {
  if (b.patternType === "PREFIXED") return name.startsWith(b.resourceName);
  return b.resourceName === "*" || b.resourceName === name;
}

/** Kafka's `AclBindingFilter.matches`: the resource pattern as `ResourcePatternFilter.matches`, the rest exactly. */
function matchesFilter(b: AclBinding, f: AclBindingFilter): boolean {
  const same = (k: Exclude<keyof AclBinding, "patternType" | "resourceName">) =>
    f[k] === undefined || f[k] === b[k];
  return (
    same("resourceType") &&
    same("principal") &&
    same("host") &&
    same("operation") &&
    same("permissionType") &&
    resourcePatternMatches(b, f.patternType, f.resourceName)
  );
}

function resourcePatternMatches(
  b: AclBinding,
  patternType: AclPatternTypeFilter | undefined,
  name: string | undefined,
): boolean {
  const type = patternType ?? "ANY";
  if (type !== "ANY" && type !== "MATCH" && type !== b.patternType) return false;
  if (name === undefined) return true;
  if (type !== "MATCH") return name === b.resourceName;
  // MATCH: the bindings that apply to the resource named `name`.
  return resourceMatches(b, name);
}

function sameBinding(a: AclBinding, b: AclBinding): boolean {
  return bindingKey(a) === bindingKey(b);
}

function bindingKey(b: AclBinding): string {
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

/** The binding's own fields only (callers may pass objects with more). */
function copy(b: AclBinding): AclBinding {
  return {
    resourceType: b.resourceType,
    resourceName: b.resourceName,
    patternType: b.patternType,
    principal: b.principal,
    host: b.host,
    operation: b.operation,
    permissionType: b.permissionType,
  };
}

function validateBinding(b: AclBinding): void {
  const problems: string[] = [];
  if (!RESOURCE_TYPES.includes(b.resourceType)) problems.push(`resource type '${b.resourceType}'`);
  if (!OPERATIONS.includes(b.operation)) problems.push(`operation '${b.operation}'`);
  if (b.patternType !== "LITERAL" && b.patternType !== "PREFIXED")
    problems.push(`pattern type '${b.patternType}'`);
  if (b.permissionType !== "ALLOW" && b.permissionType !== "DENY")
    problems.push(`permission '${b.permissionType}'`);
  if (!/^[^:]+:.+$/.test(b.principal))
    problems.push(`principal '${b.principal}' (use Type:name, e.g. User:alice)`);
  if (b.resourceName === "") problems.push("an empty resource name");
  // As Kafka's CreateAcls: the cluster is asked for under this one name, so any other would never apply.
  else if (b.resourceType === "CLUSTER" && b.resourceName !== CLUSTER_RESOURCE_NAME)
    problems.push(
      `CLUSTER resource name '${b.resourceName}' (the only valid name for the CLUSTER resource is ${CLUSTER_RESOURCE_NAME})`,
    );
  if (problems.length > 0) {
    throw new ClusterError("INVALID_REQUEST", `invalid ACL binding: ${problems.join(", ")}`);
  }
}
