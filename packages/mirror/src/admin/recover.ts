import type { KafkaCluster } from "@cluster-mirror/cluster";
import { InvalidMirrorStateError } from "@cluster-mirror/machines";
import { KafkaError } from "@cluster-mirror/protocol";
import { NO_SUCH_TOPIC } from "../metadata/mirror-metadata-manager";
import { type MirrorTopic, mirrorTopics } from "../metadata/mirror-topics";
import { isCoordinatorLoading, viewsByPartition } from "../metadata/state-driver";
import type { MirrorCoordinators, MirrorPartitionKey, SourceCluster } from "../ports";
import { MirrorStateError } from "./errors";
import type { MirrorDefinition } from "./mirror-config";
import { sourceRefusesRead } from "./source-read-check";
import { selectMirrorTopics, topicList } from "./topic-selection";

/** One partition a recover sent back to work. */
export interface RecoveredPartition {
  topic: string;
  partition: number;
}

/** The answer of `--recover`: the topics matched (sorted), the partitions recovered, and the message. */
export interface RecoverResult {
  topics: string[];
  partitions: RecoveredPartition[];
  message: string;
}

/** What a recover needs of the admin API. */
export interface RecoverDeps {
  destination: KafkaCluster;
  coordinators: MirrorCoordinators;
  /** A call on the mirror's source, its failures turned into the admin API's (`MirrorAdmin.sourceCall`). */
  sourceCall: <T>(call: (source: SourceCluster) => Promise<T>) => Promise<T>;
  /** Waits until the coordinators of these topics' partitions have loaded. */
  awaitCoordinatorsOf: (topics: readonly MirrorTopic[]) => Promise<void>;
  /**
   * Runs `work` (the RECOVER commands sent to `keys`, or the wait for their moved coordinators to load
   * before the next round) within one bound from the first command on (`MirrorAdmin`: `defaultApiTimeoutMs`,
   * then a retriable MirrorCommandTimeoutError; past it, `work` is not started). Unbounded without it.
   */
  recordedWithin?: <T>(work: () => Promise<T>, keys: readonly MirrorPartitionKey[]) => Promise<T>;
  /**
   * The error of an engine that was closed (ClusterMirroring.close(): MirroringClosedError), undefined while
   * it runs. Checked before each round of RECOVER commands: the checks on the source before them may end
   * after close(), and a closed engine sends no command.
   */
  closed?: () => Error | undefined;
}

/** How many rounds a recover sends commands refused only because their coordinator unloaded. */
const RECOVER_ROUNDS = 3;

/** How the source answers for a mirror topic now (by name and id). */
type SourceTopicAnswer = "present" | "deleted" | KafkaError;

/**
 * `--recover` (the later KIP-1279 revision's RecoverMirrorTopics): every FAILED partition of the mirror's
 * topics matching `regex` (mirroring or paused) retries now, whether it was backing off or waiting for an
 * operator (out of attempts, or a failure no retry gets past), with a fresh attempt budget; it resumes where
 * its retry timer would take it (spec §4: PREPARING, or the previous state where that is safe). Nothing is
 * made writable, unlike a remove and add.
 *
 * First the causes that a retry would only repeat, or worse, are checked on the source: a source that does
 * not answer (SourceUnreachableError), another cluster behind `bootstrap.servers` (its data would be
 * mirrored into these topics), a source topic deleted or created again under another id, or one the
 * mirror's principal may not read. Any of these refuses the whole call and nothing changes.
 */
