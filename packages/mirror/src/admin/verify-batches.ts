import { type KafkaCluster, type Scheduler, sleep } from "@cluster-mirror/cluster";
import { KafkaError, type RecordBatch, recordBatches } from "@cluster-mirror/protocol";
import type { SourceCluster, SourceTopicInfo } from "../ports";
import {
  check,
  counted,
  leader,
  MAX_LISTED,
  partitionCount,
  sourcePartition,
  type VerifyCheck,
} from "./verify-common";
import { compareLatestByKey, latestCommittedByKey } from "./verify-compacted";

/** Largest fetch of one verify round trip. */
const FETCH_BYTES = 4 * 1024 * 1024;

/**
 * The batches check of `verifyMirror`: every destination batch below the destination's high watermark
 * equals, byte for byte, the source's batch at the same base offset, and every source batch there (from the
 * later of both log starts) is in the destination; a compacted partition whose cleaner rewrote one side is
 * compared by the latest committed record of each key instead (`verify-compacted.ts`).
 */
export async function batchesCheck(
  destination: KafkaCluster,
  source: SourceCluster,
  topics: readonly string[],
  sourceTopics: ReadonlyMap<string, SourceTopicInfo>,
): Promise<VerifyCheck> {
  const diffs: string[] = [];
  let partitions = 0;
  let compared = 0;
  let byKey = 0;
  for (const topic of topics) {
    const compacted = isCompacted(destination, topic);
    for (let p = 0; p < partitionCount(destination, topic); p++) {
      partitions++;
      const log = leader(destination, topic, p);
      if (!log) {
        diffs.push(`${topic}-${p}: no running leader on the destination`);
        continue;
      }
      const hw = log.highWatermark;
      // The source asked only about partitions it described with a leader: ListOffsets of any other throws,
      // and one partition must not cost the verdict on all the others.
      const described = sourcePartition(sourceTopics, topic, p);
      if (!described || described.leaderId < 0) {
        if (log.logStartOffset < hw)
          diffs.push(`${topic}-${p}: ${described ? "the source has no leader for it" : "not on the source"}`);
        continue;
      }
      let leaderId = described.leaderId;
      // Below the source's log start the source has nothing to compare with, and below the destination's
      // this one holds nothing by design (the offsets check reports either start that differs).
      const sourceStart = await source.listOffsets(topic, p, -2n);
      const from = sourceStart > log.logStartOffset ? sourceStart : log.logStartOffset;
      const mine = [...log.batches()].filter((b) => b.lastOffset < hw && b.lastOffset >= sourceStart);
      const mineBases = new Set(mine.map((b) => b.baseOffset));
      // The source is walked from the start both hold up to the destination's high watermark, not only
      // at the destination's batches: a batch missing here (a gap in the copy) must show as a difference.
      // A compacted topic's walk goes on to the source's high watermark: a key written again above the
      // copy's is the copy's lag, not a difference, should the batches be compared by key (below).
      const limit = compacted ? maxOf(hw, await source.listOffsets(topic, p, -1n)) : hw;
      const partDiffs: string[] = [];
      const theirAll: RecordBatch[] = [];
      let complete = true;
      let i = 0;
      let at = from;
      while (at < limit) {
        // A fetch at an offset inside a batch (a log start moved by DeleteRecords) answers the whole batch.
        let theirs = await fetchBatches(source, destination.scheduler, leaderId, topic, p, at);
        // The source's leader moved since it was described (a leader election, a broker restarting): ask the
        // new one, as a consumer would, rather than report a difference that is not there.
        for (let retry = 0; leaderMoved(theirs) && retry < LEADER_RETRIES; retry++) {
          const now = (await source.partitionLeaders([topic])).find((x) => x.partition === p)?.leaderId;
          if (now === undefined || now < 0) break;
          leaderId = now;
          theirs = await fetchBatches(source, destination.scheduler, leaderId, topic, p, at);
        }
        if (theirs instanceof Error) {
          partDiffs.push(`${topic}-${p}: the source refused the fetch at offset ${at}: ${theirs.message}`);
          complete = false;
          break;
        }
        if (theirs.length === 0) {
          if (at >= hw) break;
          const left = mine.length - i;
          partDiffs.push(
            left > 0
              ? `${topic}-${p}: ${left} batch(es) from offset ${mine[i]!.baseOffset} not on the source`
              : `${topic}-${p}: the source holds nothing from offset ${at}, the destination up to ${hw}`,
          );
          break;
        }
        const end = theirs[theirs.length - 1]!.lastOffset + 1n;
        if (end <= at) {
          // Nothing at or after the offset asked for: a source answering so would never move on.
          partDiffs.push(`${topic}-${p}: the source answered no batch at or after offset ${at}`);
          complete = false;
          break;
        }
        if (compacted) for (const b of theirs) theirAll.push(b.batch);
        const byBase = new Map(theirs.map((b) => [b.baseOffset, b.buffer]));
        for (; i < mine.length && mine[i]!.baseOffset < end; i++) {
          const batch = mine[i]!;
          const other = byBase.get(batch.baseOffset);
          compared++;
          if (!other) partDiffs.push(`${topic}-${p}: batch at offset ${batch.baseOffset} not on the source`);
          else if (!other.equals(batch.buffer))
            partDiffs.push(`${topic}-${p}: batch at offset ${batch.baseOffset} differs`);
        }
        for (const b of theirs) {
          if (b.baseOffset < hw && b.lastOffset >= at && !mineBases.has(b.baseOffset))
            partDiffs.push(`${topic}-${p}: batch at offset ${b.baseOffset} of the source missing here`);
        }
        at = end;
      }
      if (!compacted || !complete || partDiffs.length === 0) {
        diffs.push(...partDiffs);
        continue;
      }
      // A compacted topic whose cleaner ran on one side after the copy differs byte for byte while both
      // hold the same data: compared by the latest committed record of each key instead, as a consumer
      // reading either to its end would see it (the same offset and value for every key).
      byKey++;
      const mineByKey = latestCommittedByKey(
        [...log.batches()].filter((b) => b.lastOffset < hw),
        from,
        hw,
      );
      const theirsByKey = latestCommittedByKey(theirAll, from, limit);
      const where = `${topic}-${p} (compacted, ${partDiffs.length} batch difference(s): compared by latest record per key)`;
      diffs.push(...compareLatestByKey(mineByKey, theirsByKey, hw, where, MAX_LISTED));
    }
  }
  const keyed =
    byKey > 0 ? `, ${counted(byKey, "compacted partition")} whose cleaners rewrote one side by key` : "";
  return check(
    "batches",
    `${counted(partitions, "partition")}, ${counted(compared, "batch", "batches")} byte for byte up to the destination HW${keyed}`,
    diffs,
  );
}

