import { ClusterError, type KafkaCluster, type KafkaErrorName, shownValue } from "@cluster-mirror/cluster";
import { KafkaError } from "@cluster-mirror/protocol";
import { createMirrorTopic, sourcePartitionCount } from "../metadata/mirror-topic-factory";
import {
  compareStrings,
  type DesiredMirrorState,
  MIRROR_NAME_CONFIG,
  type MirrorTopic,
  mirrorNameValue,
  mirrorTopics,
} from "../metadata/mirror-topics";
import { connectionFingerprint, SourceConnections } from "../metadata/source-connections";
import { driveTopics, isCoordinatorLoading, readOnlyIn, viewsByPartition } from "../metadata/state-driver";
import type { PartitionOffsets } from "../metrics/mirror-metrics";
import type {
  MirrorCoordinators,
  MirrorPartitionKey,
  MirrorPartitionView,
  SourceCluster,
  SourceConnector,
  SourceTopicInfo,
} from "../ports";
import { loopingMirror, loopPath } from "../source/mirror-listing";
import type { MirrorDescribeRow, MirrorListing } from "./describe-format";
import {
  InvalidMirrorConfigError,
  InvalidMirrorNameError,
  MirrorAlreadyExistsError,
  MirrorCommandTimeoutError,
  MirrorLoopError,
  MirrorStateError,
  SourceFailoverInProgressError,
  SourceUnreachableError,
  UnknownMirrorError,
  UnsafeTruncationError,
} from "./errors";
import { type FailoverPreviewRow, previewFailover } from "./failover-preview";
import { type CheckedLogEnd, type LocalWritesAtRisk, localWritesAtRisk, writtenSince } from "./local-writes";
import { MirrorChanges } from "./mirror-changes";
import { MirrorCommandQueue } from "./mirror-command-queue";
import {
  checkMirrorConfigKeys,
  compilePattern,
  LOG_START_OFFSET_SYNC_FOR_NEW_MIRRORS,
  MIRROR_CONFIG_DEFAULTS,
  MIRROR_CONFIG_KEYS,
  type MirrorDefinition,
  NameFilter,
  parseMirrorConfig,
  SENSITIVE_MIRROR_CONFIGS,
  splitList,
  topicFilter,
  validateMirrorName,
} from "./mirror-config";
import { alterMirrorConfigs, type MirrorConfigChanges } from "./mirror-config-alter";
import { describeMirrorPartitions } from "./mirror-describe";
import { checkMillis, checkTopicSelection } from "./option-checks";
import { type PromoteOptions, type PromoteResult, promoteTopics } from "./promote";
import {
  commandTimeout,
  DEFAULT_API_TIMEOUT_MS,
  type RecordDeadline,
  type RecordWait,
  recordDeadline,
  recordedWithin,
} from "./recorded-within";
import { type RecoverResult, recoverTopics } from "./recover";
import {
  checkPartitionStates,
  patternHint,
  selectMirrorTopics,
  topicList,
  topicPattern,
  topicsChangedMessage,
  untouchedTopics,
} from "./topic-selection";
import { type MirrorVerification, verifyMirror } from "./verify";

/** Wiring of the admin API. */
export interface MirrorAdminOptions {
  /** The destination cluster: mirror definitions live in its metadata log. */
  destination: KafkaCluster;
  /** Opens sources from mirror definitions (share one `SourceConnections` with the metadata manager). */
  sources: SourceConnector | SourceConnections;
  coordinators: MirrorCoordinators;
  /** Source HW and destination LEO as the fetchers last saw them (FetcherManager.offsets), for lag. */
  offsets?: PartitionOffsets;
  /**
   * The engine's change notifications (ClusterMirroring passes its own), which promote waits on. Without
   * them a promote re-checks only on metadata changes and its timeout.
   */
  changes?: MirrorChanges;
  /**
   * Waits until the coordinators of these partitions have loaded (`ClusterMirroring` waits on shard
   * activations, bounded by `coordinatorLoadTimeoutMs`); without it a command sent while they load fails
   * with COORDINATOR_NOT_AVAILABLE.
   */
  awaitCoordinators?: (keys: readonly MirrorPartitionKey[]) => Promise<void>;
  /**
   * Called once `alterMirrorConfig` stored a change (ClusterMirroring refreshes the mirror's metadata at
   * once, so new topic or group patterns do not wait a whole refresh interval).
   */
  onMirrorAltered?: (mirror: string) => void;
  /**
   * A promote's final metadata sync (ClusterMirroring runs a full one, group offsets included), after the
   * catch-up and before the failover, as Cluster Linking's promote does.
   */
  syncBeforePromote?: (mirror: string) => Promise<unknown>;
  /**
   * The error of a closed engine (ClusterMirroring passes MirroringClosedError once closed), undefined while
   * it runs: a promote in flight ends with it at once instead of at its timeout.
   */
  closed?: () => Error | undefined;
  /**
   * Kafka's `default.api.timeout.ms`: how long add, remove, pause, resume and recover wait for the mirror
   * coordinators to record their commands in `__mirror_state` before they fail with a retriable
   * MirrorCommandTimeoutError (default {@link DEFAULT_API_TIMEOUT_MS}, 60 s).
   */
  defaultApiTimeoutMs?: number;
}

/** Options of {@link MirrorAdmin.addTopics}. */
export interface AddTopicsOptions {
  /** Replication factor of the mirror topics created (default min(3, brokers)). */
  replicationFactor?: number;
  /**
   * Let the failback truncation drop records written on this cluster since a topic's failover (Cluster
   * Linking's truncate-and-restore; `--truncate-local-writes`). Without it such an add is refused with
   * UnsafeTruncationError naming the partitions and record counts.
   */
  truncateLocalWrites?: boolean;
}

/** The answer of add/remove/pause/resume: the topics acted on (sorted) and the seeds' message. */
export interface MirrorTopicsResult {
  topics: string[];
  message: string;
}

/**
 * A mirror's config as `describeMirrorConfig` shows it: every known key with its effective value, null for
 * a secret (`isSensitive`, see SENSITIVE_MIRROR_CONFIGS).
 */
export interface MirrorConfigDescription {
  name: string;
  configs: { name: string; value: string | null; isDefault: boolean; isSensitive: boolean }[];
}

/** What `alterMirrorConfig` stored, and what the change leaves as it was. */
export interface AlteredMirrorConfig extends MirrorConfigDescription {
  /**
   * The mirror's topics (mirroring or paused) that the old `topics.include` / `topics.exclude` matched and
   * the new ones do not, sorted. Patterns only choose which source topics are added: these stay mirrored
   * until removed (`--remove`, a failover) or paused.
   */
  unmatchedTopics: string[];
}

/** What `drive` did: the topics it sent a command to itself, and the views it last sent them from. */
interface Driven {
  commanded: ReadonlySet<string>;
  views: ReadonlyMap<string, MirrorPartitionView>;
}

/** How many times a drive sends commands refused only because their coordinator unloaded (see `drive`). */
const DRIVE_ATTEMPTS = 3;

/**
 * The mirror admin API (KIP-1279's Admin methods and `kafka-mirrors` actions), over the destination's
 * controller, the coordinators and the sources. Mirror definitions are the controller's (`putMirror`,
 * like the CLUSTER_MIRROR config resource); topic membership is each topic's `mirror.name` config, whose
 * `.paused` / `.removed` suffix the metadata manager turns into PAUSE / STOP; this API also sends the
 * command at once so a caller does not wait for the next refresh.
 */
export class MirrorAdmin {
  private readonly options: MirrorAdminOptions;
  private readonly sources: SourceConnections;
  private readonly changes: MirrorChanges;
  private readonly commands = new MirrorCommandQueue();

