import type { KafkaCluster } from "@cluster-mirror/cluster";
import {
  MIRROR_STATE_TOPIC,
  mirrorStatePartitionFor,
  type PartitionTransition,
} from "@cluster-mirror/mirror";
import {
  decodeRecords,
  encodeMirrorPartitionStateValue,
  encodeMirrorStateKey,
  type RecordBatch,
} from "@cluster-mirror/protocol";
import type { Violation } from "./violation";

/**
 * A committed transition is durable (spec §6: the coordinator acknowledges a state only once its
 * `__mirror_state` append is replicated, acks=all): checked synchronously at the moment the coordinator
 * applies the commit, that is, the moment `describe`, an admin command's answer or the actor's next
 * effect can see it, not only between simulation steps. The transition's `MirrorPartitionState` record
 * (its key and exact value bytes) must be in the log of every running member of the ISR of the
 * `__mirror_state` partition that owns it: if the leader crashed now, whichever ISR member took over would
 * still have it. A coordinator that acknowledges on the leader's local append (acks=1) breaks this before
 * its followers fetch (a follower with a slow disk fetches again only after its fsync).
 */
export function checkDurableTransition(
  label: string,
  cluster: KafkaCluster,
  transition: PartitionTransition,
): Violation[] {
  const topic = cluster.controller.image.topic(MIRROR_STATE_TOPIC);
  if (!topic) return [];
  const { key } = transition;
  const statePartition = mirrorStatePartitionFor(key, topic.partitions.length);
  const meta = cluster.controller.image.partition(MIRROR_STATE_TOPIC, statePartition);
  if (!meta) return [];
  const recordKey = encodeMirrorStateKey({
    kind: "MirrorPartitionState",
    mirrorName: key.mirror,
    topicId: key.topicId,
    partition: key.partition,
  });
  const value = encodeMirrorPartitionStateValue(transition.record);
  const missing: string[] = [];
  for (const id of meta.isr) {
    const log = cluster.broker(id)?.replica(MIRROR_STATE_TOPIC, statePartition)?.log;
    // A crashed or cut-off ISR member cannot be checked now; the running ones must all have it.
    if (!log) continue;
    if (!holdsRecord(log.batches(), recordKey, value))
      missing.push(`broker ${id} (log end ${log.logEndOffset})`);
  }
  if (missing.length === 0) return [];
  const r = transition.record;
  return [
    {
      invariant: "durable-commit",
      message: `${label} ${key.mirror} ${key.topic}-${key.partition}: the coordinator committed ${transition.previous.state} -> ${r.state} (state epoch ${r.stateEpoch}, on ${transition.event.type}) but ISR member(s) ${missing.join(", ")} of ${MIRROR_STATE_TOPIC}-${statePartition} (leader ${meta.leader}, ISR [${meta.isr.join(",")}]) do not hold its record: acknowledged before it was replicated`,
    },
  ];
}

/** Whether a record with exactly this key and value is among `batches` (the newest is looked at first). */
function holdsRecord(batches: Iterable<RecordBatch>, key: Buffer, value: Buffer): boolean {
  const all = [...batches];
  for (let i = all.length - 1; i >= 0; i--) {
    const b = all[i]!;
    if (b.isControl) continue;
    for (const r of decodeRecords(b)) {
      if (r.key !== null && r.value !== null && key.equals(r.key) && value.equals(r.value)) return true;
    }
  }
  return false;
}
