import type { AclBinding, Authorizer } from "@cluster-mirror/cluster";
import type { NameFilter } from "../admin/mirror-config";

/**
 * Which ACL bindings a mirror syncs (its "included rules"): LITERAL bindings on a TOPIC that is one of the
 * mirror's ACTIVE topics, and LITERAL bindings on a GROUP (not `*`) that `groups.include`/`groups.exclude`
 * admit. Wildcard and PREFIXED bindings, CLUSTER and TRANSACTIONAL_ID bindings are never synced: they reach
 * resources the mirror does not own.
 */
export function aclInScope(binding: AclBinding, topics: ReadonlySet<string>, groups: NameFilter): boolean {
  if (binding.patternType !== "LITERAL") return false;
  if (binding.resourceType === "TOPIC") return topics.has(binding.resourceName);
  if (binding.resourceType === "GROUP")
    return binding.resourceName !== "*" && groups.matches(binding.resourceName);
  return false;
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

/**
 * Reconciles the destination's ACLs with the source's for the bindings in scope ({@link aclInScope}):
 * creates the source's missing ones, and deletes the ones this mirror owns (`owned`: created or found
 * identical on the source by an earlier pass) that vanished from the source. Bindings made locally on the
 * destination are never deleted. `owned` is updated in place; it lives in memory, so a binding removed from
 * the source while no broker synced is left in place (the safe direction).
 */
export function reconcileAcls(
  authorizer: Authorizer,
  sourceAcls: readonly AclBinding[],
  owned: Set<string>,
  topics: ReadonlySet<string>,
  groups: NameFilter,
): AclSyncResult {
  const inScope = (b: AclBinding) => aclInScope(b, topics, groups);
  const wanted = new Map(sourceAcls.filter(inScope).map((b) => [aclKey(b), b]));
  const present = new Map(
    authorizer
      .describeAcls()
      .filter(inScope)
      .map((b) => [aclKey(b), b]),
  );
  const created = [...wanted].filter(([k]) => !present.has(k)).map(([, b]) => b);
  if (created.length > 0) authorizer.createAcls(created);
  for (const k of wanted.keys()) owned.add(k);
  const deleted = [...present].filter(([k]) => owned.has(k) && !wanted.has(k)).map(([, b]) => b);
  if (deleted.length > 0) authorizer.deleteAcls(deleted);
  for (const b of deleted) owned.delete(aclKey(b));
  return { created, deleted };
}