  constructor(options: MirrorAdminOptions) {
    this.options = options;
    this.changes = options.changes ?? new MirrorChanges(options.destination.scheduler);
    this.sources =
      options.sources instanceof SourceConnections ? options.sources : new SourceConnections(options.sources);
  }

  /**
   * Creates a mirror (CreateClusterMirror): validates the name and configs, connects to the source and pins
   * its cluster id as `source.cluster.id` (a given one must match). SourceUnreachableError when the source
   * does not answer; INVALID_CONFIG when it is this very cluster or another than the pinned one.
   * Runs in the mirror's command queue: of two creates of one name, the later one waits for the earlier
   * and gets MirrorAlreadyExistsError once that succeeded (as Kafka's controller answers
   * TOPIC_ALREADY_EXISTS to the second of two CreateTopics), instead of storing its configs over the
   * mirror the first one was told it created.
   */
  async createMirror(name: string, configs: Readonly<Record<string, string>>): Promise<MirrorListing> {
    this.refuseIfClosed();
    validateMirrorName(name);
    // At once for a mirror that exists now, whatever is queued behind it (a deletion included).
    if (this.controller.image.mirrors.has(name)) throw new MirrorAlreadyExistsError(name);
    return this.queued(name, () => this.createMirrorNow(name, configs));
  }

  private async createMirrorNow(
    name: string,
    configs: Readonly<Record<string, string>>,
  ): Promise<MirrorListing> {
    // Again in the queue: a create of the same name queued before this one may have stored it.
    if (this.controller.image.mirrors.has(name)) throw new MirrorAlreadyExistsError(name);
    checkMirrorConfigKeys(configs);
    const def = parseMirrorConfig(name, configs);
    const clusterId = await this.sourceCall(def, (s) => s.clusterId()).catch((error: unknown) => {
      this.sources.drop(name);
      throw error;
    });
    const K = MIRROR_CONFIG_KEYS;
    if (def.sourceClusterId !== undefined && def.sourceClusterId !== clusterId) {
      throw new InvalidMirrorConfigError(
        K.SOURCE_CLUSTER_ID,
        `${K.SOURCE_CLUSTER_ID}=${def.sourceClusterId} but ${K.BOOTSTRAP_SERVERS}=${def.bootstrapServers} reaches cluster ${clusterId}. Fix one of them, or leave ${K.SOURCE_CLUSTER_ID} out to pin the cluster found.`,
      );
    }
    if (clusterId === this.options.destination.clusterId) {
      throw new InvalidMirrorConfigError(
        K.BOOTSTRAP_SERVERS,
        `${K.BOOTSTRAP_SERVERS}=${def.bootstrapServers} reaches this cluster (${clusterId}); a mirror needs another cluster as its source.`,
      );
    }
    // log.start.offset.sync.enable is stored as created: a mirror an earlier version created (without it)
    // keeps what its source deletes, as it always did, instead of starting to trim its copy on upgrade.
    // The source answered while close() ran: a closed engine stores no mirror it will never run.
    this.refuseIfClosed();
    this.controller.putMirror(name, {
      [K.LOG_START_OFFSET_SYNC_ENABLE]: LOG_START_OFFSET_SYNC_FOR_NEW_MIRRORS,
      ...configs,
      [K.SOURCE_CLUSTER_ID]: clusterId,
    });
    return this.listing(name);
  }

  /** Every mirror with its source and topics (ListClusterMirrors), sorted by name. */
  listMirrors(): MirrorListing[] {
    this.refuseIfClosed();
    return this.storedMirrors();
  }

  /**
   * What {@link listMirrors} answers, also once the engine is closed: the mirrors the cluster's metadata
   * holds. The cluster answers them as a source (`asSource`) whether its engine runs or not, as a Kafka
   * broker answers ListClusterMirrors from its metadata: another cluster's mirror-loop check asks for them.
   */
  storedMirrors(): MirrorListing[] {
    return [...this.controller.image.mirrors.keys()].sort(compareStrings).map((name) => this.listing(name));
  }

  /**
   * A mirror's effective configs: the stored ones and the defaults of the rest, sorted by key; secrets
   * (passwords, a private key) are given as null.
   */
  describeMirrorConfig(name: string): MirrorConfigDescription {
    this.refuseIfClosed();
    const stored = this.requireMirror(name).configs;
    const keys = new Set([...Object.keys(stored), ...Object.keys(MIRROR_CONFIG_DEFAULTS)]);
    return {
      name,
      configs: [...keys].sort(compareStrings).map((key) => {
        const isSensitive = SENSITIVE_MIRROR_CONFIGS.has(key);
        return {
          name: key,
          value: isSensitive ? null : (stored[key] ?? MIRROR_CONFIG_DEFAULTS[key]!),
          isDefault: stored[key] === undefined,
          isSensitive,
        };
      }),
    };
  }

  /**
   * Changes a mirror's config (AlterClusterMirror; `kafka-mirrors --alter`), e.g. a rotated SASL password,
   * a source that moved to new brokers, other topic patterns. Validated as at creation
   * (`alterMirrorConfigs`); a change of how the source is reached is tried first on a connection of its own
   * (`probeSource`), and refused unless it reaches the very cluster the mirror copies (`source.cluster.id`;
   * pinned now for a mirror stored without one) and its principal may describe the mirror's topics:
   * SourceUnreachableError when it does not answer, INVALID_CONFIG for refused credentials, another cluster
   * or this one, INVALID_MIRROR_STATE when the mirror was changed (or deleted and created again) meanwhile.
   * A refused change changes nothing. Once stored, the engine uses it from its next step (the next fetch,
   * and a metadata refresh started at once through `onMirrorAltered`). Returns the config as
   * `describeMirrorConfig` shows it, with the mirrored topics the new topic patterns no longer match
   * (`unmatchedTopics`: they stay mirrored).
   */
  async alterMirrorConfig(name: string, changes: MirrorConfigChanges): Promise<AlteredMirrorConfig> {
    this.refuseIfClosed();
    return this.queued(name, async () => {
      const K = MIRROR_CONFIG_KEYS;
      // The image replaces a mirror's configs object on every change: the same object after the probe
      // means no delete, create or other change came in between.
      const stored = this.controller.image.mirrors.get(name) ?? this.requireMirror(name).configs;
      const configs = alterMirrorConfigs(stored, changes);
      const def = parseMirrorConfig(name, configs);
      const pinned = configs[K.SOURCE_CLUSTER_ID];
      if (
        connectionFingerprint(stored) !== connectionFingerprint(configs) ||
        pinned !== stored[K.SOURCE_CLUSTER_ID]
      ) {
        const clusterId = await this.sourceCall(def, (s) => this.probeSource(s, name), "probe");
        const reaches = `${K.BOOTSTRAP_SERVERS}=${def.bootstrapServers} reaches cluster ${clusterId}`;
        if (pinned !== undefined && clusterId !== pinned) {
          throw new InvalidMirrorConfigError(
            K.BOOTSTRAP_SERVERS,
            `${reaches}, but mirror '${name}' copies cluster ${pinned} (${K.SOURCE_CLUSTER_ID}). Nothing was changed. Give the address of that cluster, or create another mirror for the other one.`,
          );
        }
        if (clusterId === this.options.destination.clusterId) {
          throw new InvalidMirrorConfigError(
            K.BOOTSTRAP_SERVERS,
            `${reaches}: this very cluster; a mirror needs another cluster as its source. Nothing was changed.`,
          );
        }
        // A mirror stored before the id was pinned gets it now, as a creation pins it.
        if (pinned === undefined) configs[K.SOURCE_CLUSTER_ID] = clusterId;
      }
      // The source answered while close() ran: a closed engine stores no change (and then fails).
      this.refuseIfClosed();
      if (this.controller.image.mirrors.get(name) !== stored) {
        this.requireMirror(name);
        throw new MirrorStateError(
          name,
          `Mirror '${name}' was changed (or deleted and created again) while its new settings were tried on the source. Nothing was changed: check it (--describe-config --mirror ${name}) and alter it again.`,
        );
      }
      this.controller.putMirror(name, configs);
      this.options.onMirrorAltered?.(name);
      return {
        ...this.describeMirrorConfig(name),
        unmatchedTopics: this.unmatchedTopics(name, stored, def),
      };
    });
  }

