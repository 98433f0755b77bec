import type { KafkaCluster } from "@cluster-mirror/cluster";
import { encodeRecordBatch, KafkaError } from "@cluster-mirror/protocol";
import type { Violation } from "./violation";

/**
 * Read-only until STOPPED (spec §5): a produce (acks=1, no producer id) straight to the leader of a mirror
 * partition that is not STOPPED must be refused. Any acknowledgement is a violation (and corrupts the
 * mirror, which the offset-identity check then reports too). Refusals other than READ_ONLY_TOPIC (no
 * leader, broker down) are not violations.
 */
export async function probeReadOnly(
  label: string,
  cluster: KafkaCluster,
  topic: string,
  partition: number,
  state: string,
): Promise<Violation[]> {
  const meta = cluster.controller.image.partition(topic, partition);
  const broker = meta && meta.leader >= 0 ? cluster.broker(meta.leader) : undefined;
  if (!broker) return [];
  const batch = encodeRecordBatch({
    baseTimestamp: BigInt(cluster.clock.now()),
    records: [
      {
        attributes: 0,
        offsetDelta: 0,
        timestampDelta: 0n,
        key: null,
        value: Buffer.from("probe"),
        headers: [],
      },
    ],
  });
  try {
    const r = await broker.produce({ topic, partition, batch, acks: 1 });
    return [
      {
        invariant: "read-only",
        message: `${label} ${topic}-${partition}: a produce was accepted at offset ${r.baseOffset} while the mirror partition is ${state}`,
      },
    ];
  } catch (error) {
    if (error instanceof KafkaError) return [];
    throw error;
  }
}

/**
 * A re-add keeps its topic read-only from its `mirror.name` on (spec §5): the controller sets the flag in the
 * same metadata batch, and nothing may clear it while `mirror.name` still asks for mirroring, even before the
 * re-add's START (a coordinator that loads the STOPPED partition again runs STOPPED's clear). Checked on
 * every metadata record from now on, not between steps: such a window can last a millisecond, and produces
 * landing in it are local writes the re-add then truncates unchecked.
 */
export function watchReadOnlyClears(
  node: string,
  cluster: KafkaCluster,
  report: (violations: readonly Violation[]) => void,
): () => void {
  return cluster.controller.subscribe(({ record }) => {
    if (record.type !== "MirrorReadOnly" || record.readOnly) return;
    const topic = cluster.controller.image.topicsById.get(record.topicId);
    const mirrorName = topic?.configs.get("mirror.name");
    if (topic === undefined || mirrorName === undefined || mirrorName.endsWith(".removed")) return;
    report([
      {
        invariant: "read-only",
        message: `${node} ${topic.name}-${record.partition}: the read-only flag was cleared while mirror.name=${mirrorName} asks for mirroring`,
      },
    ]);
  }, cluster.controller.metadataLog().length);
}
