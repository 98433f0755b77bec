import type { AclBinding, Cancel, KafkaCluster, MetadataLogEntry, Scheduler } from "@cluster-mirror/cluster";
import { KafkaError } from "@cluster-mirror/protocol";
import { groupFilter, type MirrorDefinition, parseMirrorConfig, topicFilter } from "../admin/mirror-config";
import type { MirrorMetrics, SyncErrorKind } from "../metrics/mirror-metrics";
import type { MirrorCoordinators, SourceCluster, SourceConnector, SourceTopicInfo } from "../ports";
import { reconcileAcls } from "./acl-sync";
import { type GroupOffsetSyncResult, syncGroupOffsets } from "./group-offset-sync";
import { createMirrorTopic, sourcePartitionCount } from "./mirror-topic-factory";
import { MIRROR_NAME_CONFIG, type MirrorTopic, mirrorTopics, parseMirrorNameConfig } from "./mirror-topics";
import { RefusedConfigReports, refusedConfigError } from "./refused-configs";
import { SourceConnections } from "./source-connections";
import {
  type DriveResult,
  driveTopics,
  failPartitions,
  isCoordinatorLoading,
  isStateRace,
  partitionKey,
  readOnlyIn,
  viewsByPartition,
} from "./state-driver";
import { refusedTopicConfigs, topicConfigSyncOps } from "./topic-configs";

/** Message of a partition failed because its source topic disappeared (the POC's words). */
export const SOURCE_TOPIC_DELETED = "The source topic is deleted.";

/**
 * Message of a partition failed because its source topic left the source's listing while the source
 * refuses the mirror's principal that topic by name (Kafka lists only topics a principal may DESCRIBE):
 * the topic is not known to be deleted, the principal lost its rights on it.
 */
export function sourceTopicNotAuthorized(topic: string, error: KafkaError): string {
  return (
    `The mirror's principal may no longer describe source topic ${topic} (${error.message}); the topic is not ` +
    "known to be deleted. Grant the principal DESCRIBE and READ on it on the source, then remove the topic " +
    "from the mirror and add it again."
  );
}

/** The errors by which a source says it has no topic of that name (or not under that id). */
export const NO_SUCH_TOPIC: ReadonlySet<string> = new Set([
  "UNKNOWN_TOPIC_OR_PARTITION",
  "UNKNOWN_TOPIC_ID",
  "INCONSISTENT_TOPIC_ID",
]);

/** How many consecutive refreshes must miss a source topic before its partitions fail. */
export const DELETED_TOPIC_OBSERVATIONS = 2;

/** Wiring of a broker's metadata manager. */
export interface MirrorMetadataManagerOptions {
  /** The destination cluster (its controller, group coordinator and authorizer). */
  destination: KafkaCluster;
  /** Opens sources from mirror definitions (a shared `SourceConnections` keeps one per mirror). */
  sources: SourceConnector | SourceConnections;
  coordinators: MirrorCoordinators;
  /** Runs the periodic refreshes (and the drives that follow a `mirror.name` change). */
  scheduler: Scheduler;
  /**
   * True when this broker leads the mirror's designated `__mirror_state` partition
   * (`abs(hash(mirror)) % numPartitions`): only that broker creates topics and syncs metadata.
   */
  leadsMirror: (mirror: string) => boolean;
  metrics?: MirrorMetrics;
  /** Hears every sync error (after it is counted), e.g. to log it. */
  onSyncError?: (mirror: string, kind: SyncErrorKind, error: unknown) => void;
  /**
   * Hears a source topic the mirror's patterns match that is not mirrored because this cluster already has
   * a topic of that name, or one differing from it only by '.' and '_' (its own, or another mirror's): once
   * per topic, and again only after the conflict cleared and came back.
   */
  onTopicSkipped?: (mirror: string, topic: string, why: string) => void;
  /**
   * Called when a refresh of `mirror` starts (not when one already running is joined); the function it
   * returns, if any, hears that refresh's report when it ends (undefined: the mirror no longer exists).
   * `ClusterMirroring.whenSynced` waits on it for a sync that began after its call.
   */
  onRefreshStarted?: (mirror: string) => ((report: RefreshReport | undefined) => void) | undefined;
  /**
   * The mirror's source answered this broker's refresh after the last one it did not answer: the FAILED
   * partitions waiting that out can retry now.
   */
  onSourceBack?: (mirror: string) => void;
}