  /**
   * The mirror's topics, not removed, that the `before` configs' topic patterns matched and `after`'s do
   * not. The old patterns are read on their own (each include that still compiles; none answered when an
   * exclude does not), so a stored key that a later validation refuses does not hide the answer.
   */
  private unmatchedTopics(
    name: string,
    before: Readonly<Record<string, string>>,
    after: MirrorDefinition,
  ): string[] {
    const K = MIRROR_CONFIG_KEYS;
    /** The key's patterns that compile, and whether every one did. */
    const compiled = (key: string): { patterns: RegExp[]; all: boolean } => {
      const patterns: RegExp[] = [];
      const list = splitList(before[key] ?? MIRROR_CONFIG_DEFAULTS[key]);
      for (const p of list) {
        try {
          patterns.push(compilePattern(key, p));
        } catch {}
      }
      return { patterns, all: patterns.length === list.length };
    };
    const exclude = compiled(K.TOPICS_EXCLUDE);
    // Without one of its excludes the old filter would match topics it kept out: nothing to compare.
    if (!exclude.all) return [];
    const was = new NameFilter(compiled(K.TOPICS_INCLUDE).patterns, exclude.patterns);
    const is = topicFilter(after);
    return mirrorTopics(this.controller.image, name)
      .filter((t) => t.desired !== "REMOVED" && was.matches(t.name) && !is.matches(t.name))
      .map((t) => t.name);
  }

  /**
   * What a changed connection must do before it is stored: answer with its cluster id, and describe the
   * mirror's topics (as the fetchers will ask for their offsets), so credentials without the rights the
   * mirror needs are refused now instead of failing its partitions later. Returns the cluster id.
   */
  private async probeSource(source: SourceCluster, mirror: string): Promise<string> {
    const clusterId = await source.clusterId();
    const topics = mirrorTopics(this.controller.image, mirror).filter((t) => t.desired !== "REMOVED");
    const stored = this.controller.image.mirrors.get(mirror) ?? {};
    // One partition per topic. Kafka refuses a topic by name to a principal without DESCRIBE
    // (TOPIC_AUTHORIZATION_FAILED, whether it exists or not). UNKNOWN_TOPIC_OR_PARTITION for a topic the
    // mirror's running connection still sees (a source that hides topics that way) is also one the new
    // settings may not read. A topic gone for both is the mirror's own business as it runs (deleted).
    const refusals = await Promise.all(
      topics.slice(0, 50).map(async (t) => {
        try {
          await source.listOffsets(t.name, 0, -1n);
          return undefined;
        } catch (error) {
          if (!(error instanceof KafkaError)) return undefined;
          if (error.errorName.endsWith("_AUTHORIZATION_FAILED")) return `${t.name}: ${error.message}`;
          if (error.errorName !== "UNKNOWN_TOPIC_OR_PARTITION") return undefined;
          const seenNow = await this.sources
            .get(mirror, stored)
            .listOffsets(t.name, 0, -1n)
            .then(
              () => true,
              () => false,
            );
          return seenNow ? `${t.name}: unknown to the new settings' principal (${error.message})` : undefined;
        }
      }),
    );
    const denied = refusals.filter((r): r is string => r !== undefined);
    if (denied.length > 0) {
      throw new InvalidMirrorConfigError(
        "sasl.jaas.config",
        `The new settings reach the source, but their principal may not describe ${denied.length} of mirror '${mirror}''s topics (${denied.join("; ")}). Nothing was changed: grant that principal DESCRIBE and READ on them, or give other credentials.`,
      );
    }
    return clusterId;
  }

  /**
   * Deletes a mirror (DeleteClusterMirror). Refused (INVALID_MIRROR_STATE) while any of its topics is still
   * in the mirror (mirroring or paused) or still failing over: remove them first and wait until every
   * partition is STOPPED, so deleting never leaves a read-only topic behind. Then writes the tombstones of
   * its partitions to `__mirror_state`, drops the definition, clears `mirror.name` from its (now ordinary,
   * writable) topics, and makes the ACL bindings it synced the cluster's own (they stay, owned by no mirror).
   */
  async deleteMirror(name: string): Promise<void> {
    this.refuseIfClosed();
    // In the mirror's command queue: no topic is added to this mirror between the check that it has none
    // and the deletion (it would keep the deleted mirror's `mirror.name`, read-only for good).
    return this.queued(name, () => this.deleteMirrorNow(name));
  }

  private async deleteMirrorNow(name: string): Promise<void> {
    this.requireMirror(name);
    const topics = mirrorTopics(this.controller.image, name);
    const inMirror = topics.filter((t) => t.desired !== "REMOVED").map((t) => t.name);
    if (inMirror.length > 0) {
      throw new MirrorStateError(
        name,
        `Mirror '${name}' still has ${inMirror.length} topic(s) ${topicList(inMirror)}. Remove them first (--remove --topic '.*' --mirror ${name}), wait until their partitions are STOPPED, then delete the mirror.`,
      );
    }
    const busy = this.options.coordinators
      .describe(name)
      .filter((v) => v.state !== "STOPPED" && v.state !== "UNKNOWN")
      .map((v) => `${v.key.topic}-${v.key.partition} (${v.state})`);
    if (busy.length > 0) {
      throw new MirrorStateError(
        name,
        `Mirror '${name}' still has partitions failing over: ${busy.join(", ")}. Wait until they are STOPPED (--describe --mirror ${name}), then delete the mirror.`,
      );
    }
    // The tombstones need the coordinators: on a closed engine none will load again, and "retry after its
    // load" (COORDINATOR_NOT_AVAILABLE) would send the caller waiting for nothing.
    const closed = this.options.closed?.();
    if (closed !== undefined) throw closed;
    await this.options.coordinators.tombstoneMirror(name);
    this.controller.deleteMirror(name);
    this.sources.drop(name);
    // The ACL bindings it synced stay, as its topics do, and become the cluster's own: a mirror created
    // again under the name must not take them for its own and delete them when its source lacks them.
    this.options.destination.authorizer.disown(name);
    // The topics that name this mirror now, read after the wait above: another mirror's commands are not
    // queued behind this one, and one of them may have taken a topic this mirror failed over (a re-add
    // under a mirror from another source) meanwhile. Clearing its `mirror.name` would leave that mirror's
    // partitions copying into a topic no mirror owns, that no --remove can fail over.
    for (const t of mirrorTopics(this.controller.image, name)) {
      this.controller.incrementalAlterConfigs({ type: "topic", name: t.name }, [
        { name: MIRROR_NAME_CONFIG, op: "DELETE" },
      ]);
    }
  }

