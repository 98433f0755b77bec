import type { AclBinding, AclOperation, AclPatternType, AclResourceType } from "@cluster-mirror/cluster";

/**
 * Kafka's numeric ACL enums (org.apache.kafka.common.acl / resource) as DescribeAcls carries them, and the
 * filter that matches every binding.
 */
const RESOURCE_TYPES: Record<number, AclResourceType> = {
  2: "TOPIC",
  3: "GROUP",
  4: "CLUSTER",
  5: "TRANSACTIONAL_ID",
};
const PATTERN_TYPES: Record<number, AclPatternType> = { 3: "LITERAL", 4: "PREFIXED" };
const OPERATIONS: Record<number, AclOperation> = {
  2: "ALL",
  3: "READ",
  4: "WRITE",
  5: "CREATE",
  6: "DELETE",
  7: "ALTER",
  8: "DESCRIBE",
  9: "CLUSTER_ACTION",
  10: "DESCRIBE_CONFIGS",
  11: "ALTER_CONFIGS",
  12: "IDEMPOTENT_WRITE",
};
const PERMISSIONS: Record<number, AclBinding["permissionType"]> = { 2: "DENY", 3: "ALLOW" };

/** DescribeAcls filter: ANY (1) for every enum, null names: every binding. */
export const DESCRIBE_ALL_ACLS = {
  resourceType: 1,
  resourceName: null,
  resourcePatternType: 1,
  principal: null,
  host: null,
  operation: 1,
  permissionType: 1,
};

/** One DescribeAcls entry as a binding, or undefined for kinds the embedded model has no name for. */
export function aclBindingOf(
  resource: { resourceType: number; resourceName: string; resourcePatternType: number },
  acl: { principal: string; host: string; operation: number; permissionType: number },
): AclBinding | undefined {
  const resourceType = RESOURCE_TYPES[resource.resourceType];
  const patternType = PATTERN_TYPES[resource.resourcePatternType];
  const operation = OPERATIONS[acl.operation];
  const permissionType = PERMISSIONS[acl.permissionType];
  if (!resourceType || !patternType || !operation || !permissionType) return undefined;
  return {
    resourceType,
    resourceName: resource.resourceName,
    patternType,
    principal: acl.principal,
    host: acl.host,
    operation,
    permissionType,
  };
}
