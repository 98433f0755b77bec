import type { Broker } from "@cluster-mirror/cluster";
import { RecordBatch } from "@cluster-mirror/protocol";

/**
 * Stores a transactional batch on a source partition's leader as its log keeps one a transactional
 * producer sent (at the log end, with the leader's epoch), without a transaction coordinator: the tests
 * pick their own producer ids, and a produce of a transactional batch needs a transactional id the
 * coordinator verifies (Kafka answers TRANSACTIONAL_ID_AUTHORIZATION_FAILED without one). Returns its
 * base offset.
 */
export function appendSourceTransactional(
  leader: Broker,
  topic: string,
  partition: number,
  batch: Buffer,
): bigint {
  const replica = leader.replica(topic, partition);
  if (!replica) throw new Error(`broker ${leader.brokerId} hosts no ${topic}-${partition}`);
  const stored = new RecordBatch(Buffer.from(batch));
  stored.setBaseOffset(replica.log.logEndOffset);
  stored.setPartitionLeaderEpoch(replica.leaderEpoch);
  return leader.appendAsIs(topic, partition, stored.buffer).firstOffset!;
}