  /**
   * `--add` / StartMirrorTopics: every source topic that `regex` matches as a whole name (and
   * `topics.exclude` does not) gets a destination mirror topic with the same name, id and partition count,
   * the source's configs minus the exclusion list, and `mirror.name=<mirror>`; a topic already there with the
   * same id (a removed one, or the old primary in a failback) just gets `mirror.name` back. The regex joins
   * `topics.include` so topics created later are discovered (a regex containing a comma cannot be stored in
   * that comma-separated list and is applied once). Each partition is sent START.
   * Refused before anything changes: a mirror loop (MirrorLoopError), and, unless
   * `options.truncateLocalWrites`, an add whose truncation would drop records written here since a topic's
   * failover (UnsafeTruncationError).
   * Message: `Added N topic(s) to mirror NAME: [t1, t2]`, then `; M already in the mirror, left as they are: [t3 (PAUSED)]`.
   */
  async addTopics(
    mirror: string,
    regex: string,
    options: AddTopicsOptions = {},
  ): Promise<MirrorTopicsResult> {
    this.refuseIfClosed();
    checkTopicSelection(regex);
    return this.queued(mirror, () => this.addTopicsNow(mirror, regex, options));
  }

  private async addTopicsNow(
    mirror: string,
    regex: string,
    options: AddTopicsOptions = {},
  ): Promise<MirrorTopicsResult> {
    const def = this.requireMirror(mirror);
    const pattern = topicPattern(regex);
    const filter = topicFilter(def);
    const wanted = (name: string) => pattern.test(name) && !filter.excluded(name);
    const sourceTopics = await this.sourceCall(def, (s) => s.describeTopics({ configsOf: wanted }));
    const matched = sourceTopics
      .filter((t) => pattern.test(t.name) && !filter.excluded(t.name))
      .sort((a, b) => compareStrings(a.name, b.name));
    if (matched.length === 0) {
      throw new ClusterError(
        "UNKNOWN_TOPIC_OR_PARTITION",
        `No topic on the source of mirror '${mirror}' matches '${regex}' (the pattern must match whole topic names; topics.exclude=${def.topicsExclude.join(",")}). Nothing was added; check the pattern against the source's topics.${patternHint(regex)}`,
      );
    }
    const existing = matched.map((t) => this.checkAddable(mirror, t));
    this.checkReplicationFactor(matched, options.replicationFactor);
    this.checkPartitionCounts(mirror, matched);
    // Right after start the coordinators are still loading: their views would be missing from the checks
    // below and the START commands refused; wait for the owners of the partitions about to be added.
    await this.options.awaitCoordinators?.(
      matched.flatMap((t) =>
        Array.from({ length: sourcePartitionCount(t) }, (_, partition) => ({
          mirror,
          topic: t.name,
          topicId: t.topicId,
          partition,
        })),
      ),
    );
    const views = viewsByPartition(this.options.coordinators.describe(mirror), this.controller.image);
    const readded = existing.filter((t): t is MirrorTopic => t?.desired === "REMOVED");
    checkPartitionStates("START", readded, views, ["UNKNOWN", "STOPPED"]);
    await this.checkFailedOverElsewhere(mirror, matched);
    await this.checkNoLoop(def, matched);
    const checked: CheckedLogEnd[] = [];
    if (!options.truncateLocalWrites) {
      const local = matched.filter((_, i) => existing[i] === undefined || existing[i]?.desired === "REMOVED");
      await this.checkNoLocalWritesLost(def, local, views, checked);
    }
    // What the changes below could refuse, checked before the first: refused half way, an add left the
    // topics before changed (soak `active-passive` FC_SEED=24 x100: a re-add's new partition could not be
    // placed with a broker down, after its mirror.name was set, and the topic went back to a mirror).
    // Checked again with nothing awaited before the changes: commands of another mirror are not queued
    // behind this one, and one may have taken a topic (re-added it) while this one asked the source.
    for (const source of matched) this.checkAddable(mirror, source);
    this.checkFailedOverElsewhereNow(mirror, matched);
    for (const [i, source] of matched.entries()) this.validateTopicChanges(def, existing[i], source, options);
    // close() ran while the checks above awaited the source: a closed engine creates no mirror topic (read-only,
    // with nothing to copy into it) and sends no START.
    this.refuseIfClosed();
    // Records written while the check above awaited the source: from the mirror.name below on, none can be.
    const late = writtenSince(this.options.destination, checked);
    if (late.length > 0) throw new UnsafeTruncationError(def.name, late);
    for (const [i, source] of matched.entries()) {
      const current = existing[i];
      if (current === undefined && !this.controller.image.topic(source.name)) {
        createMirrorTopic(this.options.destination, def, source, options.replicationFactor);
        continue;
      }
      // The partitions first: the mirror.name is what makes the topic a mirror again.
      const dest = this.controller.image.topic(source.name)!;
      const count = sourcePartitionCount(source);
      if (count > dest.partitions.length) this.controller.createPartitions(source.name, count);
      if (current?.desired !== "ACTIVE" && current?.desired !== "PAUSED") {
        this.setMirrorName(source.name, mirror, "ACTIVE");
      }
    }
    if (!regex.includes(",") && !def.topicsInclude.includes(regex)) {
      this.putConfig(def, MIRROR_CONFIG_KEYS.TOPICS_INCLUDE, [...def.topicsInclude, regex].join(","));
    }
    const names = matched.map((t) => t.name);
    await this.drive(mirror, names, "add");
    // Topics the mirror already copied (or paused) are left as they are: said so, as pause and resume do.
    const kept = matched.flatMap((t, i) => {
      const desired = existing[i]?.desired;
      return desired === "ACTIVE" || desired === "PAUSED" ? [{ name: t.name, desired }] : [];
    });
    const added = names.filter((n) => !kept.some((k) => k.name === n));
    const already =
      kept.length === 0
        ? ""
        : `; ${kept.length} already in the mirror, left as they are: [${kept.map((k) => `${k.name}${k.desired === "PAUSED" ? " (PAUSED)" : ""}`).join(", ")}]`;
    return {
      topics: names,
      message: `Added ${added.length} topic(s) to mirror ${mirror}: ${topicList(added)}${already}`,
    };
  }

  /**
   * Kafka's `validateOnly` of the topic creation or partition raise an add makes for `source`: refused
   * (with what to do) before anything changes, such as a replication factor the live brokers cannot hold.
   */
  private validateTopicChanges(
    def: MirrorDefinition,
    current: MirrorTopic | undefined,
    source: SourceTopicInfo,
    options: AddTopicsOptions,
  ): void {
    const dest = this.controller.image.topic(source.name);
    const count = sourcePartitionCount(source);
    try {
      if (current === undefined && !dest) {
        createMirrorTopic(this.options.destination, def, source, options.replicationFactor, {
          validateOnly: true,
        });
      } else if (dest && count > dest.partitions.length) {
        this.controller.createPartitions(source.name, count, undefined, { validateOnly: true });
      }
    } catch (error) {
      if (!(error instanceof ClusterError)) throw error;
      const what = dest
        ? `raise '${source.name}' to the source's ${count} partitions`
        : `create '${source.name}'`;
      const live = this.controller.image.liveBrokers().length;
      const todo =
        !dest && error.errorName === "INVALID_REPLICATION_FACTOR"
          ? `give a replication factor of at most ${live} (the brokers running now: --replication-factor, or the mirror's default.replication.factor), or add it once more brokers run`
          : "try again once the cluster can";
      throw new ClusterError(
        error.errorName as KafkaErrorName,
        `Cannot add '${source.name}' to mirror '${def.name}': could not ${what}: ${error.message}. Nothing was added; ${todo}.`,
        { cause: error },
      );
    }
  }

