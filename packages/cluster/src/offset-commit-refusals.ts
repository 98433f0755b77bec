import { ClusterError } from "./errors";

/** Why the broker refuses an offset of a commit itself, before the group coordinator sees it. */
export interface OffsetRefusal {
  errorName: "TOPIC_AUTHORIZATION_FAILED" | "UNKNOWN_TOPIC_OR_PARTITION";
  /** What is wrong, as "topic 'gone' does not exist". */
  reason: string;
}

/** An offset of an OffsetCommit or TxnOffsetCommit that the broker refuses itself. */
export type RefusedOffset<T> = T & { refusal: OffsetRefusal };

/**
 * Splits a commit's offsets as KafkaApis.handleOffsetCommitRequest and handleTxnOffsetCommitRequest do,
 * once READ on the group was granted: an offset of a topic the principal may not READ is refused with
 * TOPIC_AUTHORIZATION_FAILED, one of a partition the cluster does not have with UNKNOWN_TOPIC_OR_PARTITION
 * (`refusal` says which, or undefined); the others are admitted, for the group coordinator. The refused
 * ones come in the order the response lists them: per topic, topics in the order they first appear (kafkajs
 * sends one entry per topic; Kafka's response builder adds them in request order, ahead of the
 * coordinator's answers). kafkajs throws the first partition error of the response: the first refused one.
 */
export function admitOffsets<T extends { topic: string; partition: number }>(
  offsets: readonly T[],
  refusal: (topic: string, partition: number) => OffsetRefusal | undefined,
): { admitted: T[]; refused: RefusedOffset<T>[] } {
  const topics = [...new Set(offsets.map((o) => o.topic))];
  const admitted: T[] = [];
  const refused: RefusedOffset<T>[] = [];
  for (const offset of topics.flatMap((topic) => offsets.filter((o) => o.topic === topic))) {
    const why = refusal(offset.topic, offset.partition);
    if (why === undefined) admitted.push(offset);
    else refused.push({ ...offset, refusal: why });
  }
  return { admitted, refused };
}

/**
 * The error a kafkajs user gets for a commit with refused offsets (the first refused one's, see
 * `admitOffsets`), saying how many were refused and why, and what became of the others (`rest`).
 * `verb` is the caller's: "Commit" for an OffsetCommit (the group keeps no offset), "Set" for an admin's
 * (the same), "Send" for a transaction's TxnOffsetCommit (the group gets none).
 */
export function refusedOffsetsError(
  refused: readonly RefusedOffset<unknown>[],
  {
    groupId,
    rest,
    verb,
    where = "",
  }: { groupId: string; rest: string; verb: "Commit" | "Set" | "Send"; where?: string },
): ClusterError {
  const first = refused[0]!;
  const unknown = refused.filter((r) => r.refusal.errorName === "UNKNOWN_TOPIC_OR_PARTITION").length;
  const unauthorized = refused.length - unknown;
  const counts = [
    unknown > 0 ? `${unknown} offset(s) of partitions the cluster does not have` : undefined,
    unauthorized > 0 ? `${unauthorized} offset(s) of topics the principal may not READ` : undefined,
  ].filter((part) => part !== undefined);
  const advice = unknown > 0 ? `. ${verb} offsets of existing partitions only` : "";
  return new ClusterError(
    first.refusal.errorName,
    `${where}${first.refusal.reason}: group '${groupId}' ${verb === "Send" ? "gets" : "keeps"} no offset for it (${counts.join(", ")}; ${rest})${advice}`,
  );
}
