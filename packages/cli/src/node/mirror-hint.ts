import { UnknownMirrorError } from "@cluster-mirror/mirror";
import { KafkaError } from "@cluster-mirror/protocol";
import type { MirrorNode } from "./mirror-node";
import { authorize, CLUSTER_RESOURCE } from "./route-auth";

/**
 * An UNKNOWN_MIRROR error with where the mirror is on this node, when another of its clusters has it: a
 * failback mirror lives on the old primary (`--cluster primary`), and forgetting `--cluster` answered only
 * "does not exist". Only clusters `principal` may DESCRIBE are named. Any other error is returned as is.
 */
export function withMirrorLocation(error: unknown, node: MirrorNode, principal: string): unknown {
  if (!(error instanceof UnknownMirrorError)) return error;
  const holders = node.clusters().filter((c) => {
    try {
      authorize(c, principal, "DESCRIBE", "CLUSTER", CLUSTER_RESOURCE);
    } catch {
      return false;
    }
    return c.mirroring.admin.listMirrors().some((m) => m.name === error.mirror);
  });
  const holder = holders[0];
  if (holder === undefined) return error;
  const how =
    holder === node.destination
      ? `leave --cluster out (or pass --cluster ${holder.name})`
      : `pass --cluster ${holder.name}`;
  return new KafkaError(
    error.errorName,
    error.code,
    error.retriable,
    `${error.message} This node has mirror '${error.mirror}' on cluster ${holder.name}: ${how}.`,
    { cause: error },
  );
}