  /**
   * `--replication-factor` only sizes the mirror topics an add creates; a topic already on this cluster
   * keeps its replicas (as Kafka's CreateTopics never changes an existing topic: that is a reassignment).
   * Asking for another factor would be ignored without a word, so it is refused before anything changes
   * (INVALID_REPLICATION_FACTOR); the same factor is accepted, so a repeated add stays idempotent.
   */
  private checkReplicationFactor(
    matched: readonly { name: string }[],
    replicationFactor: number | undefined,
  ): void {
    if (replicationFactor === undefined) return;
    if (!Number.isInteger(replicationFactor) || replicationFactor < 1) {
      throw new ClusterError(
        "INVALID_REPLICATION_FACTOR",
        `replicationFactor (--replication-factor) must be an integer >= 1, got ${shownValue(replicationFactor)}; nothing was added. Give a number such as 3, or leave it out for the mirror's default.replication.factor.`,
      );
    }
    const differing = matched.flatMap((t) => {
      const rf = this.controller.image.topic(t.name)?.partitions[0]?.replicas.length;
      return rf !== undefined && rf !== replicationFactor ? [`${t.name} (${rf})`] : [];
    });
    if (differing.length === 0) return;
    throw new ClusterError(
      "INVALID_REPLICATION_FACTOR",
      `--replication-factor ${replicationFactor} cannot apply to topic(s) that already exist on this cluster with another replication factor: ${differing.join(", ")}. It only sizes the mirror topics an add creates; nothing was added. Leave --replication-factor out (they keep theirs), or change it with a partition reassignment.`,
    );
  }

  /**
   * A topic that has more partitions here than on the source cannot be mirrored whole: the extra
   * partitions have nothing to copy and Kafka cannot remove partitions. Typical after a failover: the old
   * primary added a partition its mirror never synced, and a failback would leave it FAILED for good.
   * Refused before anything changes, saying how to match the counts.
   */
  private checkPartitionCounts(mirror: string, matched: readonly SourceTopicInfo[]): void {
    const wider = matched.flatMap((t) => {
      const here = this.controller.image.topic(t.name)?.partitions.length;
      const there = sourcePartitionCount(t);
      return here !== undefined && here > there ? [{ name: t.name, here, there }] : [];
    });
    if (wider.length === 0) return;
    const list = wider.map((t) => `${t.name} (${t.here} here, ${t.there} on the source)`).join(", ");
    const first = wider[0]!;
    throw new ClusterError(
      "INVALID_PARTITIONS",
      `cannot add ${list} to mirror '${mirror}': this cluster has more partitions than the source, and the extra partitions would have nothing to mirror (partitions cannot be removed). Nothing was added. Raise the source's partition count first (e.g. kafka-topics --alter --topic ${first.name} --partitions ${first.here} on the source), then add again.`,
    );
  }

  /** Alias of {@link addTopics} (the later revision's StartMirrorTopics / `--start`). */
  startMirrorTopics(
    mirror: string,
    regex: string,
    options: AddTopicsOptions = {},
  ): Promise<MirrorTopicsResult> {
    return this.addTopics(mirror, regex, options);
  }

  /**
   * `--remove` / StopMirrorTopics (failover): sets `mirror.name=<mirror>.removed` on the mirror's matching
   * topics (mirroring or paused), drops `regex` from `topics.include` when it is there verbatim (so it is not
   * rediscovered), and sends STOP: the partitions go STOPPING -> STOPPED and become writable. Idempotent:
   * topics already removed (STOPPING or STOPPED) match as well and answer success; any of their partitions
   * a crash left short of STOPPING is sent STOP. When the coordinators of the partitions do not load
   * within `coordinatorLoadTimeoutMs` (a `__mirror_state` partition without a leader), a retriable
   * COORDINATOR_NOT_AVAILABLE and nothing changed.
   * Message: `Removed N topic(s) from mirror NAME: [t1]`.
   */
  async removeTopics(mirror: string, regex: string): Promise<MirrorTopicsResult> {
    this.refuseIfClosed();
    checkTopicSelection(regex);
    return this.queued(mirror, () => this.removeTopicsNow(mirror, regex));
  }

  /**
   * `beforeChange` runs once the coordinators loaded, right before the first change, and may refuse it by
   * throwing. `recordWithinMs` bounds the wait for the STOP commands to be recorded (a promote's own
   * `timeoutMs`, as a Kafka admin call's timeoutMs option overrides `default.api.timeout.ms`).
   */
  private async removeTopicsNow(
    mirror: string,
    regex: string,
    beforeChange?: () => void,
    recordWithinMs?: number,
  ): Promise<MirrorTopicsResult> {
    // Removed topics match too: a repeated `--remove` (after a timeout, or a crash half way) is accepted,
    // changes no config, and sends STOP only to the partitions that have not begun STOPPING yet.
    const select = () =>
      selectMirrorTopics(mirror, regex, mirrorTopics(this.controller.image, mirror), [
        "ACTIVE",
        "PAUSED",
        "REMOVED",
      ]);
    this.requireMirror(mirror);
    // The coordinators first, as pause and resume do: one whose `__mirror_state` partition has no leader
    // refuses the removal (COORDINATOR_NOT_AVAILABLE) before any `mirror.name` is set. Waited for after
    // the change (in `drive`), the refusal came with the topic already `.removed`, to be failed over
    // whenever that partition came back (soak `readd` FC_SEED=407: the only in-sync replica of
    // `__mirror_state-2` crashed right before an unplanned failover).
    await this.awaitCoordinatorsOf(mirror, select());
    // A promote checks its deadline and cancellation again: the wait may have outlasted them.
    beforeChange?.();
    // Read again after the wait: the mirror's config and topics as they are now.
    const def = this.requireMirror(mirror);
    const topics = select();
    for (const t of topics) if (t.desired !== "REMOVED") this.setMirrorName(t.name, mirror, "REMOVED");
    if (def.topicsInclude.includes(regex)) {
      this.putConfig(
        def,
        MIRROR_CONFIG_KEYS.TOPICS_INCLUDE,
        def.topicsInclude.filter((p) => p !== regex).join(","),
      );
    }
    const names = topics.map((t) => t.name);
    await this.drive(mirror, names, "remove", recordWithinMs);
    return {
      topics: names,
      message: `Removed ${names.length} topic(s) from mirror ${mirror}: ${topicList(names)}`,
    };
  }

  /** Alias of {@link removeTopics} (the later revision's StopMirrorTopics / `--stop`). */
  stopMirrorTopics(mirror: string, regex: string): Promise<MirrorTopicsResult> {
    return this.removeTopics(mirror, regex);
  }

  /**
   * `--promote` (see {@link promoteTopics}): the planned switch once writers on the source stopped. Waits
   * until every matching partition has lag 0 against the source's live high watermark, then fails the
   * topics over and waits until they are STOPPED. On timeout nothing is failed over and
   * PromoteTimeoutError names the partitions short of lag 0 with their lag.
   * Message: `Promoted N topic(s) of mirror NAME: [t1]; ...`.
   */
  async promoteTopics(mirror: string, regex: string, options: PromoteOptions = {}): Promise<PromoteResult> {
    this.refuseIfClosed();
    checkTopicSelection(regex);
    checkMillis("timeoutMs", options.timeoutMs);
    this.requireMirror(mirror);
    return promoteTopics(
      {
        destination: this.options.destination,
        sources: this.sources,
        coordinators: this.options.coordinators,
        changes: this.changes,
        syncBeforeFailover: this.options.syncBeforePromote,
        closed: this.options.closed,
        removeTopics: (m, r, beforeRemoval, recordWithinMs) =>
          this.commands.run(m, async () => {
            beforeRemoval();
            return this.removeTopicsNow(m, r, beforeRemoval, recordWithinMs);
          }),
      },
      mirror,
      regex,
      options,
    );
  }

  /**
   * `--failover-preview` (see {@link previewFailover}): what `--remove` would do now to each partition of the
   * mirror's topics matching `regex`: lag, open transactions aborted, LME recorded, leader epoch after the
   * bump, records a failback would truncate on the source. Changes nothing.
   */
  async previewFailover(mirror: string, regex: string): Promise<FailoverPreviewRow[]> {
    this.refuseIfClosed();
    checkTopicSelection(regex);
    this.requireMirror(mirror);
    return previewFailover(
      {
        destination: this.options.destination,
        sources: this.sources,
        coordinators: this.options.coordinators,
      },
      mirror,
      regex,
    );
  }