/** Whether the destination topic is compacted (`cleanup.policy` names `compact`). */
function isCompacted(destination: KafkaCluster, topic: string): boolean {
  const policy = destination.controller.image.topic(topic)?.configs.get("cleanup.policy") ?? "";
  return policy.split(",").some((p) => p.trim() === "compact");
}

const maxOf = (a: bigint, b: bigint) => (a > b ? a : b);

/** Fetches of one offset sent again to the partition's current source leader after it moved. */
const LEADER_RETRIES = 3;

/** A fetch answer that means "ask the partition's current leader", as Kafka's consumers read these. */
function leaderMoved(answer: SourceBatch[] | Error): boolean {
  if (!(answer instanceof KafkaError)) return false;
  return [
    "NOT_LEADER_OR_FOLLOWER",
    "LEADER_NOT_AVAILABLE",
    "FENCED_LEADER_EPOCH",
    "UNKNOWN_LEADER_EPOCH",
    "BROKER_NOT_AVAILABLE",
  ].includes(answer.errorName);
}

/** One whole batch as the source stores it. */
interface SourceBatch {
  baseOffset: bigint;
  lastOffset: bigint;
  buffer: Buffer;
  batch: RecordBatch;
}

/** The client id of verify's fetches (a source's fetch quota for it, or its default one, applies). */
const VERIFY_CLIENT_ID = "cluster-mirror-verify";

/** Answers without data that the source throttled (its fetch quota) waited out before giving up on an offset. */
const THROTTLE_RETRIES = 5;

/**
 * The source's whole batches from `offset` on (one fetch), in offset order; the partition's error if it
 * failed. A source over verify's fetch quota answers without data and with a throttle time (Kafka,
 * KIP-219): that answer says nothing about what the source holds, so it is waited out and asked again, as
 * Kafka's clients do, rather than read as "nothing there".
 */
async function fetchBatches(
  source: SourceCluster,
  scheduler: Scheduler,
  brokerId: number,
  topic: string,
  partition: number,
  offset: bigint,
): Promise<SourceBatch[] | Error> {
  let response: Awaited<ReturnType<SourceCluster["fetch"]>>;
  for (let throttled = 0; ; throttled++) {
    try {
      response = await source.fetch({
        clientId: VERIFY_CLIENT_ID,
        brokerId,
        maxBytes: FETCH_BYTES,
        // One-off: a fetch session opened for it would stay on the source broker after the verify.
        sessionless: true,
        partitions: [
          {
            topic,
            partition,
            fetchOffset: offset,
            lastFetchedEpoch: -1,
            currentLeaderEpoch: -1,
            maxBytes: FETCH_BYTES,
          },
        ],
      });
    } catch (error) {
      // The broker it was sent to is gone (a leader moving with it): the caller asks the new leader.
      if (error instanceof KafkaError && error.errorName === "BROKER_NOT_AVAILABLE") return error;
      throw error;
    }
    const answer = response.partitions[0];
    if (response.throttleTimeMs <= 0 || answer?.error || (answer?.recordSlices.length ?? 0) > 0) break;
    if (throttled >= THROTTLE_RETRIES) {
      return new Error(
        `the source throttled it ${throttled + 1} times (client id ${VERIFY_CLIENT_ID}, last for ${response.throttleTimeMs} ms): its fetch quota there is too small to compare now; raise that quota or verify again later`,
      );
    }
    await sleep(scheduler, response.throttleTimeMs);
  }
  const result = response.partitions[0];
  if (result?.error) return result.error;
  return [...recordBatches(Buffer.concat(result?.recordSlices ?? []))].map((b) => ({
    baseOffset: b.baseOffset,
    lastOffset: b.lastOffset,
    buffer: b.buffer,
    batch: b,
  }));
}
