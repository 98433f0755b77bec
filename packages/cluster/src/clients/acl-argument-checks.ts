import { ClusterError } from "../errors";
import { shownValue } from "../shown-value";

const STRING_FIELDS = ["principal", "host", "resourceName"] as const;

/**
 * The `acl` of `admin.createAcls`, as kafkajs checks it (its messages, then what to pass): without a
 * principal, host or resource name the binding was stored with `undefined` in it; `createAcls()` failed
 * with a bare TypeError.
 */
export function checkCreateAclsArguments(args: unknown): void {
  const refuse = (what: string) => new ClusterError("INVALID_REQUEST", `admin.createAcls(args): ${what}`);
  const acl = (args as { acl?: unknown } | null | undefined)?.acl;
  if (!Array.isArray(acl)) {
    throw refuse(
      `Invalid ACL array ${shownValue(acl)}: pass { acl: [{ resourceType, resourceName: "orders", resourcePatternType, principal: "User:alice", host: "*", operation, permissionType }] }`,
    );
  }
  if (acl.length === 0) throw refuse("Empty ACL array: give the ACLs to create");
  acl.forEach((entry: unknown, index) => {
    for (const field of STRING_FIELDS) {
      const value = (entry as Record<string, unknown> | null | undefined)?.[field];
      if (typeof value !== "string") {
        throw refuse(
          `Invalid ACL array, the ${field}s have to be a valid string: acl[${index}].${field} is ${shownValue(value)}${field === "host" ? ' (use "*" for any host)' : ""}`,
        );
      }
    }
  });
}

/**
 * A filter of `admin.describeAcls(filter)` or `deleteAcls({ filters })`, as kafkajs checks it: its
 * principal, host and resource name are strings, or left out (null too) to match any; `describeAcls()`
 * failed with a bare TypeError.
 */
export function checkAclFilter(filter: unknown, where: string): void {
  if (typeof filter !== "object" || filter === null || Array.isArray(filter)) {
    throw new ClusterError(
      "INVALID_REQUEST",
      `${where}: an ACL filter is an object such as { resourceType: AclResourceTypes.ANY, resourcePatternType: ResourcePatternTypes.ANY, operation: AclOperationTypes.ANY, permissionType: AclPermissionTypes.ANY }, got ${shownValue(filter)}`,
    );
  }
  for (const field of STRING_FIELDS) {
    const value = (filter as Record<string, unknown>)[field];
    if (value !== undefined && value !== null && typeof value !== "string") {
      throw new ClusterError(
        "INVALID_REQUEST",
        `${where}: Invalid ${field}, the ${field} have to be a valid string (or left out to match any), got ${shownValue(value)}`,
      );
    }
  }
}

/** The `filters` of `admin.deleteAcls`, as kafkajs checks them ("Invalid ACL Filter array"). */
export function checkDeleteAclsArguments(args: unknown): void {
  const where = "admin.deleteAcls(args)";
  const filters = (args as { filters?: unknown } | null | undefined)?.filters;
  if (!Array.isArray(filters) || filters.length === 0) {
    throw new ClusterError(
      "INVALID_REQUEST",
      `${where}: ${Array.isArray(filters) ? "Empty ACL Filter array" : `Invalid ACL Filter array ${shownValue(filters)}`}: pass { filters: [{ resourceType, resourceName: "orders", ... }] }`,
    );
  }
  filters.forEach((filter: unknown, index) => {
    checkAclFilter(filter, `${where}: filters[${index}]`);
  });
}
