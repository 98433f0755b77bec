import { type AclOperation, type AclResourceType, EmbeddedKafka } from "@cluster-mirror/cluster";
import type { NodeCluster } from "./mirror-node";

/** The name of the CLUSTER resource, as in Kafka. */
export const CLUSTER_RESOURCE = "kafka-cluster";

/**
 * Throws Kafka's *_AUTHORIZATION_FAILED (HTTP 403) unless `principal` may do `operation` on the resource in
 * `target`'s authorizer (always allowed while the authorizer is off). Checked before anything else a route
 * does, so an unauthorized caller learns nothing (not even whether a topic exists).
 */
export function authorize(
  target: NodeCluster,
  principal: string,
  operation: AclOperation,
  resourceType: AclResourceType,
  resourceName: string,
): void {
  target.cluster.authorizer.check({ principal, operation, resourceType, resourceName });
}

const clients = new WeakMap<NodeCluster, Map<string, NodeCluster>>();

/**
 * `target` as `principal` sees it: the same cluster with embedded clients that present that principal to
 * the authorizer (one per cluster and principal, so the console's cached producers stay per principal).
 */
export function asPrincipal(target: NodeCluster, principal: string): NodeCluster {
  let byPrincipal = clients.get(target);
  if (!byPrincipal) {
    byPrincipal = new Map();
    clients.set(target, byPrincipal);
  }
  let view = byPrincipal.get(principal);
  if (!view) {
    view = {
      ...target,
      kafka: new EmbeddedKafka(target.cluster, { clientId: `cluster-mirror-${target.name}`, principal }),
    };
    byPrincipal.set(principal, view);
  }
  return view;
}