export async function recoverTopics(
  deps: RecoverDeps,
  def: MirrorDefinition,
  regex: string,
): Promise<RecoverResult> {
  const mirror = def.name;
  const image = () => deps.destination.controller.image;
  const topics = selectMirrorTopics(mirror, regex, mirrorTopics(image(), mirror), ["ACTIVE", "PAUSED"]);
  const names = topics.map((t) => t.name);
  await deps.awaitCoordinatorsOf(topics);
  const failedNow = () => failedPartitions(deps, mirror, topics);
  const failed = failedNow();
  if (failed.length === 0) {
    return {
      topics: names,
      partitions: [],
      message: `No partition of ${topicList(names)} in mirror ${mirror} is FAILED: nothing to recover.`,
    };
  }
  await checkSourceHolds(deps, def, failed);

  const recovered: RecoveredPartition[] = [];
  const leftOnTheirOwn: string[] = [];
  const refused: unknown[] = [];
  let pending = failed;
  for (let round = 1; pending.length > 0; round++) {
    // close() ran while the checks on the source (or the wait for moved coordinators) were awaited.
    const closed = deps.closed?.();
    if (closed !== undefined) throw closed;
    const send = () =>
      Promise.all(
        pending.map(({ key, topic }) =>
          deps.coordinators
            .command(key, { type: "RECOVER", pauseRequested: topic.desired === "PAUSED" })
            .then(
              () => undefined,
              (error: unknown) => error ?? new Error("the recover was refused without a reason"),
            ),
        ),
      );
    const keys = pending.map((f) => f.key);
    const outcomes = await (deps.recordedWithin?.(send, keys) ?? send());
    const unloaded = new Set<string>();
    outcomes.forEach((error, i) => {
      const { key } = pending[i]!;
      if (error === undefined) recovered.push({ topic: key.topic, partition: key.partition });
      // Left FAILED between the look and the command (its retry timer fired, or a remove began): not ours.
      else if (leftFailed(error)) leftOnTheirOwn.push(`${key.topic}-${key.partition}`);
      else if (movedCoordinator(error) && round < RECOVER_ROUNDS) unloaded.add(partitionName(key));
      else refused.push(error);
    });
    if (unloaded.size === 0) break;
    // Within the same bound: unbounded, the next round could start past it and time out at once.
    const loaded = () => deps.awaitCoordinatorsOf(topics);
    await (deps.recordedWithin?.(loaded, keys) ?? loaded());
    pending = failedNow().filter((f) => unloaded.has(partitionName(f.key)));
  }
  recovered.sort((a, b) => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition));
  const list = topicList(recovered.map((p) => `${p.topic}-${p.partition}`));
  const first = refused[0];
  if (first !== undefined) {
    const why = first instanceof Error ? first.message : String(first);
    const done = recovered.length === 0 ? "" : `Recovered ${recovered.length} partition(s) ${list}, but `;
    const message = `${done}${refused.length} FAILED partition(s) of mirror ${mirror} refused the recover: ${why}`;
    throw first instanceof KafkaError
      ? new KafkaError(first.errorName, first.code, first.retriable, message, { cause: first })
      : new MirrorStateError(mirror, message);
  }
  const left =
    leftOnTheirOwn.length === 0
      ? ""
      : `; ${leftOnTheirOwn.length} left FAILED meanwhile (its own retry, or a remove): ${topicList(leftOnTheirOwn.sort())}`;
  return {
    topics: names,
    partitions: recovered,
    message: `Recovered ${recovered.length} partition(s) of mirror ${mirror}: ${list}${left}`,
  };
}

/**
 * A refusal of a partition that left FAILED since the look: in another state now, or still FAILED with
 * another change waiting for its `__mirror_state` append (its retry timer fired, or a remove began).
 * A failure committing FAILED again is not that: the partition stays FAILED, and the recover was refused.
 */
function leftFailed(error: unknown): boolean {
  if (!(error instanceof InvalidMirrorStateError) || error.state === "fenced") return false;
  return error.state !== "FAILED" || (error.pendingTo !== null && error.pendingTo !== "FAILED");
}

/** The FAILED partitions of `topics`, as their coordinators describe them now. */
function failedPartitions(
  deps: RecoverDeps,
  mirror: string,
  topics: readonly MirrorTopic[],
): { key: MirrorPartitionKey; topic: MirrorTopic }[] {
  const views = viewsByPartition(deps.coordinators.describe(mirror), deps.destination.controller.image);
  const out: { key: MirrorPartitionKey; topic: MirrorTopic }[] = [];
  for (const topic of topics) {
    for (let partition = 0; partition < topic.partitionCount; partition++) {
      if (views.get(`${topic.name}:${partition}`)?.state !== "FAILED") continue;
      out.push({ key: { mirror, topic: topic.name, topicId: topic.topicId, partition }, topic });
    }
  }
  return out;
}