  /**
   * `cluster-mirror verify` (see {@link verifyMirror}): compares the mirror's topics on this cluster with
   * the source: batches byte for byte, offsets, topic ids, configs, ACLs and group offsets. Reads only;
   * SourceUnreachableError when the source does not answer.
   */
  async verifyMirror(mirror: string): Promise<MirrorVerification> {
    this.refuseIfClosed();
    const def = this.requireMirror(mirror);
    return this.sourceCall(def, (source) => verifyMirror(this.options.destination, def, source));
  }

  /**
   * `--pause`: sets `mirror.name=<mirror>.paused` and sends PAUSE; the topics stay read-only and get no
   * metadata sync. Every partition must be MIRRORING (or already pausing/paused), else the partition-level
   * InvalidMirrorStateError and nothing changes (also when a partition fails before its PAUSE commits: the
   * `mirror.name` is written back, see `driveOrRestore`). Message: `Paused mirroring for N topic(s): [t1]`,
   * then `; M already paused: [t2]` and `; K unchanged: [t3 (PAUSING)]` for matched topics it left as they
   * were (see `topicsChangedMessage`).
   */
  async pauseTopics(mirror: string, regex: string): Promise<MirrorTopicsResult> {
    this.refuseIfClosed();
    checkTopicSelection(regex);
    return this.queued(mirror, () => this.pauseTopicsNow(mirror, regex));
  }

  private async pauseTopicsNow(mirror: string, regex: string): Promise<MirrorTopicsResult> {
    this.requireMirror(mirror);
    const topics = selectMirrorTopics(mirror, regex, mirrorTopics(this.controller.image, mirror), [
      "ACTIVE",
      "PAUSED",
    ]);
    await this.awaitCoordinatorsOf(mirror, topics);
    const views = viewsByPartition(this.options.coordinators.describe(mirror), this.controller.image);
    checkPartitionStates("PAUSE", topics, views, ["MIRRORING", "PAUSING", "PAUSED"]);
    const changed = topics.filter((t) => t.desired !== "PAUSED");
    for (const t of changed) this.setMirrorName(t.name, mirror, "PAUSED");
    const names = topics.map((t) => t.name);
    const driven = await this.driveOrRestore(mirror, names, changed, "pause");
    const unchanged = untouchedTopics(topics, driven, "PAUSED", "PAUSED");
    return { topics: names, message: topicsChangedMessage("Paused", names, unchanged) };
  }

  /**
   * `--resume`: clears the `.paused` suffix and sends RESUME (straight to MIRRORING from the local log end).
   * Every partition must be PAUSED (or already mirroring), else InvalidMirrorStateError and nothing changes.
   * Message: `Resumed mirroring for N topic(s): [t1]`, then `; M already mirroring: [t2]` and
   * `; K unchanged: [t3 (PREPARING)]` for matched topics it left as they were (see `topicsChangedMessage`).
   */
  async resumeTopics(mirror: string, regex: string): Promise<MirrorTopicsResult> {
    this.refuseIfClosed();
    checkTopicSelection(regex);
    return this.queued(mirror, () => this.resumeTopicsNow(mirror, regex));
  }

  private async resumeTopicsNow(mirror: string, regex: string): Promise<MirrorTopicsResult> {
    this.requireMirror(mirror);
    const topics = selectMirrorTopics(mirror, regex, mirrorTopics(this.controller.image, mirror), [
      "ACTIVE",
      "PAUSED",
    ]);
    await this.awaitCoordinatorsOf(mirror, topics);
    const views = viewsByPartition(this.options.coordinators.describe(mirror), this.controller.image);
    const paused = topics.filter((t) => t.desired === "PAUSED");
    checkPartitionStates("RESUME", paused, views, ["PAUSED", "MIRRORING"]);
    for (const t of paused) this.setMirrorName(t.name, mirror, "ACTIVE");
    const names = topics.map((t) => t.name);
    const driven = await this.driveOrRestore(mirror, names, paused, "resume");
    const unchanged = untouchedTopics(topics, driven, "ACTIVE", "MIRRORING");
    return { topics: names, message: topicsChangedMessage("Resumed", names, unchanged) };
  }

  /**
   * `--recover` (the later revision's RecoverMirrorTopics; see {@link recoverTopics}): every FAILED partition
   * of the mirror's topics matching `regex` retries now with a fresh attempt budget, out of attempts or not,
   * once the source answers as the mirror's cluster and still holds the topics. The topics stay read-only.
   * Message: `Recovered N partition(s) of mirror NAME: [t-0, t-1]`.
   */
  async recoverTopics(mirror: string, regex: string): Promise<RecoverResult> {
    this.refuseIfClosed();
    checkTopicSelection(regex);
    return this.queued(mirror, () => {
      const def = this.requireMirror(mirror);
      // From the first RECOVER sent, as `drive`'s from its first command: the checks on the source before
      // it (a ListOffsets per topic over a slow link) are not the coordinators' to record in time.
      let deadline: RecordDeadline | undefined;
      return recoverTopics(
        {
          destination: this.options.destination,
          coordinators: this.options.coordinators,
          sourceCall: (call) => this.sourceCall(def, call),
          awaitCoordinatorsOf: (topics) => this.awaitCoordinatorsOf(mirror, topics),
          closed: this.options.closed,
          recordedWithin: (work, keys) => {
            deadline ??= recordDeadline(this.options.destination, this.apiTimeoutMs);
            return recordedWithin(work, deadline, {
              destination: this.options.destination,
              mirror,
              operation: "recover",
              topics: [...new Set(keys.map((k) => k.topic))].sort(compareStrings),
              keys,
              stillPending:
                "each FAILED partition's coordinator records its recover once its __mirror_state write goes through (free the disk space, or bring the brokers back), and it retries then; a partition whose coordinator moved meanwhile was not sent the recover again past the deadline, and stays FAILED until it is run again",
            });
          },
        },
        def,
        regex,
      );
    });
  }

  /**
   * `--describe [--mirror M] [--failed]`: one row per mirror partition (see `describeMirrorPartitions`),
   * sorted by mirror, topic, partition. UNKNOWN_MIRROR when `mirror` does not exist.
   */
  async describe(mirror?: string, options: { failedOnly?: boolean } = {}): Promise<MirrorDescribeRow[]> {
    this.refuseIfClosed();
    if (mirror !== undefined) this.requireMirror(mirror);
    return describeMirrorPartitions(
      {
        destination: this.options.destination,
        sources: this.sources,
        coordinators: this.options.coordinators,
        offsets: this.options.offsets,
      },
      mirror,
      options,
    );
  }

  /**
   * Runs `command` in the mirror's command queue, once every earlier command of it settled. A call made
   * before close() may reach its turn after it: then it fails with the MirroringClosedError and does nothing,
   * as a call made after close() does (alterMirrorConfig stored its change, then failed).
   */
  private queued<T>(mirror: string, command: () => Promise<T>): Promise<T> {
    return this.commands.run(mirror, async () => {
      this.refuseIfClosed();
      return command();
    });
  }

  /**
   * Every call of a closed engine (ClusterMirroring.close()) fails with its MirroringClosedError and changes
   * nothing: no coordinator of it records a command any more, and a mirror created then would never run.
   */
  private refuseIfClosed(): void {
    const closed = this.options.closed?.();
    if (closed !== undefined) throw closed;
  }

  private get controller() {
    return this.options.destination.controller;
  }

