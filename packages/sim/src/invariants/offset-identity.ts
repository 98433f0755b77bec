import type { KafkaCluster } from "@cluster-mirror/cluster";
import { failoverAlignment, mirrorOfLabel } from "./alignment";
import { batchesByOffset, hexOf, leaderLog } from "./logs";
import type { Violation } from "./violation";

/**
 * Offset identity (spec §1, §4 "While MIRRORING") and log matching after failback: below `upTo` (the
 * destination high watermark, or the failover point), every destination batch is byte-equal to the source
 * batch at the same base offset, and no source batch in that range is missing on the destination. Offsets
 * below either log's start (retention, full truncation) are not compared.
 */
export function checkOffsetIdentity(
  label: string,
  source: KafkaCluster,
  destination: KafkaCluster,
  topic: string,
  partition: number,
  upTo?: bigint,
): Violation[] {
  const src = leaderLog(source, topic, partition);
  const dst = leaderLog(destination, topic, partition);
  if (!src || !dst) return [];
  if (failedOverBeforeAlignment(label, destination, topic, partition)) return [];
  const end = upTo === undefined || upTo > dst.highWatermark ? dst.highWatermark : upTo;
  const start = src.logStartOffset > dst.logStartOffset ? src.logStartOffset : dst.logStartOffset;
  const srcBatches = batchesByOffset(src);
  const out: Violation[] = [];
  const seen = new Set<bigint>();
  for (const b of dst.batches()) {
    if (b.baseOffset < start || b.lastOffset >= end) continue;
    seen.add(b.baseOffset);
    const s = srcBatches.get(b.baseOffset);
    if (!s) {
      out.push({
        invariant: "offset-identity",
        message: `${label} ${topic}-${partition}: destination batch at offset ${b.baseOffset} (epoch ${b.partitionLeaderEpoch}) has no source batch at that offset (destination HW ${dst.highWatermark}, source log ${src.logStartOffset}..${src.logEndOffset})`,
      });
    } else if (hexOf(s) !== hexOf(b)) {
      out.push({
        invariant: "offset-identity",
        message: `${label} ${topic}-${partition}: batch at offset ${b.baseOffset} differs (destination epoch ${b.partitionLeaderEpoch} pid ${b.producerId}, source epoch ${s.partitionLeaderEpoch} pid ${s.producerId})`,
      });
    }
    if (out.length >= 3) return out;
  }
  for (const [offset, s] of srcBatches) {
    if (offset < start || s.lastOffset >= end || seen.has(offset)) continue;
    out.push({
      invariant: "offset-identity",
      message: `${label} ${topic}-${partition}: source batch at offset ${offset} is missing on the destination below ${end}`,
    });
    if (out.length >= 3) break;
  }
  return out;
}

/**
 * Whether the edge labelled `label` (`from->to (failed over from PREPARING|FAILED)`, as settleAndCheck tags
 * it) failed over before PREPARING's truncation: the log never became a copy of the source, so there is no
 * source prefix to compare. The topic kept its own log: PREPARING adds no fetcher and did not truncate, and
 * the failover recorded the earlier LME, which checkFailover verifies. Comparing with the log as it was before
 * the failback would need a snapshot the sim does not take; the `__mirror_state` history (no truncation
 * tombstone since the session started) is what tells the case apart, so a failover from MIRRORING is never
 * excused.
 */
function failedOverBeforeAlignment(
  label: string,
  destination: KafkaCluster,
  topic: string,
  partition: number,
): boolean {
  if (!/\(failed over from (PREPARING|FAILED)\)/.test(label)) return false;
  const mirror = mirrorOfLabel(label);
  const topicId = destination.controller.image.topic(topic)?.topicId;
  if (mirror === undefined || topicId === undefined) return false;
  const a = failoverAlignment(destination, { mirror, topicId, partition });
  return a !== undefined && !a.aligned;
}