/**
 * Refuses a recover that would repeat its failure or mirror the wrong data: the source must be the mirror's
 * cluster (pinned id) and hold each topic under the mirrored id, readable by the mirror's principal.
 */
async function checkSourceHolds(
  deps: RecoverDeps,
  def: MirrorDefinition,
  failed: readonly { key: MirrorPartitionKey; topic: MirrorTopic }[],
) {
  const seen = await deps.sourceCall((source) => source.clusterId());
  if (def.sourceClusterId !== undefined && seen !== def.sourceClusterId) {
    throw new MirrorStateError(
      def.name,
      `Cannot recover partitions of mirror ${def.name}: bootstrap.servers=${def.bootstrapServers} now reaches cluster ${seen}, not the mirror's source ${def.sourceClusterId}, and a retry would copy that cluster's records into these topics. Point the mirror back at its source (kafka-mirrors --alter), or remove the topics and create a new mirror.`,
    );
  }
  const image = deps.destination.controller.image;
  const gone: string[] = [];
  for (const { name, partitionCount } of new Set(failed.map((f) => f.topic))) {
    const topicId = image.topic(name)?.topicId;
    if (topicId === undefined) continue;
    // Any partition that answers proves the topic and its id: the FAILED ones first, then the others. A
    // partition without a leader on the source right now (or any other passing error) says neither, and
    // must not refuse the recover of partitions whose source partitions are fine.
    const failedHere = failed.filter((f) => f.topic.name === name).map((f) => f.key.partition);
    const others = Array.from({ length: partitionCount }, (_, p) => p).filter((p) => !failedHere.includes(p));
    const answer = await deps.sourceCall(async (source): Promise<SourceTopicAnswer> => {
      let unanswered: KafkaError | undefined;
      for (const partition of [...failedHere, ...others]) {
        let highWatermark: bigint;
        try {
          highWatermark = await source.listOffsets(name, partition, -1n, topicId);
        } catch (error) {
          // Not a Kafka answer (a connection that failed, a timeout): asking on would only wait more.
          if (!(error instanceof KafkaError)) throw error;
          if (NO_SUCH_TOPIC.has(error.errorName)) return "deleted";
          if (error.errorName.endsWith("_AUTHORIZATION_FAILED")) return error;
          unanswered = error;
          continue;
        }
        // ListOffsets needs DESCRIBE only: a principal denied READ alone gets this far.
        return (
          (await sourceRefusesRead(source, def.name, name, topicId, partition, highWatermark)) ?? "present"
        );
      }
      // No partition answered (not one has a leader now): say why, refusing the call.
      throw unanswered ?? new Error(`the source answered for no partition of ${name}`);
    });
    if (answer === "deleted") gone.push(name);
    else if (answer instanceof KafkaError) {
      throw new MirrorStateError(
        def.name,
        `Cannot recover partitions of ${name} in mirror ${def.name}: the source still refuses the mirror's principal (${answer.errorName}: ${answer.message}). Grant it DESCRIBE and READ on the topic on the source, then recover again.`,
      );
    }
  }
  if (gone.length > 0) {
    throw new MirrorStateError(
      def.name,
      `Cannot recover partitions of ${topicList(gone)} in mirror ${def.name}: the source no longer has ${gone.length === 1 ? "that topic" : "those topics"} under the mirrored topic id (deleted, or created again). Nothing was recovered. Remove ${gone.length === 1 ? "it" : "them"} from the mirror (--remove makes ${gone.length === 1 ? "it" : "them"} writable), or recover the other topics with a narrower --topic.`,
    );
  }
}

/** Refused only because the partition's coordinator unloaded or lost leadership on the way: send again. */
function movedCoordinator(error: unknown): boolean {
  return (
    isCoordinatorLoading(error) || (error instanceof InvalidMirrorStateError && error.state === "fenced")
  );
}

function partitionName(key: MirrorPartitionKey): string {
  return `${key.topic}:${key.partition}`;
}