/** What one refresh of one mirror did (for logs and tests). */
export interface RefreshReport {
  mirror: string;
  /** False when this broker does not lead the mirror (only the cluster id was checked). */
  leader: boolean;
  /** Set when the source's cluster id differs from the pinned one (every partition was failed). */
  clusterIdChanged?: { pinned: string; seen: string };
  /** Topics whose partitions were failed because the source topic is gone (seen twice). */
  deletedTopics: string[];
  /** Mirror topics created for newly discovered source topics. */
  createdTopics: string[];
  /**
   * Source topics the patterns match that are not mirrored: a topic of that name (or of a name differing only
   * by '.' and '_') already exists on this cluster and is not this mirror's (every refresh lists them;
   * `onTopicSkipped` hears each once).
   */
  skippedTopics: { topic: string; why: string }[];
  /** Topics whose partition count was raised, with the new count. */
  createdPartitions: { topic: string; count: number }[];
  /** Topics whose configs were altered. */
  alteredConfigs: string[];
  groups?: GroupOffsetSyncResult;
  acls?: { created: AclBinding[]; deleted: AclBinding[] };
  /** Commands sent to partition actors. */
  commands: DriveResult["sent"];
  /** The sync errors of this refresh (each also counted in the metrics), by kind. */
  errors: { kind: SyncErrorKind; message: string }[];
}

/**
 * The mirror metadata manager of one destination broker (spec §3, §7; KIP-1279's MirrorMetadataManager and
 * MirrorSourceSyncer). Every `mirror.metadata.refresh.interval.ms`, per mirror:
 *
 * 1. every broker checks the source cluster id against the pinned one; a change fails every partition of the
 *    mirror non-retryably and stops the pass;
 * 2. the broker that leads the mirror (`leadsMirror`) then: fails the partitions of a source topic seen
 *    missing (or recreated with another id) on two consecutive refreshes; creates and starts new source
 *    topics matching `topics.include` and not `topics.exclude`; raises partition counts; copies topic
 *    configs (except the exclusion list); copies group offsets, clamped; reconciles ACLs; and drives every
 *    partition toward what its topic's `mirror.name` suffix asks for. PAUSED topics get no sync.
 *
 * A `mirror.name` change also drives that topic's partitions right away (next scheduler turn). Every error
 * is counted per mirror and kind and never stops other topics or mirrors.
 */
export class MirrorMetadataManager {
  private readonly options: MirrorMetadataManagerOptions;
  private readonly sources: SourceConnections;
  private readonly timers = new Map<string, Cancel>();
  private readonly inFlight = new Map<string, Promise<RefreshReport | undefined>>();
  /** The report of the refresh running per mirror, which collects its errors. */
  private readonly running = new Map<string, RefreshReport>();
  private readonly pending = new Set<Promise<unknown>>();
  /** Consecutive refreshes that missed a source topic, by `mirror\0topic`. */
  private readonly missing = new Map<string, number>();
  /** The skipped topics already reported, by mirror (`onTopicSkipped`). */
  private readonly skipped = new Map<string, Set<string>>();
  /** The source config values this cluster refused, reported once each. */
  private readonly refusedConfigs = new RefusedConfigReports();
  /** Topics whose `mirror.name` changed, by mirror, to drive on the next scheduler turn (one drive each). */
  private readonly changed = new Map<string, Set<string>>();
  /** The mirrors whose source did not answer this broker's last refresh. */
  private readonly sourceDown = new Set<string>();
  /**
   * Mirrors whose source this broker's latest refresh found answering again after it had not: every broker
   * refreshes on its own cycle, so another (the coordinator before a move) may not have heard it yet.
   */
  private readonly justBack = new Set<string>();
  private unsubscribe: (() => void) | undefined;

