import type { TopicPartition, TransactionMetadata } from "@cluster-mirror/cluster";

/** A producer id and epoch whose transaction a transaction coordinator will still end on a partition. */
export interface LiveTransaction {
  producerId: bigint;
  producerEpoch: number;
}

function names(partitions: readonly TopicPartition[], tp: TopicPartition): boolean {
  return partitions.some((p) => p.topic === tp.topic && p.partition === tp.partition);
}

/**
 * Which of a transaction coordinator's transactions (`TransactionCoordinator.listTransactions`, KIP-664's
 * ListTransactions and DescribeTransactions) will still end on `tp`: Ongoing ones that added it (their
 * EndTxn or timeout writes the marker), PrepareCommit/PrepareAbort ones that added it (their marker is
 * pending there, or was counted as written and their last end will name it), and ended ones whose last end
 * named it (the coordinator's housekeeping writes that marker again where the partition's leader still
 * holds the transaction open). Any other transaction open on the partition's log is hanging: its
 * coordinator ended it elsewhere, or never knew it (a source's producer).
 */
export function liveTransactionsOn(
  transactions: readonly TransactionMetadata[],
  tp: TopicPartition,
): LiveTransaction[] {
  const live: LiveTransaction[] = [];
  for (const t of transactions) {
    if (t.state === "Ongoing" && names(t.partitions, tp)) {
      live.push({ producerId: t.producerId, producerEpoch: t.producerEpoch });
    } else if ((t.state === "PrepareCommit" || t.state === "PrepareAbort") && names(t.partitions, tp)) {
      // Every partition of the transaction, not only those whose marker is pending: a marker counted as
      // written (skipped on a read-only mirror partition, or lost with its leader) leaves the transaction
      // open there, and the end it completes into names all of them (the housekeeping writes it again).
      live.push({ producerId: t.producerId, producerEpoch: t.producerEpoch });
    } else if (
      (t.state === "CompleteCommit" || t.state === "CompleteAbort") &&
      t.lastEnd !== undefined &&
      names(t.lastEnd.partitions, tp)
    ) {
      live.push({ producerId: t.lastEnd.producerId, producerEpoch: t.lastEnd.producerEpoch });
    }
  }
  return live;
}

/**
 * Whether a transaction open on a partition's log (`producerId` at `producerEpoch`) is one of `live`: a
 * marker at that epoch or a later one of the producer ends it.
 */
export function isLive(live: readonly LiveTransaction[], open: LiveTransaction): boolean {
  return live.some((l) => l.producerId === open.producerId && l.producerEpoch >= open.producerEpoch);
}