  private requireMirror(name: string): MirrorDefinition {
    if (typeof name !== "string")
      throw new InvalidMirrorNameError(shownValue(name), "a mirror name is a string");
    const stored = this.controller.image.mirrors.get(name);
    if (!stored)
      throw new UnknownMirrorError(name, [...this.controller.image.mirrors.keys()].sort(compareStrings));
    return parseMirrorConfig(name, stored);
  }

  private listing(name: string): MirrorListing {
    const def = this.requireMirror(name);
    return {
      name,
      sourceClusterId: def.sourceClusterId ?? "",
      sourceBootstrap: def.bootstrapServers,
      topics: mirrorTopics(this.controller.image, name)
        .filter((t) => t.desired !== "REMOVED")
        .map((t) => t.name),
    };
  }

  /** The destination topic a source topic would be added over, or undefined; throws when it belongs elsewhere. */
  private checkAddable(mirror: string, source: SourceTopicInfo): MirrorTopic | undefined {
    const dest = this.controller.image.topic(source.name);
    if (!dest) return undefined;
    const current = mirrorTopics(this.controller.image).find((t) => t.name === source.name);
    if (dest.topicId !== source.topicId) {
      // Another mirror's copy of another cluster's topic of that name (fan-in): never advise deleting it.
      const other = current !== undefined && current.mirror !== mirror && current.desired !== "REMOVED";
      throw new ClusterError(
        "INCONSISTENT_TOPIC_ID",
        other
          ? `Topic '${source.name}' on this cluster is mirror '${current.mirror}''s copy of another cluster's topic of that name (id ${dest.topicId}; the source's has id ${source.topicId}): one topic cannot take two sources' records. Leave '${source.name}' out of one of the two mirrors (topics.exclude), or mirror it to another cluster.`
          : `Topic '${source.name}' exists on this cluster with id ${dest.topicId}, but the source's has id ${source.topicId}; a mirror topic must keep the source's id. Delete or rename the local topic first.`,
      );
    }
    if (current && current.mirror !== mirror && current.desired !== "REMOVED") {
      throw new ClusterError(
        "INVALID_REQUEST",
        `Topic '${source.name}' is already mirrored by mirror '${current.mirror}'. Remove it from that mirror first.`,
      );
    }
    return current?.mirror === mirror ? current : undefined;
  }

  /**
   * Refuses topics another mirror of this cluster still fails over (removed from it, not STOPPED yet): its
   * STOPPING would write ABORT markers and its PID reset into a log this mirror already copies into (soak
   * `recreated-source` chain FC_SEED=246: a failback added the topic to the reverse mirror while the
   * unplanned failover it followed was still STOPPING, whose barrier then landed mid-copy). The same rule
   * as a re-add to the same mirror, which waits for STOPPED too.
   */
  private async checkFailedOverElsewhere(mirror: string, topics: readonly SourceTopicInfo[]): Promise<void> {
    for (const [other, ofOther] of this.removedElsewhere(mirror, topics))
      await this.awaitCoordinatorsOf(other, ofOther);
    this.checkFailedOverElsewhereNow(mirror, topics);
  }

  /** `checkFailedOverElsewhere` with nothing awaited: the coordinators' views as they are now. */
  private checkFailedOverElsewhereNow(mirror: string, topics: readonly SourceTopicInfo[]): void {
    for (const [other, ofOther] of this.removedElsewhere(mirror, topics)) {
      const views = viewsByPartition(this.options.coordinators.describe(other), this.controller.image);
      checkPartitionStates("START", ofOther, views, ["UNKNOWN", "STOPPED"]);
    }
  }

  /** These topics as other mirrors hold them removed (failed over, or failing over), by mirror. */
  private removedElsewhere(mirror: string, topics: readonly SourceTopicInfo[]): Map<string, MirrorTopic[]> {
    const names = new Set(topics.map((t) => t.name));
    const byMirror = new Map<string, MirrorTopic[]>();
    for (const t of mirrorTopics(this.controller.image)) {
      if (!names.has(t.name) || t.mirror === mirror || t.desired !== "REMOVED") continue;
      byMirror.set(t.mirror, [...(byMirror.get(t.mirror) ?? []), t]);
    }
    return byMirror;
  }

  /**
   * Refuses (MirrorLoopError) topics that the source itself mirrors from this cluster, directly or through
   * other clusters (its copy comes from a cluster whose copy comes from here: A -> B -> C -> A): adding them
   * would set `mirror.name` on this cluster's live topics, make every copy round the loop read-only, and
   * truncate this one to the source's copy, dropping what has not gone round yet. The PREPARING check of
   * the partition machine catches a direct loop, but only after the topic went read-only; here nothing has
   * changed yet. A chain (the source mirrors them from a third cluster that does not copy them from here)
   * is fine. The clusters up the source's chain are asked only when this cluster holds one of the topics as
   * its own (the same topic id, writable: the origin, or failed over), as only then can it be upstream.
   */
  private async checkNoLoop(def: MirrorDefinition, topics: readonly SourceTopicInfo[]): Promise<void> {
    const here = this.options.destination.clusterId;
    const held = new Map(mirrorTopics(this.controller.image).map((t) => [t.name, t.desired]));
    const own = topics.some((t) => {
      const desired = held.get(t.name);
      const sameTopic = this.controller.image.topic(t.name)?.topicId === t.topicId;
      return sameTopic && (desired === undefined || desired === "REMOVED");
    });
    const mirrors = await this.sourceCall(def, (s) => s.listMirrors(own ? { askedBy: [here] } : {}));
    for (const t of topics) {
      const m = loopingMirror(mirrors, t.name, here);
      if (m === undefined) continue;
      const looping = topics.filter((u) => loopingMirror([m], u.name, here) !== undefined).map((u) => u.name);
      throw new MirrorLoopError(def.name, looping, m.name, here, loopPath(m, t.name, here));
    }
  }

  /**
   * Refuses (UnsafeTruncationError) when mirroring these topics again would truncate records written here
   * since their failover: PREPARING aligns the log with the source's LME, and what was written locally
   * beyond it is not on the source.
   */
  private async checkNoLocalWritesLost(
    def: MirrorDefinition,
    topics: readonly SourceTopicInfo[],
    views: ReadonlyMap<string, MirrorPartitionView>,
    checked: CheckedLogEnd[],
  ): Promise<void> {
    const atRisk: LocalWritesAtRisk[] = [];
    for (const t of topics) {
      const local = this.controller.image.topic(t.name);
      if (!local) continue;
      const topic = { name: t.name, topicId: local.topicId, partitionCount: local.partitions.length };
      atRisk.push(
        ...(await localWritesAtRisk(
          this.options.destination,
          topic,
          (id, p) => this.sourceCall(def, (s) => s.lastMirrorEpoch(id, p)),
          // With the mirrored topic's id: a topic created again under the name since is refused, not read.
          (p, epoch) => this.sourceCall(def, (s) => s.endOffsetForEpoch(t.name, p, epoch, local.topicId)),
          (p) => {
            // The LME this cluster captured when the partition failed over (STOPPED) under this mirror.
            const view = views.get(`${t.name}:${p}`);
            return view?.state === "STOPPED" && view.key.topicId === local.topicId
              ? view.lastMirrorEpoch
              : undefined;
          },
          checked,
        )),
      );
    }
    if (atRisk.length > 0) throw new UnsafeTruncationError(def.name, atRisk);
  }

  private setMirrorName(topic: string, mirror: string, desired: DesiredMirrorState): void {
    this.controller.incrementalAlterConfigs({ type: "topic", name: topic }, [
      { name: MIRROR_NAME_CONFIG, op: "SET", value: mirrorNameValue(mirror, desired) },
    ]);
  }

  private putConfig(def: MirrorDefinition, key: string, value: string): void {
    const configs: Record<string, string> = { ...def.configs };
    if (value === "") delete configs[key];
    else configs[key] = value;
    this.controller.putMirror(def.name, configs);
  }