  constructor(options: MirrorMetadataManagerOptions) {
    this.options = options;
    this.sources =
      options.sources instanceof SourceConnections ? options.sources : new SourceConnections(options.sources);
  }

  /** Starts the periodic refreshes of every mirror (now and later created ones) and the `mirror.name` watch. */
  start(): void {
    if (this.unsubscribe) return;
    const controller = this.options.destination.controller;
    for (const name of controller.image.mirrors.keys()) this.schedule(name);
    this.unsubscribe = controller.subscribe((e) => this.onMetadata(e), controller.metadataLog().length);
  }

  /** Stops every timer and the metadata watch; refreshes in flight finish on their own. */
  close(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    for (const cancel of this.timers.values()) cancel();
    this.timers.clear();
  }

  /**
   * Whether `mirror`'s source did not answer this broker's last refresh (its return, at a later one, calls
   * `onSourceBack`).
   */
  isSourceDown(mirror: string): boolean {
    return this.sourceDown.has(mirror);
  }

  /**
   * The mirrors whose source this broker's latest refresh of them found back (it had not answered the one
   * before): a coordinator that moved here may not have heard it (see `FaultEndsWhileLoading`).
   */
  sourcesJustBack(): string[] {
    return [...this.justBack];
  }

  /** Resolves once every refresh and drive started so far has finished. */
  async idle(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  /**
   * Runs one refresh of `mirror` now (a refresh already running is joined, not repeated). Resolves with what
   * it did, or undefined when the mirror does not exist; never rejects.
   */
  refresh(mirror: string): Promise<RefreshReport | undefined> {
    const running = this.inFlight.get(mirror);
    if (running) return running;
    const ended = this.options.onRefreshStarted?.(mirror);
    const run = this.track(
      this.doRefresh(mirror).catch((error: unknown) => {
        this.error(mirror, "TopicMetadataRefreshError", error);
        return undefined;
      }),
    ).finally(() => {
      this.inFlight.delete(mirror);
      this.running.delete(mirror);
    });
    this.inFlight.set(mirror, run);
    if (ended) void run.then(ended);
    return run;
  }

  /**
   * Runs a refresh of `mirror` that starts after this call: one already running (it may have read the
   * source before the caller's change) is awaited first, then a new one runs (or one started meanwhile,
   * also after the call, is joined). Never rejects.
   */
  async refreshAfterCurrent(mirror: string): Promise<RefreshReport | undefined> {
    const running = this.inFlight.get(mirror);
    if (running) await running;
    return this.refresh(mirror);
  }

  /**
   * Drives the partitions of a mirror's topics (all, or those named in `topicNames`) toward their
   * `mirror.name` suffix (leader broker only).
   */
  async drive(mirror: string, topicNames?: ReadonlySet<string>): Promise<DriveResult["sent"]> {
    if (!this.options.leadsMirror(mirror)) return [];
    const topics = mirrorTopics(this.options.destination.controller.image, mirror).filter(
      (t) => topicNames === undefined || topicNames.has(t.name),
    );
    const views = viewsByPartition(
      this.options.coordinators.describe(mirror),
      this.options.destination.controller.image,
    );
    const result = await driveTopics(
      this.options.coordinators,
      topics,
      views,
      readOnlyIn(this.options.destination.controller.image),
    );
    for (const f of result.failed) {
      if (!isStateRace(f.error)) this.error(mirror, "MirrorStateCommandError", f.error);
    }
    return result.sent;
  }

  /**
   * Drives a mirror's partitions as soon as this broker's coordinator can take commands for it (its
   * designated `__mirror_state` partition finished loading), instead of waiting for the first refresh a
   * full interval after start: a `mirror.name` change whose commands a crash cut short (`--remove`,
   * `--add`, `--pause` killed half way) is acted on at once. Partitions whose own coordinator is still
   * loading are skipped quietly: their coordinator follows `.removed` when it loads, and the next refresh
   * drives the rest.
   */
  async driveAfterLoad(mirror: string): Promise<DriveResult["sent"]> {
    if (!this.options.leadsMirror(mirror)) return [];
    const topics = mirrorTopics(this.options.destination.controller.image, mirror);
    const views = viewsByPartition(
      this.options.coordinators.describe(mirror),
      this.options.destination.controller.image,
    );
    const result = await this.track(
      driveTopics(
        this.options.coordinators,
        topics,
        views,
        readOnlyIn(this.options.destination.controller.image),
      ),
    );
    for (const f of result.failed) {
      if (!isStateRace(f.error) && !isCoordinatorLoading(f.error)) {
        this.error(mirror, "MirrorStateCommandError", f.error);
      }
    }
    return result.sent;
  }

  private schedule(mirror: string): void {
    this.timers.get(mirror)?.();
    const def = this.options.destination.controller.image.mirrors.get(mirror);
    if (!def) {
      this.timers.delete(mirror);
      return;
    }
    let interval: number;
    try {
      interval = parseMirrorConfig(mirror, def).metadataRefreshIntervalMs;
    } catch {
      interval = 30_000;
    }
    this.timers.set(
      mirror,
      this.options.scheduler.schedule(() => {
        this.schedule(mirror);
        void this.refresh(mirror);
      }, interval),
    );
  }

  private onMetadata(entry: MetadataLogEntry): void {
    const record = entry.record;
    if (record.type === "Mirror") {
      this.schedule(record.name);
    } else if (record.type === "RemoveMirror") {
      this.timers.get(record.name)?.();
      this.timers.delete(record.name);
      this.sources.drop(record.name);
      this.sourceDown.delete(record.name);
      this.justBack.delete(record.name);
      this.options.metrics?.forgetMirror(record.name);
      this.skipped.delete(record.name);
      this.refusedConfigs.forgetMirror(record.name);
      for (const key of [...this.missing.keys()])
        if (key.startsWith(`${record.name}\u0000`)) this.missing.delete(key);
    } else if (
      record.type === "Config" &&
      record.resourceType === "topic" &&
      record.name === MIRROR_NAME_CONFIG
    ) {
      const parsed = parseMirrorNameConfig(record.value ?? undefined);
      if (!parsed) return;
      this.driveSoon(parsed.mirror, record.resourceName);
    }
  }

  /**
   * Drives `topic` on the next scheduler turn (its partitions are appended after its configs, and commands
   * are asynchronous), together with every other topic of the mirror whose `mirror.name` changed before
   * then: one drive reads the mirror's topics and partition states once. Driven one by one, a `--remove`
   * of T topics read the states of all the mirror's partitions T times.
   */
  private driveSoon(mirror: string, topic: string): void {
    const waiting = this.changed.get(mirror);
    if (waiting !== undefined) {
      waiting.add(topic);
      return;
    }
    const topics = new Set([topic]);
    this.changed.set(mirror, topics);
    this.options.scheduler.schedule(() => {
      this.changed.delete(mirror);
      void this.track(
        this.drive(mirror, topics).catch((error: unknown) => {
          this.error(mirror, "MirrorStateCommandError", error);
          return [];
        }),
      );
    }, 0);
  }

  private async doRefresh(mirror: string): Promise<RefreshReport | undefined> {
    const stored = this.options.destination.controller.image.mirrors.get(mirror);
    if (!stored) return undefined;
    const report: RefreshReport = {
      mirror,
      leader: false,
      deletedTopics: [],
      createdTopics: [],
      skippedTopics: [],
      createdPartitions: [],
      alteredConfigs: [],
      commands: [],
      errors: [],
    };
    this.running.set(mirror, report);
    let def: MirrorDefinition;
    let source: SourceCluster;
    let seen: string;
    try {
      def = parseMirrorConfig(mirror, stored);
      source = this.sources.get(mirror, stored);
    } catch (error) {
      this.error(mirror, "TopicMetadataRefreshError", error);
      return report;
    }
    try {
      seen = await source.clusterId();
    } catch (error) {
      this.sourceDown.add(mirror);
      this.justBack.delete(mirror);
      this.error(mirror, "TopicMetadataRefreshError", error);
      return report;
    }
    const back = this.sourceDown.delete(mirror);
    this.justBack.delete(mirror);
    if (def.sourceClusterId !== undefined && seen !== def.sourceClusterId) {
      report.clusterIdChanged = { pinned: def.sourceClusterId, seen };
      await this.failMirror(def, seen);
      return report;
    }
    // Its own source back, not another cluster behind the address (that one fails the mirror, above).
    if (back) {
      this.justBack.add(mirror);
      this.options.onSourceBack?.(mirror);
    }
    if (!this.options.leadsMirror(mirror)) return report;
    report.leader = true;
    let sourceTopics: SourceTopicInfo[];
    try {
      sourceTopics = await source.describeTopics({ configsOf: this.configsWanted(def) });
    } catch (error) {
      this.error(mirror, "TopicMetadataRefreshError", error);
      return report;
    }
    const byName = new Map(sourceTopics.map((t) => [t.name, t]));
    report.deletedTopics = await this.detectDeletedTopics(mirror, source, byName);
    // The mirror as it is after those waits on the source: a mirror deleted meanwhile gets no topic (it would
    // be read-only for good, its `mirror.name` naming no mirror), nor one created again under the name for
    // another cluster (these are the old source's topics), and changed patterns apply at once (a topic just
    // excluded is not created).
    const current = this.currentDefinition(mirror);
    if (current === undefined || current.sourceClusterId !== def.sourceClusterId) return report;
    def = current;
    report.createdTopics = this.discoverTopics(def, sourceTopics, report);
    // The mirror's ACTIVE topics now: read again after each wait on the source, so a topic failed over
    // meanwhile (--remove, --promote) gets no offsets or ACLs written over what its new primary does.
    const activeNow = () =>
      mirrorTopics(this.options.destination.controller.image, mirror).filter(
        (t) => t.desired === "ACTIVE" && byName.get(t.name)?.topicId === t.topicId,
      );
    const activeNames = () => new Set(activeNow().map((t) => t.name));
    for (const topic of activeNow()) this.syncTopic(def, topic, byName.get(topic.name)!, report);
    await this.syncGroups(def, source, activeNames, report);
    await this.syncAcls(def, source, activeNames, report);
    report.commands = await this.drive(mirror);
    return report;
  }

  /** The mirror's definition as stored now; undefined once it is deleted (or when its config is refused). */
  private currentDefinition(mirror: string): MirrorDefinition | undefined {
    const stored = this.options.destination.controller.image.mirrors.get(mirror);
    if (stored === undefined) return undefined;
    try {
      return parseMirrorConfig(mirror, stored);
    } catch (error) {
      this.error(mirror, "TopicMetadataRefreshError", error);
      return undefined;
    }
  }

  /** Source cluster id changed: every partition of the mirror fails for good (every broker does this). */
  private async failMirror(def: MirrorDefinition, seen: string): Promise<void> {
    const topics = mirrorTopics(this.options.destination.controller.image, def.name).filter(
      (t) => t.desired !== "REMOVED",
    );
    const keys = topics.flatMap((t) =>
      Array.from({ length: t.partitionCount }, (_, p) => partitionKey(t, p)),
    );
    const message =
      `The source cluster id changed from ${def.sourceClusterId} to ${seen}: bootstrap.servers=${def.bootstrapServers} ` +
      "now reaches another cluster. Point the mirror back at its source, or remove the topics and create a new mirror.";
    await this.fail(def.name, keys, message);
  }

  /**
   * Fails topics missing from the source (or recreated with another id) on two consecutive refreshes. A
   * topic missing by name is asked for by name first: Kafka's listing leaves out the topics the principal
   * may not DESCRIBE, which it refuses by name (TOPIC_AUTHORIZATION_FAILED) instead of calling unknown.
   */
  private async detectDeletedTopics(
    mirror: string,
    source: SourceCluster,
    byName: ReadonlyMap<string, SourceTopicInfo>,
  ): Promise<string[]> {
    const deleted: string[] = [];
    for (const topic of mirrorTopics(this.options.destination.controller.image, mirror)) {
      const key = `${mirror}\u0000${topic.name}`;
      if (topic.desired === "REMOVED" || byName.get(topic.name)?.topicId === topic.topicId) {
        this.missing.delete(key);
        continue;
      }
      const seenMissing = (this.missing.get(key) ?? 0) + 1;
      this.missing.set(key, seenMissing);
      if (seenMissing < DELETED_TOPIC_OBSERVATIONS) continue;
      const refusal = byName.has(topic.name) ? undefined : await this.refusedByName(source, topic);
      if (refusal === "present") {
        this.missing.delete(key);
        continue;
      }
      if (refusal === "unanswered") continue;
      const keys = Array.from({ length: topic.partitionCount }, (_, p) => partitionKey(topic, p));
      if (refusal) {
        await this.fail(mirror, keys, sourceTopicNotAuthorized(topic.name, refusal));
        continue;
      }
      if ((await this.fail(mirror, keys, SOURCE_TOPIC_DELETED)) > 0) deleted.push(topic.name);
    }
    return deleted;
  }

  /**
   * A topic the listing left out, asked for by name and id: "present" when the source answers for it after
   * all, the refusal when the principal may not describe it, undefined when the source says it has no such
   * topic (by that name and id), "unanswered" on any other failure (unreachable, no leader): a topic is
   * called deleted only on the source's word, so the next refresh asks again.
   */
  private async refusedByName(
    source: SourceCluster,
    topic: MirrorTopic,
  ): Promise<KafkaError | "present" | "unanswered" | undefined> {
    try {
      await source.listOffsets(topic.name, 0, -1n, topic.topicId);
      return "present";
    } catch (error) {
      if (!(error instanceof KafkaError)) return "unanswered";
      if (error.errorName.endsWith("_AUTHORIZATION_FAILED")) return error;
      return NO_SUCH_TOPIC.has(error.errorName) ? undefined : "unanswered";
    }
  }

  private async fail(
    mirror: string,
    keys: ReturnType<typeof partitionKey>[],
    message: string,
  ): Promise<number> {
    const views = viewsByPartition(
      this.options.coordinators.describe(mirror),
      this.options.destination.controller.image,
    );
    const { failed, errors } = await failPartitions(this.options.coordinators, keys, views, message);
    for (const e of errors) if (!isStateRace(e)) this.error(mirror, "MirrorStateCommandError", e);
    return failed;
  }

  /** Creates mirror topics for source topics matching the mirror's patterns that the destination lacks. */
  /**
   * The source topics whose configs a refresh needs: those this mirror mirrors (their configs are synced)
   * and those it would start mirroring (created with the source's configs). Not the rest of the source.
   */
  private configsWanted(def: MirrorDefinition): (topic: string) => boolean {
    const image = this.options.destination.controller.image;
    const mirrored = new Set(mirrorTopics(image, def.name).map((t) => t.name));
    let filter: ReturnType<typeof topicFilter> | undefined;
    try {
      filter = topicFilter(def);
    } catch {
      filter = undefined; // discoverTopics reports the bad pattern
    }
    return (name) => mirrored.has(name) || (filter?.matches(name) === true && !image.topic(name));
  }

  private discoverTopics(
    def: MirrorDefinition,
    sourceTopics: readonly SourceTopicInfo[],
    report: RefreshReport,
  ): string[] {
    const created: string[] = [];
    let filter: ReturnType<typeof topicFilter>;
    try {
      filter = topicFilter(def);
    } catch (error) {
      this.error(def.name, "TopicMetadataRefreshError", error);
      return created;
    }
    const image = this.options.destination.controller.image;
    const ours = new Set(mirrorTopics(image, def.name).map((t) => t.name));
    const reported = this.skipped.get(def.name) ?? new Set<string>();
    const conflicts = new Set<string>();
    for (const topic of sourceTopics) {
      if (!filter.matches(topic.name) || ours.has(topic.name)) continue;
      const local = image.topic(topic.name);
      // A name that differs from a local topic's only by '.' and '_' is refused by the controller as Kafka
      // refuses it: a conflict like a same-named topic, not a sync error of every refresh.
      const colliding = local ? undefined : image.collidingTopic(topic.name);
      if (local || colliding !== undefined) {
        const why = local
          ? skippedTopicReason(topic, local)
          : collidingTopicReason(topic.name, colliding!, image.topic(colliding!)?.configs);
        conflicts.add(topic.name);
        report.skippedTopics.push({ topic: topic.name, why });
        if (!reported.has(topic.name)) this.options.onTopicSkipped?.(def.name, topic.name, why);
        continue;
      }
      try {
        createMirrorTopic(this.options.destination, def, topic);
        created.push(topic.name);
      } catch (error) {
        this.error(def.name, "TopicMetadataRefreshError", error);
      }
    }
    // A conflict that cleared (the local topic deleted, the pattern changed) is reported again if it returns.
    this.skipped.set(def.name, conflicts);
    return created;
  }

  /** Partition count and configs of one ACTIVE mirror topic. */
  private syncTopic(
    def: MirrorDefinition,
    topic: MirrorTopic,
    source: SourceTopicInfo,
    report: RefreshReport,
  ): void {
    const controller = this.options.destination.controller;
    const count = sourcePartitionCount(source);
    if (count > topic.partitionCount) {
      try {
        controller.createPartitions(topic.name, count);
        report.createdPartitions.push({ topic: topic.name, count });
      } catch (error) {
        this.error(def.name, "TopicMetadataRefreshError", error);
      }
    }
    // Unknown configs (not asked for: an --add made the topic a mirror while this refresh asked the source;
    // or refused by the source) change nothing: an empty set here would delete every synced config.
    if (!def.configsSyncEnable || source.configs === undefined) return;
    // A value this cluster refuses is left out (`topicConfigSyncOps`), so that it does not block the topic's
    // other configs (an alter is all or nothing), and is reported once, not on every refresh.
    const refused = refusedTopicConfigs(source.configs, def.topicPropertiesExclude);
    for (const r of this.refusedConfigs.newlyRefused(def.name, topic.name, refused)) {
      this.error(
        def.name,
        "TopicConfigSyncError",
        refusedConfigError(def.name, topic.name, r, topic.configs.get(r.name)),
      );
    }
    try {
      const ops = topicConfigSyncOps(source.configs, topic.configs, def.topicPropertiesExclude);
      if (ops.length === 0) return;
      controller.incrementalAlterConfigs({ type: "topic", name: topic.name }, ops);
      report.alteredConfigs.push(topic.name);
    } catch (error) {
      this.error(def.name, "TopicConfigSyncError", error);
    }
  }

  private async syncGroups(
    def: MirrorDefinition,
    source: SourceCluster,
    topics: () => ReadonlySet<string>,
    report: RefreshReport,
  ): Promise<void> {
    if (topics().size === 0) return;
    try {
      // A source broker that cannot be asked now (or a group's coordinator) is reported, and the groups of
      // the others are synced (MirrorMaker 2 takes `listConsumerGroups().valid()`). Groups not listed this
      // time keep what was synced of them: nothing is written for them, nothing deleted.
      const groups = await source.listGroupOffsets({
        onError: (error) => this.error(def.name, "ConsumerGroupOffsetSyncError", error),
      });
      report.groups = syncGroupOffsets(this.options.destination, groups, groupFilter(def), topics());
      for (const e of report.groups.errors) {
        // A group that became active between the check and the write: its members' commits win.
        if (e.error instanceof Error && "errorName" in e.error && e.error.errorName === "NON_EMPTY_GROUP")
          continue;
        this.error(def.name, "ConsumerGroupOffsetSyncError", e.error);
      }
    } catch (error) {
      this.error(def.name, "ConsumerGroupOffsetSyncError", error);
    }
  }

  private async syncAcls(
    def: MirrorDefinition,
    source: SourceCluster,
    topics: () => ReadonlySet<string>,
    report: RefreshReport,
  ): Promise<void> {
    // No ACTIVE topic (all paused, or all failed over): no ACL sync, as no group offset sync. The GROUP
    // bindings are not tied to a topic, and the old primary's clean-up after a failover would otherwise
    // delete the ones the new primary's consumers use.
    if (!def.aclsSyncEnable || topics().size === 0) return;
    try {
      const acls = await source.describeAcls();
      // A source without an authorizer: its ACLs are unknown, not empty; the bindings here stay.
      if (acls === undefined) return;
      const active = topics();
      if (active.size === 0) return;
      // What the mirror owns lives with each binding in the destination's metadata log, not here.
      report.acls = reconcileAcls(this.options.destination.authorizer, acls, {
        mirror: def.name,
        topics: active,
        groups: groupFilter(def),
        include: def.aclsInclude,
      });
    } catch (error) {
      this.error(def.name, "AclSyncError", error);
    }
  }

  private error(mirror: string, kind: SyncErrorKind, error: unknown): void {
    // A refresh still running when its mirror was deleted fails on the closed source: not an error of any
    // mirror now (its metrics were forgotten; a mirror created again under the name starts from zero).
    if (!this.options.destination.controller.image.mirrors.has(mirror)) return;
    this.running.get(mirror)?.errors.push({
      kind,
      message: error instanceof Error ? error.message : String(error),
    });
    this.options.metrics?.recordSyncError(mirror, kind);
    this.options.onSyncError?.(mirror, kind, error);
  }

  private track<T>(promise: Promise<T>): Promise<T> {
    this.pending.add(promise);
    void promise.then(
      () => this.pending.delete(promise),
      () => this.pending.delete(promise),
    );
    return promise;
  }
}

/**
 * Why a matched source topic is not mirrored when this cluster has a topic whose name differs from it only
 * by '.' and '_' (Kafka refuses to create it: the two would share their metric names), and what to do.
 */
function collidingTopicReason(
  topic: string,
  colliding: string,
  configs: ReadonlyMap<string, string> | undefined,
): string {
  const owner = parseMirrorNameConfig(configs?.get(MIRROR_NAME_CONFIG));
  const whose =
    owner !== undefined && owner.desired !== "REMOVED" ? ` (of mirror '${owner.mirror}')` : " of its own";
  return `topic '${topic}' on the source matches the mirror's topics.include, but this cluster has topic '${colliding}'${whose}, whose name differs only by '.' and '_': Kafka refuses such a topic (the two would share their metric names), so it is not mirrored. Leave one of the two out with topics.exclude, or delete or rename the local topic.`;
}

/**
 * Why a matched source topic is not mirrored, and what to do: this cluster already has a topic of that
 * name, another mirror's, the very same topic (same id) not in the mirror, or one of its own.
 */
function skippedTopicReason(
  topic: Pick<SourceTopicInfo, "name" | "topicId">,
  local: { topicId: string; configs: ReadonlyMap<string, string> },
): string {
  const owner = parseMirrorNameConfig(local.configs.get(MIRROR_NAME_CONFIG));
  const matched = `topic '${topic.name}' on the source matches the mirror's topics.include`;
  if (owner !== undefined && owner.desired !== "REMOVED")
    return `${matched}, but this cluster's topic of that name belongs to mirror '${owner.mirror}', so it is not mirrored here. Leave it out of one of the two mirrors with topics.exclude.`;
  // The same topic (an old primary before its failback, a mirror deleted and created again): its records
  // are worth keeping, so never advise deleting it.
  if (local.topicId === topic.topicId)
    return `${matched} and is this cluster's topic of that name (same topic id), which is not in the mirror: add it with --add to mirror it again (a failback), or leave it out with topics.exclude.`;
  const failedOver = owner ? ` (failed over from mirror '${owner.mirror}')` : "";
  return `${matched}, but this cluster has a topic of that name of its own${failedOver}, so it is not mirrored. Delete or rename the local topic, or leave it out with topics.exclude.`;
}