  /**
   * `drive`, and when a partition refuses (it failed, or moved, between the state check and its command),
   * writes back the `mirror.name` of the topics this call changed, so that a refused pause or resume leaves
   * nothing changed: the metadata manager then drives the partitions that did move back (a PAUSED one is
   * resumed). Without it the refusal said nothing changed while the topic stayed paused, to be paused once
   * the partition recovered (soak `faults` FC_SEED=17 x100: a slow disk failed the PAUSING commit). When
   * the restore itself fails, the error says the new `mirror.name` stayed.
   */
  private async driveOrRestore(
    mirror: string,
    names: readonly string[],
    changed: readonly MirrorTopic[],
    operation: "pause" | "resume",
  ): Promise<Driven> {
    try {
      return await this.drive(mirror, names, operation);
    } catch (error) {
      // Timed out, the commands are still there to commit under the new mirror.name: restored, a pause
      // (resume) would go on to PAUSED (MIRRORING) under a mirror.name asking for the opposite.
      if (error instanceof MirrorCommandTimeoutError) throw error;
      try {
        for (const t of changed) this.setMirrorName(t.name, mirror, t.desired);
      } catch (restore) {
        const why = (e: unknown) => (e instanceof Error ? e.message : String(e));
        const message = `The ${operation} of ${topicList(changed.map((t) => t.name))} was refused (${why(error)}), and restoring their mirror.name failed too (${why(restore)}): they stay ${operation === "pause" ? "paused" : "resumed"}. Describe the mirror, then ${operation === "pause" ? "resume" : "pause"} them or try again.`;
        throw error instanceof KafkaError
          ? new KafkaError(error.errorName, error.code, error.retriable, message, { cause: error })
          : new KafkaError("UNKNOWN_SERVER_ERROR", -1, false, message, { cause: error });
      }
      throw error;
    }
  }

  /**
   * Sends the commands that move the named topics' partitions to what their (just written) `mirror.name`
   * asks for; rethrows the first refusal after trying every partition. The `mirror.name` change is already
   * durable when this runs, so a command refused only because its coordinator unloaded on the way (a broker
   * crash moved the `__mirror_state` leadership) is sent again once the new coordinator has loaded, up to
   * {@link DRIVE_ATTEMPTS} times: answering NOT_COORDINATOR would report a refused call that changed state.
   * Each attempt reads the states afresh, so only partitions still short of the target get a command.
   */
  private async drive(
    mirror: string,
    names: readonly string[],
    operation: string,
    timeoutMs = this.apiTimeoutMs,
  ): Promise<Driven> {
    const named = new Set(names);
    const current = () => mirrorTopics(this.controller.image, mirror).filter((t) => named.has(t.name));
    const commanded = new Set<string>();
    const { destination } = this.options;
    const waitFor = (topics: readonly MirrorTopic[]): RecordWait => ({
      destination,
      mirror,
      operation,
      topics: names,
      keys: partitionKeysOf(mirror, topics),
      stillPending: `the topics' mirror.name already asks for it (a durable config), and each partition's coordinator records its command once its __mirror_state write goes through (free the disk space, or bring the brokers back)`,
    });
    // The commands' records wait for `__mirror_state` to take them: bounded from the first command, as
    // Kafka's admin calls are (`Call.deadlineMs`), and so is the wait for a moved coordinator to load before
    // the next round: unbounded, a round could start past the deadline and time out at once.
    let deadline: RecordDeadline | undefined;
    for (let attempt = 1; ; attempt++) {
      if (deadline === undefined) await this.awaitCoordinatorsOf(mirror, current());
      else
        await recordedWithin(() => this.awaitCoordinatorsOf(mirror, current()), deadline, waitFor(current()));
      // What mirror.name asks for now, not before the wait: a topic removed meanwhile (kafka-configs) and
      // made writable by the metadata manager's drive must not be sent this add's START.
      const topics = current();
      const views = viewsByPartition(this.options.coordinators.describe(mirror), this.controller.image);
      deadline ??= recordDeadline(destination, timeoutMs);
      const result = await recordedWithin(
        () => driveTopics(this.options.coordinators, topics, views, readOnlyIn(this.controller.image)),
        deadline,
        waitFor(topics),
      );
      for (const s of result.sent) if (s.raced === undefined) commanded.add(s.key.topic);
      const first = result.failed[0];
      if (first === undefined) return { commanded, views };
      const retry = attempt < DRIVE_ATTEMPTS && result.failed.every((f) => isCoordinatorLoading(f.error));
      if (!retry) throw first.error;
      // Refused at or past the deadline: not sent again (Kafka's `Call.fail`), but timed out.
      if (destination.clock.now() >= deadline.deadlineMs) throw commandTimeout(deadline, waitFor(topics));
    }
  }

  /** Waits for the coordinators of these topics' partitions to load (see `awaitCoordinators`). */
  private async awaitCoordinatorsOf(mirror: string, topics: readonly MirrorTopic[]): Promise<void> {
    await this.options.awaitCoordinators?.(partitionKeysOf(mirror, topics));
  }

  /** `defaultApiTimeoutMs`, or Kafka's default. */
  private get apiTimeoutMs(): number {
    return this.options.defaultApiTimeoutMs ?? DEFAULT_API_TIMEOUT_MS;
  }

  /**
   * `call` on the mirror's source, its errors turned into the admin API's. `probe` uses `def`'s configs
   * without replacing the mirror's open connection (see `SourceConnections.probe`).
   */
  private async sourceCall<T>(
    def: MirrorDefinition,
    call: (source: SourceCluster) => Promise<T>,
    how: "open" | "probe" = "open",
  ): Promise<T> {
    try {
      return how === "probe"
        ? await this.sources.probe(def.name, def.configs, call)
        : await call(this.sources.get(def.name, def.configs));
    } catch (error) {
      // A setting the source cannot honour is the operator's to fix, not an unreachable source.
      if (error instanceof InvalidMirrorConfigError) throw error;
      if (error instanceof KafkaError && error.errorName === "MIRROR_FAILOVER_IN_PROGRESS") {
        throw new SourceFailoverInProgressError(def.name, error);
      }
      // Credentials the source refused: the operator's to fix, not an unreachable source either.
      if (error instanceof KafkaError && error.errorName === "SASL_AUTHENTICATION_FAILED") {
        throw new InvalidMirrorConfigError(
          "sasl.jaas.config",
          `The source at ${def.bootstrapServers} refused the mirror's credentials: ${error.message}. Check sasl.mechanism and the username and password in sasl.jaas.config.`,
          undefined,
          { cause: error },
        );
      }
      // The connectors refuse a malformed bootstrap.servers or an unsupported security setting with a plain
      // INVALID_CONFIG (not retriable): "check that the source is up, then retry" would send the operator
      // the wrong way.
      if (error instanceof KafkaError && error.errorName === "INVALID_CONFIG") {
        const config = (error as { config?: unknown }).config;
        throw new InvalidMirrorConfigError(
          typeof config === "string" ? config : MIRROR_CONFIG_KEYS.BOOTSTRAP_SERVERS,
          `${error.message}. Fix the mirror config and try again.`,
          undefined,
          { cause: error },
        );
      }
      throw new SourceUnreachableError(def.name, def.bootstrapServers, error);
    }
  }
}

/** Every partition of `topics` as mirror partition keys of `mirror`. */
function partitionKeysOf(mirror: string, topics: readonly MirrorTopic[]): MirrorPartitionKey[] {
  return topics.flatMap((t) =>
    Array.from({ length: t.partitionCount }, (_, partition) => ({
      mirror,
      topic: t.name,
      topicId: t.topicId,
      partition,
    })),
  );
}
