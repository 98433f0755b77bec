import { type AclBinding, type Uuid, ZERO_UUID } from "@cluster-mirror/cluster";
import type {
  DescribeTopicsOptions,
  ListGroupOffsetsOptions,
  SourceCluster,
  SourceFetchPartition,
  SourceFetchPartitionResult,
  SourceFetchRequest,
  SourceGroupOffsets,
  SourceMirrorInfo,
  SourcePartitionLeader,
  SourceTopicInfo,
} from "@cluster-mirror/mirror";
import { KafkaError } from "@cluster-mirror/protocol";
import { aclBindingOf, DESCRIBE_ALL_ACLS } from "./acl-codes";
import { CurrentTopicIds } from "./current-topic-ids";
import {
  asSourceError,
  kafkaErrorFromCode,
  SourceAuthenticationError,
  SourceBrokerUnavailableError,
} from "./errors";
import { FetchSessionHandler, FINAL_EPOCH, type SessionAnswer, type SessionFetch } from "./fetch-session";
import {
  type KjsApiVersions,
  type KjsBroker,
  type KjsLogger,
  kafkajsBroker,
  kafkajsLogger,
  sendRaw,
} from "./kafkajs-internals";
import { type LeaderLookup, LeaderLookupBatcher, type LookupAnswer, partitionKey } from "./leader-lookups";
import {
  API_FETCH,
  decodeConsumerGroupDescribeV0,
  decodeFetch,
  decodeListOffsetsV5,
  decodeMetadataV12,
  decodeOffsetsForLeaderEpochV3,
  encodeConsumerGroupDescribeV0,
  encodeFetch,
  encodeListOffsetsV5,
  encodeMetadataV12,
  encodeOffsetsForLeaderEpochV3,
  type FetchPartitionRequest,
  type FetchResponse,
  type FetchVersion,
  type MetadataPartition,
  type MetadataResponse,
  READ_UNCOMMITTED,
} from "./requests";
import { kafkajsSecurity } from "./security";

/** Settings of a kafkajs source beyond the mirror's configs. */
export interface KafkajsSourceOptions {
  /** Client id of the metadata and admin requests (fetches use the fetcher's own); default `<mirror>-metadata`. */
  clientId?: string;
  /** How long the source broker may hold a fetch that has no new data (Fetch MaxWaitMs); default 250. */
  fetchMaxWaitMs?: number;
  /** TCP connect timeout; default 10 s. */
  connectionTimeoutMs?: number;
  /** Request timeout (added to the fetch wait for fetches); default 30 s. */
  requestTimeoutMs?: number;
  /**
   * Incremental fetch sessions (KIP-227), as Kafka's consumers and followers use: after the first fetch a
   * request names only the partitions whose position changed, and the answer only those with news. Default
   * true; false sends every fetch sessionless and full.
   */
  fetchSessions?: boolean;
  /** kafkajs's own error log lines. */
  warn?: (message: string, mirror: string) => void;
  /** kafkajs's other log lines, for troubleshooting: every request sent, connects and disconnects. */
  debug?: (message: string) => void;
}

const DYNAMIC_TOPIC_CONFIG = 1;
/** How long `close` waits for a broker to end a fetch session before leaving it to the broker's eviction. */
const CLOSE_SESSION_TIMEOUT_MS = 2_000;
const SECURITY_DISABLED = 54;
/** DescribeGroups' answer for a group the principal may not DESCRIBE. */
const GROUP_AUTHORIZATION_FAILED = 30;
const UNKNOWN_TOPIC_ID = 100;

/**
 * `SourceCluster` over a real Apache Kafka cluster, through kafkajs 2.2.4's connections (sockets, TLS, SASL,
 * version negotiation) but with our own requests where kafkajs loses what a mirror needs: fetches are
 * Fetch v12 with replica id -1, READ_UNCOMMITTED, `currentLeaderEpoch` and `lastFetchedEpoch` as Kafka's
 * follower sends them, and the records section is handed over as the broker's bytes (control batches,
 * batches emptied by compaction, any codec), so the engine validates and stores exactly what the source
 * stored. Metadata is v12 (topic ids, leader epochs). kafkajs's consumer is never used.
 * A plain Apache Kafka cluster knows nothing of KIP-1279: `lastMirrorEpoch` is -1 and `listMirrors` empty.
 */
export class KafkajsSourceCluster implements SourceCluster {
  private readonly bootstrap: { host: string; port: number }[];
  private readonly security;
  private readonly logger: KjsLogger;
  private readonly brokers = new Map<string, KjsBroker>();
  /** Each fetcher's fetch session with each source broker, keyed as `brokers`. */
  private readonly sessions = new Map<string, FetchSessionHandler>();
  private readonly addresses = new Map<number, { host: string; port: number }>();
  /** Each partition's leader as last learnt (`learnLeader`), with the id of the topic it was learnt for. */
  private readonly leaders = new Map<string, { topicId: string; leaderId: number; leaderEpoch: number }>();
  /** The broker that answered the last Metadata request (undefined node id: a bootstrap server). */
  private metadataNode: { nodeId: number | undefined } | undefined;
  /**
   * Each broker's ApiVersions answer, from the first connection to it: the next connections (one per
   * fetcher and client id) skip that round trip. Forgotten when a connection to it fails, so a broker
   * restarted with another version is asked again.
   */
  private readonly apiVersions = new Map<number, KjsApiVersions>();
  private readonly clientId: string;
  private readonly leaderRefreshes = new Map<string, Promise<MetadataResponse>>();
  private readonly lookups = new LeaderLookupBatcher((leaderId, lookups) =>
    this.sendLookups(leaderId, lookups),
  );
  /** The ids the source's topics have now, asked together per event-loop turn (`confirmTopicId`). */
  private readonly topicIds = new CurrentTopicIds(async (topics) => {
    const metadata = await this.metadata(topics);
    return new Map(metadata.topics.filter((t) => t.errorCode === 0).map((t) => [t.name, t.topicId]));
  });
  /** Fetches not yet answered: `close` lets them finish first, so a session one of them opens is closed too. */
  private readonly fetching = new Set<Promise<unknown>>();
  private closed = false;

  constructor(
    readonly mirrorName: string,
    configs: Readonly<Record<string, string>>,
    private readonly options: KafkajsSourceOptions = {},
  ) {
    this.bootstrap = parseBootstrap(mirrorName, configs["bootstrap.servers"] ?? "");
    this.security = kafkajsSecurity(mirrorName, configs);
    // kafkajs's lines name a broker, not the mirror: say which mirror's source they are about. A closed
    // source says nothing more: a socket it closed can still report the peer's reset (a mirror whose
    // create failed would otherwise warn about a source it no longer has).
    const warn = options.warn;
    this.logger = kafkajsLogger(
      warn && ((line) => this.closed || warn(`mirror ${mirrorName}: ${line}`, mirrorName)),
      options.debug,
    );
    this.clientId = options.clientId ?? `${mirrorName}-metadata`;
  }

  async clusterId(): Promise<string> {
    const metadata = await this.metadata([]);
    if (!metadata.clusterId)
      throw new KafkaError("UNKNOWN_SERVER_ERROR", -1, true, "the source sent no cluster id");
    return metadata.clusterId;
  }

  /** Every topic that is not internal and does not start with `__`, with ids, leaders, epochs and dynamic configs. */
  async describeTopics(options: DescribeTopicsOptions = {}): Promise<SourceTopicInfo[]> {
    const metadata = await this.metadata(null);
    const topics = metadata.topics
      .filter((t) => t.errorCode === 0 && !t.isInternal && !t.name.startsWith("__"))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const wanted = options.configsOf;
    const configs = await this.dynamicTopicConfigs(
      topics.map((t) => t.name).filter((name) => wanted?.(name) ?? true),
    );
    return topics.map((t) => ({
      name: t.name,
      topicId: t.topicId,
      partitions: t.partitions
        .map((p) => ({ partition: p.partition, leaderId: p.leaderId, leaderEpoch: p.leaderEpoch }))
        .sort((a, b) => a.partition - b.partition),
      // Unknown (not asked for, or DescribeConfigs refused) stays unknown: never an empty set.
      ...(configs.has(t.name) ? { configs: configs.get(t.name)! } : {}),
    }));
  }

  /** Metadata for these topics alone (no DescribeConfigs): each partition's leader and leader epoch. */
  async partitionLeaders(topics: readonly string[]): Promise<SourcePartitionLeader[]> {
    const names = [...new Set(topics)];
    if (names.length === 0) return [];
    const metadata = await this.metadata(names);
    return metadata.topics
      .filter((t) => t.errorCode === 0)
      .flatMap((t) =>
        t.partitions.map((p) => ({
          topic: t.name,
          partition: p.partition,
          leaderId: p.leaderId,
          leaderEpoch: p.leaderEpoch,
        })),
      )
      .sort((a, b) => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition));
  }

  fetch(
    request: SourceFetchRequest,
  ): Promise<{ throttleTimeMs: number; partitions: SourceFetchPartitionResult[] }> {
    const work = this.fetchNow(request);
    this.fetching.add(work);
    const done = () => this.fetching.delete(work);
    work.then(done, done);
    return work;
  }

  private async fetchNow(
    request: SourceFetchRequest,
  ): Promise<{ throttleTimeMs: number; partitions: SourceFetchPartitionResult[] }> {
    const context = `${this.mirrorName}: fetch from source broker ${request.brokerId}`;
    // A one-off fetch (a probe) opens no session: one opened would stay on the broker until evicted.
    const session = request.sessionless
      ? new FetchSessionHandler({ enabled: false })
      : this.session(request.brokerId, request.clientId);
    let sent: SessionFetch | undefined;
    let response: FetchResponse;
    try {
      const broker = await this.broker(request.brokerId, request.clientId);
      // By topic id where the broker can (Fetch v13, Kafka 3.1+) and every partition has one; a session
      // holds partitions one way only, so a request that cannot name all by id goes sessionless, by name.
      const byId = fetchVersionOf(broker) === 13;
      const version: FetchVersion = byId && request.partitions.every(hasTopicId) ? 13 : 12;
      const names = version === 13 ? topicNamesById(request.partitions) : undefined;
      const build = (): SessionFetch =>
        byId && version === 12 ? sessionless(request.partitions) : session.build(request.partitions);
      sent = build();
      response = await this.sendFetch(broker, request.maxBytes, sent, names);
      // The broker lost the session or its epoch (a restart, an eviction): once more, as a full fetch.
      if (!session.accept(sent, sessionAnswer(response))) {
        sent = build();
        response = await this.sendFetch(broker, request.maxBytes, sent, names);
        session.accept(sent, sessionAnswer(response));
      }
    } catch (error) {
      if (sent) session.failed(sent);
      const failure = asSourceError(error, context);
      // Authentication failures fail the partitions for good with the broker's words; anything else
      // (disconnect, timeout, restart) fails the whole fetch and the engine refreshes the leaders.
      if (failure instanceof SourceAuthenticationError) {
        return { throttleTimeMs: 0, partitions: request.partitions.map((p) => offsetsOnly(p, failure)) };
      }
      await this.dropBroker(request.brokerId, request.clientId);
      throw failure;
    }
    if (response.errorCode !== 0) {
      const failure = kafkaErrorFromCode(response.errorCode, context);
      // Kafka's clients drop an answer with a retriable top-level error and fetch again (the session
      // closed, see `accept`): the whole fetch fails, and the engine backs off. A refusal (authorization,
      // an unsupported request) is every partition's answer.
      if (failure.retriable) throw failure;
      return {
        throttleTimeMs: response.throttleTimeMs,
        partitions: request.partitions.map((p) => offsetsOnly(p, failure)),
      };
    }
    const answers = new Map<string, SourceFetchPartitionResult>();
    for (const t of response.topics) {
      for (const p of t.partitions) {
        const result: SourceFetchPartitionResult = {
          topic: t.topic,
          partition: p.partition,
          recordSlices: p.records.length > 0 ? [p.records] : [],
          highWatermark: p.highWatermark,
          lastStableOffset: p.lastStableOffset,
          logStartOffset: p.logStartOffset,
        };
        if (p.errorCode !== 0) {
          result.error = kafkaErrorFromCode(p.errorCode, `${context}: ${t.topic}-${p.partition}`);
          result.recordSlices = [];
        } else if (p.preferredReadReplica >= 0) {
          // The broker sends no records then, every time: say why instead of stalling without a word.
          result.error = preferredReplicaRefused(
            `${context}: ${t.topic}-${p.partition}`,
            p.preferredReadReplica,
          );
          result.recordSlices = [];
        } else if (p.divergingEpoch && p.divergingEpoch.epoch >= 0) {
          result.divergingEpoch = p.divergingEpoch;
          result.recordSlices = [];
        }
        answers.set(partitionKey(t.topic, p.partition), result);
      }
    }
    return {
      throttleTimeMs: response.throttleTimeMs,
      partitions: request.partitions.map(
        (p) =>
          answers.get(partitionKey(p.topic, p.partition)) ??
          // An incremental answer leaves out the partitions with nothing new: their offsets stand.
          (sent?.incremental ? unchangedPartition(p, session) : undefined) ??
          offsetsOnly(p, undefined),
      ),
    };
  }

  private async sendFetch(
    broker: KjsBroker,
    maxBytes: number,
    fetch: SessionFetch,
    /** v13 (topics by id): each wanted topic's name by its id; undefined: v12 (by name). */
    names: ReadonlyMap<string, string> | undefined,
  ): Promise<FetchResponse> {
    const version: FetchVersion = names === undefined ? 12 : 13;
    const waitMs = this.options.fetchMaxWaitMs ?? 250;
    const byTopic = new Map<string, FetchPartitionRequest[]>();
    const ids = new Map<string, string | undefined>();
    for (const p of fetch.partitions) {
      ids.set(p.topic, p.topicId);
      const partition: FetchPartitionRequest = {
        partition: p.partition,
        currentLeaderEpoch: p.currentLeaderEpoch,
        fetchOffset: p.fetchOffset,
        lastFetchedEpoch: p.lastFetchedEpoch,
        partitionMaxBytes: p.maxBytes,
      };
      const list = byTopic.get(p.topic);
      if (list) list.push(partition);
      else byTopic.set(p.topic, [partition]);
    }
    const forgotten = new Map<string, number[]>();
    const forgottenIds = new Map<string, string | undefined>();
    for (const p of fetch.forgotten) {
      forgottenIds.set(p.topic, p.topicId);
      const list = forgotten.get(p.topic);
      if (list) list.push(p.partition);
      else forgotten.set(p.topic, [p.partition]);
    }
    const withId = <T extends object>(topic: string, topicId: string | undefined, rest: T) =>
      topicId === undefined || version === 12 ? { topic, ...rest } : { topic, topicId, ...rest };
    const raw = encodeFetch(
      {
        maxWaitMs: waitMs,
        minBytes: 1,
        maxBytes,
        isolationLevel: READ_UNCOMMITTED,
        sessionId: fetch.sessionId,
        sessionEpoch: fetch.epoch,
        topics: [...byTopic].map(([topic, partitions]) => withId(topic, ids.get(topic), { partitions })),
        forgottenTopics: [...forgotten].map(([topic, partitions]) =>
          withId(topic, forgottenIds.get(topic), { partitions }),
        ),
      },
      version,
    );
    const response = await sendRaw(
      broker,
      raw,
      (body) => decodeFetch(body, version),
      waitMs + this.requestTimeoutMs(),
    );
    if (names !== undefined) {
      for (const t of response.topics) if (t.topicId !== undefined) t.topic = names.get(t.topicId) ?? "";
    }
    return response;
  }

  /**
   * The fetch sessions held with the source's brokers, one per fetcher (client id) and broker: the session
   * id (0: none open), the epoch of its next fetch, and how many partitions the broker's session holds.
   */
  fetchSessions(): {
    brokerId: number;
    clientId: string;
    sessionId: number;
    epoch: number;
    partitions: number;
  }[] {
    return [...this.sessions].map(([key, session]) => {
      const [brokerId, clientId] = key.split("\u0000");
      return { brokerId: Number(brokerId), clientId: clientId ?? "", ...session.state };
    });
  }

  /** Ends an open fetch session on its broker, if still connected; a failure leaves it to the broker's eviction. */
  private async closeSession(key: string, session: FetchSessionHandler): Promise<void> {
    const end = session.closing();
    const broker = this.brokers.get(key);
    if (!end || !broker?.isConnected()) return;
    // Closing names no topic, so v12 closes a session of either kind (a final epoch is never checked
    // against the session's topic-id use).
    const raw = encodeFetch(
      {
        maxWaitMs: 0,
        minBytes: 0,
        maxBytes: 0,
        isolationLevel: READ_UNCOMMITTED,
        sessionId: end.sessionId,
        sessionEpoch: end.epoch,
        topics: [],
        forgottenTopics: [],
      },
      12,
    );
    await sendRaw(broker, raw, (body) => decodeFetch(body, 12), CLOSE_SESSION_TIMEOUT_MS);
  }

  /** The fetch session of a fetcher (client id) with a source broker; sessionless when they are off. */
  private session(brokerId: number, clientId: string): FetchSessionHandler {
    const key = `${brokerId}\u0000${clientId}`;
    let session = this.sessions.get(key);
    if (!session) {
      session = new FetchSessionHandler({ enabled: this.options.fetchSessions ?? true });
      this.sessions.set(key, session);
    }
    return session;
  }

  /** ListOffsets: -2 earliest (log start), -1 latest (high watermark). */
  async listOffsets(topic: string, partition: number, timestamp: bigint, topicId?: Uuid): Promise<bigint> {
    const offset = await this.listOffsetsIsolated(topic, partition, timestamp, READ_UNCOMMITTED);
    await this.confirmTopicId(topic, partition, topicId);
    return offset;
  }

  /**
   * ListOffsets and OffsetsForLeaderEpoch name topics only: with an expected id, a fresh Metadata request
   * after the answer confirms the topic still has it. Ids are never reused, so a match proves the answer
   * was of that topic, not of one deleted and created again under the name (then UNKNOWN_TOPIC_ID).
   */
  private async confirmTopicId(topic: string, partition: number, topicId: Uuid | undefined): Promise<void> {
    if (topicId === undefined || topicId === ZERO_UUID) return;
    const current = await this.topicIds.of(topic);
    if (current === topicId) return;
    throw kafkaErrorFromCode(
      UNKNOWN_TOPIC_ID,
      `${this.mirrorName}: ${topic}-${partition}: expected topic id ${topicId}, the source has ${current === undefined ? "no such topic" : current}`,
    );
  }

  /** ListOffsets at an isolation level: latest is the high watermark (0) or the last stable offset (1). */
  async listOffsetsIsolated(
    topic: string,
    partition: number,
    timestamp: bigint,
    isolationLevel: number,
  ): Promise<bigint> {
    const answer = await this.toLeader({ api: "ListOffsets", topic, partition, isolationLevel, timestamp });
    return answer.offset;
  }

  /**
   * OffsetsForLeaderEpoch (KIP-101/320): the end offset of `leaderEpoch` on the source (the start of the next
   * higher epoch), with the largest epoch at most `leaderEpoch` the source knows.
   */
  async endOffsetForEpoch(
    topic: string,
    partition: number,
    leaderEpoch: number,
    topicId?: Uuid,
  ): Promise<{ leaderEpoch: number; endOffset: bigint }> {
    const answer = await this.toLeader({ api: "OffsetsForLeaderEpoch", topic, partition, leaderEpoch });
    await this.confirmTopicId(topic, partition, topicId);
    return { leaderEpoch: answer.leaderEpoch, endOffset: answer.offset };
  }

  /**
   * Groups with committed offsets on topics the source has, and whether each has members now. Each broker
   * lists the groups it coordinates and answers for them, so, as Kafka's Admin client does
   * (`KafkaAdminClient.listConsumerGroups`), the brokers are asked at the same time (one that does not answer
   * delays no other), a broker that fails leaves its error, and a group whose coordinator does not describe
   * it or give its offsets its own: with `onError` the listing goes on without them
   * (`ListConsumerGroupsResult.valid()` and `errors()`), without it the first one rejects it (`all()`).
   * Errors are reported in the order of the brokers, whichever answered first.
   */
  async listGroupOffsets(options: ListGroupOffsetsOptions = {}): Promise<GroupOffsetsListing[]> {
    const metadata = await this.metadata(null);
    const topics = metadata.topics
      .filter((t) => t.errorCode === 0 && !t.isInternal)
      .map((t) => ({ topic: t.name, partitions: t.partitions.map((p) => ({ partition: p.partition })) }));
    const listings = await Promise.all(
      metadata.brokers.map((b) => this.brokerGroupOffsets(b.nodeId, topics)),
    );
    const out: GroupOffsetsListing[] = [];
    for (const listing of listings) {
      out.push(...listing.groups);
      for (const { error, context, what } of listing.errors) {
        const e = asSourceError(error, context);
        if (!options.onError) throw e;
        // The error names the broker (and group) even when it came from the connection, and what follows.
        const prefix = `${this.mirrorName}: `;
        const named = e.message.startsWith(context)
          ? e.message
          : `${context}: ${e.message.startsWith(prefix) ? e.message.slice(prefix.length) : e.message}`;
        options.onError(
          new KafkaError(
            e.errorName,
            e.code,
            e.retriable,
            `${named}; ${what} are left out of this listing until it answers`,
            { cause: e },
          ),
        );
      }
    }
    return out.sort((a, b) => (a.groupId < b.groupId ? -1 : a.groupId > b.groupId ? 1 : 0));
  }

  /** The groups one source broker coordinates, with their offsets, and what it could not answer. */
  private async brokerGroupOffsets(
    nodeId: number,
    topics: { topic: string; partitions: { partition: number }[] }[],
  ): Promise<{ groups: GroupOffsetsListing[]; errors: GroupListingError[] }> {
    const context = `${this.mirrorName}: groups on source broker ${nodeId}`;
    const groups: GroupOffsetsListing[] = [];
    const errors: GroupListingError[] = [];
    let broker: KjsBroker;
    let listed: { groupId: string; protocolType: string }[];
    let described: Awaited<ReturnType<typeof describableGroups>>;
    try {
      broker = await this.admin(nodeId);
      listed = (await broker.listGroups()).groups;
      if (listed.length === 0) return { groups, errors };
      described = await describableGroups(
        broker,
        listed.map((g) => g.groupId),
        context,
      );
    } catch (error) {
      errors.push({ error, context, what: "the groups it coordinates" });
      return { groups, errors };
    }
    for (const { groupId, error } of described.failed)
      errors.push({ error, context: groupContext(context, groupId), what: "the group's offsets" });
    for (const g of described.groups) {
      if (g.errorCode !== 0 || topics.length === 0) continue;
      const protocolType = listed.find((l) => l.groupId === g.groupId)?.protocolType;
      try {
        const group = await this.groupOffsets(broker, g, protocolType, topics);
        if (group) groups.push(group);
      } catch (error) {
        errors.push({
          error,
          context: `${context}: offsets of group '${g.groupId}'`,
          what: "the group's offsets",
        });
      }
    }
    return { groups, errors };
  }

  /** One described group's committed offsets (OffsetFetch to its coordinator); undefined when it has none. */
  private async groupOffsets(
    broker: KjsBroker,
    g: DescribedGroup,
    protocolType: string | undefined,
    topics: { topic: string; partitions: { partition: number }[] }[],
  ): Promise<GroupOffsetsListing | undefined> {
    const fetched = await broker.offsetFetch({ groupId: g.groupId, topics });
    const offsets: SourceGroupOffsets["offsets"] = [];
    for (const t of fetched.responses)
      for (const p of t.partitions) {
        const offset = BigInt(p.offset);
        if (offset >= 0n)
          offsets.push({
            topic: t.topic,
            partition: p.partition,
            offset,
            leaderEpoch: -1,
            metadata: p.metadata ?? "",
          });
      }
    if (offsets.length === 0) return undefined;
    const active =
      g.members.length > 0 ||
      (protocolType === "consumer" &&
        g.state === "Dead" &&
        (await this.consumerGroupMembers(broker, g.groupId)) > 0);
    return { groupId: g.groupId, offsets, active };
  }

  /**
   * Members of a group of the KIP-848 consumer protocol (Kafka 4), which the classic DescribeGroups calls
   * Dead with no members: asked with ConsumerGroupDescribe. 0 when the broker cannot say.
   */
  private async consumerGroupMembers(broker: KjsBroker, groupId: string): Promise<number> {
    try {
      const { group } = await sendRaw(
        broker,
        encodeConsumerGroupDescribeV0(groupId),
        decodeConsumerGroupDescribeV0,
      );
      return group && group.errorCode === 0 ? group.members : 0;
    } catch {
      return 0; // a broker without the API (before Kafka 3.7) has no such group either
    }
  }

  /** Every ACL binding; undefined when the source runs no authorizer (SECURITY_DISABLED): unknown. */
  async describeAcls(): Promise<AclBinding[] | undefined> {
    const broker = await this.anyAdmin();
    try {
      const res = await broker.describeAcls(DESCRIBE_ALL_ACLS);
      const out: AclBinding[] = [];
      for (const r of res.resources)
        for (const acl of r.acls) {
          const binding = aclBindingOf(r, acl);
          if (binding) out.push(binding);
        }
      return out;
    } catch (error) {
      const e = error as { code?: number; type?: string };
      if (e?.code === SECURITY_DISABLED || e?.type === "SECURITY_DISABLED") return undefined;
      throw asSourceError(error, `${this.mirrorName}: describe ACLs of the source`);
    }
  }

  /** A plain Apache Kafka cluster records no last mirror epochs. */
  async lastMirrorEpoch(_topicId: Uuid, _partition: number): Promise<number> {
    return -1;
  }

  /** A plain Apache Kafka cluster runs no mirrors. */
  async listMirrors(): Promise<SourceMirrorInfo[]> {
    return [];
  }

  /** A plain Apache Kafka cluster cannot mirror back from us: there is no failback onto it. */
  canFailBack(): boolean {
    return false;
  }

  /** True once `close` was called: every later call fails retriable, and no connection is opened again. */
  get isClosed(): boolean {
    return this.closed;
  }

  /** Closes every connection to the source. */
  async close(): Promise<void> {
    this.closed = true;
    // A full fetch in flight opens a session when answered: wait for it (briefly) before closing sessions.
    await settledWithin([...this.fetching], CLOSE_SESSION_TIMEOUT_MS);
    await Promise.allSettled([...this.sessions].map(([key, session]) => this.closeSession(key, session)));
    this.sessions.clear();
    const brokers = [...this.brokers.values()];
    this.brokers.clear();
    await Promise.allSettled(brokers.map((b) => b.disconnect()));
  }

  /**
   * Metadata v12 for some topics (null: all), from the first broker that answers; updates the address book.
   * The broker that answered last is asked first (then the others, then the bootstrap servers), as Kafka's
   * clients send Metadata to a node they are connected to (`NetworkClient.leastLoadedNode`): a broker that
   * stopped answering (down, frozen, its host unreachable) costs one timeout, not one on every refresh.
   */
  async metadata(topics: readonly string[] | null): Promise<MetadataResponse> {
    let last: unknown;
    for (const nodeId of this.anyNodeOrder()) {
      try {
        const broker = await this.admin(nodeId);
        const metadata = await sendRaw(broker, encodeMetadataV12(topics), decodeMetadataV12);
        this.metadataNode = { nodeId };
        for (const b of metadata.brokers) this.addresses.set(b.nodeId, { host: b.host, port: b.port });
        for (const t of metadata.topics) for (const p of t.partitions) this.learnLeader(t.topicId, t.name, p);
        return metadata;
      } catch (error) {
        // When none answers, the bootstrap servers' failure is the one reported (it names each of them).
        if (nodeId === undefined || last === undefined) last = error;
        const failure = asSourceError(error, `${this.mirrorName}: metadata`);
        if (this.closed || !failure.retriable) throw failure;
        if (nodeId !== undefined) await this.dropBroker(nodeId, this.clientId);
      }
    }
    throw asSourceError(last, `${this.mirrorName}: no source broker answered a metadata request`);
  }

  /**
   * Takes a partition's leader from a Metadata answer, unless the answer is older than what is known: as
   * Kafka's clients do (KIP-320, `Metadata.updateLatestMetadata`), a leader epoch below the one last seen for
   * the same topic id comes from a broker whose metadata lags (one cut off from the controller, say), and
   * the newer leader stands; the answer is corrected to it, so no caller routes back to a deposed leader.
   * A topic id not seen before (the topic was created again) or an unknown epoch (-1) is always taken.
   */
  private learnLeader(topicId: string, topic: string, p: MetadataPartition): void {
    const key = partitionKey(topic, p.partition);
    const known = this.leaders.get(key);
    if (known && known.topicId === topicId && p.leaderEpoch >= 0 && p.leaderEpoch < known.leaderEpoch) {
      p.leaderId = known.leaderId;
      p.leaderEpoch = known.leaderEpoch;
      return;
    }
    this.leaders.set(key, { topicId, leaderId: p.leaderId, leaderEpoch: p.leaderEpoch });
  }

  /**
   * The brokers a request any of them may answer goes to, in order: the one that answered Metadata last,
   * the others the source's metadata named, then the bootstrap servers (undefined).
   */
  private anyNodeOrder(): (number | undefined)[] {
    const candidates: (number | undefined)[] = [...this.addresses.keys(), undefined];
    const preferred = this.metadataNode && candidates.indexOf(this.metadataNode.nodeId);
    if (preferred !== undefined && preferred > 0) candidates.unshift(...candidates.splice(preferred, 1));
    return candidates;
  }

  /**
   * An admin connection to any broker of the source (`anyNodeOrder`), for requests any broker answers
   * (DescribeConfigs of topics, DescribeAcls): Kafka's AdminClient sends them to the least loaded node, so a
   * bootstrap server that is down (a single one, say) does not stop them while other brokers are up.
   */
  private async anyAdmin(): Promise<KjsBroker> {
    let last: unknown;
    for (const nodeId of this.anyNodeOrder()) {
      try {
        return await this.admin(nodeId);
      } catch (error) {
        if (this.closed || !(error instanceof KafkaError) || !error.retriable) throw error;
        if (nodeId === undefined || last === undefined) last = error;
      }
    }
    throw last;
  }

  /**
   * Asks the partition's leader (with the other lookups of this turn to it, in one request); refreshes the
   * leader and tries again when it moved.
   */
  private async toLeader(lookup: LeaderLookup): Promise<LookupAnswer> {
    const { topic, partition } = lookup;
    const context = `${this.mirrorName}: ${topic}-${partition}`;
    let lastError: KafkaError | undefined;
    for (let attempt = 0; attempt < 3; attempt++) {
      let leader = this.leaders.get(partitionKey(topic, partition));
      let topicError = 0;
      if (!leader || leader.leaderId < 0 || attempt > 0) {
        const metadata = await this.refreshLeaders(topic);
        topicError = metadata.topics.find((t) => t.name === topic)?.errorCode ?? 0;
        leader = this.leaders.get(partitionKey(topic, partition));
      }
      // A topic the principal may not DESCRIBE comes without partitions too: say so, not that it is unknown.
      if (!leader) throw kafkaErrorFromCode(topicError === 0 ? 3 : topicError, context);
      if (leader.leaderId < 0) {
        lastError = kafkaErrorFromCode(5, context);
        continue;
      }
      let answer: LookupAnswer;
      try {
        answer = await this.lookups.lookup(leader.leaderId, lookup);
      } catch (error) {
        lastError = asSourceError(error, context);
        if (this.closed || !lastError.retriable) throw lastError;
        await this.dropBroker(leader.leaderId, this.clientId);
        continue;
      }
      if (answer.errorCode === 0) return answer;
      lastError = kafkaErrorFromCode(answer.errorCode, context);
      if (!lastError.retriable) throw lastError;
    }
    throw lastError ?? kafkaErrorFromCode(-1, context);
  }

  /** The leaders of a topic's partitions, asked once for all the lookups that need them at the same time. */
  private refreshLeaders(topic: string): Promise<MetadataResponse> {
    let refresh = this.leaderRefreshes.get(topic);
    if (!refresh) {
      refresh = this.metadata([topic]).finally(() => this.leaderRefreshes.delete(topic));
      this.leaderRefreshes.set(topic, refresh);
    }
    return refresh;
  }

  /** One ListOffsets or OffsetsForLeaderEpoch request to a leader for lookups of one kind. */
  private async sendLookups(
    leaderId: number,
    lookups: readonly LeaderLookup[],
  ): Promise<ReadonlyMap<string, LookupAnswer>> {
    const broker = await this.admin(leaderId);
    const answers = new Map<string, LookupAnswer>();
    const first = lookups[0]!;
    if (first.api === "ListOffsets") {
      const partitions = lookups.map((l) => ({
        topic: l.topic,
        partition: l.partition,
        currentLeaderEpoch: -1,
        timestamp: l.api === "ListOffsets" ? l.timestamp : -1n,
      }));
      const res = await sendRaw(
        broker,
        encodeListOffsetsV5(first.isolationLevel, partitions),
        decodeListOffsetsV5,
      );
      for (const p of res.partitions) answers.set(partitionKey(p.topic, p.partition), p);
    } else {
      const partitions = lookups.map((l) => ({
        topic: l.topic,
        partition: l.partition,
        currentLeaderEpoch: -1,
        leaderEpoch: l.api === "OffsetsForLeaderEpoch" ? l.leaderEpoch : -1,
      }));
      const res = await sendRaw(
        broker,
        encodeOffsetsForLeaderEpochV3(partitions),
        decodeOffsetsForLeaderEpochV3,
      );
      for (const p of res.partitions)
        answers.set(partitionKey(p.topic, p.partition), { ...p, offset: p.endOffset });
    }
    return answers;
  }

  /**
   * The dynamic (non-default) configs of these topics (DescribeConfigs, config source DYNAMIC_TOPIC_CONFIG).
   * kafkajs rejects the whole answer when one topic fails, so on a failure each topic is asked alone and a
   * topic whose configs the mirror may not describe (TOPIC_AUTHORIZATION_FAILED) has none: its data can
   * still be mirrored, as Kafka does for a principal without DESCRIBE_CONFIGS.
   */
  private async dynamicTopicConfigs(names: readonly string[]): Promise<Map<string, Record<string, string>>> {
    const out = new Map<string, Record<string, string>>();
    if (names.length === 0) return out;
    const broker = await this.anyAdmin();
    const context = `${this.mirrorName}: describe topic configs of the source`;
    const describe = (topics: readonly string[]) =>
      broker.describeConfigs({
        resources: topics.map((name) => ({ type: 2, name, configNames: [] })),
        includeSynonyms: false,
      });
    let resources: Awaited<ReturnType<typeof describe>>["resources"];
    try {
      resources = (await describe(names)).resources;
    } catch (error) {
      const failure = asSourceError(error, context);
      if (failure.retriable) throw failure;
      resources = [];
      for (const name of names) {
        try {
          resources.push(...(await describe([name])).resources);
        } catch (single) {
          const e = asSourceError(single, `${context} (${name})`);
          if (e.code !== 29) throw e;
        }
      }
    }
    for (const r of resources) {
      if (r.errorCode !== 0) continue;
      const configs: Record<string, string> = {};
      for (const c of r.configEntries)
        if (c.configSource === DYNAMIC_TOPIC_CONFIG && c.configValue !== null)
          configs[c.configName] = c.configValue;
      out.set(r.resourceName, configs);
    }
    return out;
  }

  private requestTimeoutMs(): number {
    return this.options.requestTimeoutMs ?? 30_000;
  }

  /** The admin connection to a broker (any bootstrap server when `nodeId` is undefined). */
  private admin(nodeId: number | undefined): Promise<KjsBroker> {
    return this.broker(nodeId, this.clientId);
  }

  /**
   * A connected kafkajs broker for `nodeId` with this client id; when undefined, a bootstrap server: each
   * in turn, as any Kafka client does, so one that is down does not hide the others. The one that answered
   * stays first. When none does, the error names each one's failure; a non-retriable one (authentication)
   * wins, since that is the cluster's answer rather than a broker's absence.
   */
  private async broker(nodeId: number | undefined, clientId: string): Promise<KjsBroker> {
    if (nodeId !== undefined) return this.connectedBroker(nodeId, clientId);
    const failures: KafkaError[] = [];
    for (let i = 0; i < this.bootstrap.length; i++) {
      const tried = this.bootstrap[0];
      try {
        return await this.connectedBroker(undefined, clientId);
      } catch (error) {
        if (this.closed || !(error instanceof KafkaError)) throw error;
        failures.push(error);
        // A concurrent call may have moved past it already.
        if (this.bootstrap[0] === tried) this.bootstrap.push(this.bootstrap.shift()!);
      }
    }
    if (failures.length === 1) throw failures[0]!;
    const denied = failures.find((f) => !f.retriable);
    if (denied) throw denied;
    const prefix = `${this.mirrorName}: `;
    throw new SourceBrokerUnavailableError(
      `${this.mirrorName}: no bootstrap server of the source answered: ${failures
        .map((f) => (f.message.startsWith(prefix) ? f.message.slice(prefix.length) : f.message))
        .join("; ")}`,
      { cause: failures[0] },
    );
  }

  /** `broker` for one address: `nodeId`'s, or the first bootstrap server's when undefined. */
  private async connectedBroker(nodeId: number | undefined, clientId: string): Promise<KjsBroker> {
    // The engine closes a mirror's source when its connection configs change, and reaches the source through
    // the new one from then on: a call that was using this one is retried there (as Kafka's clients fail the
    // calls of a closed client with a TimeoutException, a RetriableException). Not retriable, it failed a
    // partition whose step was in flight for good (a credential rotation during PREPARING).
    if (this.closed) throw closedSourceError(this.mirrorName);
    if (nodeId !== undefined && !this.addresses.has(nodeId)) {
      await this.metadata([]);
      // Closed while Metadata answered: `close` dropped the connections it found, and nothing would close
      // one opened now (it stayed open, kafkajs's request queue timer running, for the process's life).
      if (this.closed) throw closedSourceError(this.mirrorName);
    }
    const key = `${nodeId ?? "bootstrap"}\u0000${clientId}`;
    let broker = this.brokers.get(key);
    if (!broker) {
      const address = nodeId === undefined ? this.bootstrap[0]! : this.addresses.get(nodeId);
      if (!address)
        throw new KafkaError(
          "BROKER_NOT_AVAILABLE",
          8,
          true,
          `${this.mirrorName}: the source has no broker ${nodeId}`,
        );
      broker = kafkajsBroker({
        ...address,
        nodeId: nodeId ?? null,
        clientId,
        security: this.security,
        logger: this.logger,
        connectionTimeout: this.options.connectionTimeoutMs ?? 10_000,
        requestTimeout: this.requestTimeoutMs(),
        ...(nodeId !== undefined && this.apiVersions.has(nodeId)
          ? { versions: this.apiVersions.get(nodeId) }
          : {}),
      });
      this.brokers.set(key, broker);
    }
    if (!broker.isConnected()) {
      try {
        await broker.connect();
      } catch (error) {
        await this.dropBroker(nodeId, clientId);
        throw asSourceError(
          error,
          `${this.mirrorName}: connect to source broker ${nodeId ?? `${this.bootstrap[0]!.host}:${this.bootstrap[0]!.port}`}`,
        );
      }
      if (nodeId !== undefined && broker.versions) this.apiVersions.set(nodeId, broker.versions);
    }
    return broker;
  }

  private async dropBroker(nodeId: number | undefined, clientId: string): Promise<void> {
    if (nodeId !== undefined) this.apiVersions.delete(nodeId);
    const key = `${nodeId ?? "bootstrap"}\u0000${clientId}`;
    const broker = this.brokers.get(key);
    this.brokers.delete(key);
    await broker?.disconnect().catch(() => {});
  }
}

/** What a call on a closed source of `mirrorName` fails with: retriable, on the mirror's current connection. */
export function closedSourceError(mirrorName: string): SourceBrokerUnavailableError {
  return new SourceBrokerUnavailableError(
    `${mirrorName}: the source's connection was closed (the mirror's connection configs changed, or the mirror was deleted); retry on the mirror's current connection`,
  );
}

/** A source group's committed offsets, and whether it has members now. */
type GroupOffsetsListing = SourceGroupOffsets & { active: boolean };

/** How a group listing's errors name a group of a broker. */
function groupContext(brokerContext: string, groupId: string): string {
  return `${brokerContext}: group '${groupId}'`;
}

/** Something a source broker could not answer in a group listing: the error, whose, and what it leaves out. */
interface GroupListingError {
  error: unknown;
  context: string;
  what: string;
}

type DescribedGroup = Awaited<ReturnType<KjsBroker["describeGroups"]>>["groups"][number];

/**
 * DescribeGroups of these groups, without the ones the principal may not DESCRIBE. Kafka's ListGroups names
 * every group to a principal with DESCRIBE on the CLUSTER (which the ACL sync needs), and its DescribeGroups
 * answers GROUP_AUTHORIZATION_FAILED for each group the principal may not describe; kafkajs rejects the
 * whole answer for one group with an error, so then each group is asked alone: the refused ones are left
 * out, as Kafka leaves them out of a listing, and a group with another error (COORDINATOR_LOAD_IN_PROGRESS
 * while its coordinator loads it) is `failed` with its error, without failing the broker's other groups.
 * A connection that fails fails them all.
 */
async function describableGroups(
  broker: KjsBroker,
  groupIds: readonly string[],
  context: string,
): Promise<{ groups: DescribedGroup[]; failed: { groupId: string; error: KafkaError }[] }> {
  const describe = (ids: readonly string[], about = context) =>
    broker.describeGroups({ groupIds: [...ids] }).catch((e) => Promise.reject(asSourceError(e, about)));
  const refused = (error: unknown) =>
    error instanceof KafkaError && error.code === GROUP_AUTHORIZATION_FAILED;
  // An answer's error code (kafkajs's protocol error), not a connection or authentication failure.
  const answered = (error: unknown): error is KafkaError =>
    error instanceof KafkaError &&
    !(error instanceof SourceBrokerUnavailableError) &&
    !(error instanceof SourceAuthenticationError);
  try {
    return { groups: (await describe(groupIds)).groups, failed: [] };
  } catch (error) {
    if (!answered(error)) throw error;
  }
  const groups: DescribedGroup[] = [];
  const failed: { groupId: string; error: KafkaError }[] = [];
  for (const groupId of groupIds) {
    try {
      groups.push(...(await describe([groupId], groupContext(context, groupId))).groups);
    } catch (error) {
      if (!answered(error)) throw error;
      if (!refused(error)) failed.push({ groupId, error });
    }
  }
  return { groups, failed };
}

/** A partition an incremental answer left out: no records, the offsets the session last reported. */
function unchangedPartition(
  p: { topic: string; partition: number },
  session: FetchSessionHandler,
): SourceFetchPartitionResult | undefined {
  const offsets = session.unchanged(p.topic, p.partition);
  return offsets && { topic: p.topic, partition: p.partition, recordSlices: [], ...offsets };
}

/** Waits until every promise settled, or `ms` passed. */
async function settledWithin(promises: readonly Promise<unknown>[], ms: number): Promise<void> {
  if (promises.length === 0) return;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  await Promise.race([Promise.allSettled(promises), timeout]);
  clearTimeout(timer);
}

/** The highest Fetch version we send that the broker has: 13 (topics by id) or 12. */
function fetchVersionOf(broker: KjsBroker): FetchVersion {
  const range = broker.versions?.[API_FETCH];
  return range !== undefined && range.minVersion <= 13 && range.maxVersion >= 13 ? 13 : 12;
}

/**
 * KIP-392: the broker's `replica.selector.class` chose another replica to read from. The mirror reads from
 * partition leaders only (and sends no rack, so Kafka's RackAwareReplicaSelector picks the leader): only a
 * custom selector does this. Retriable: the partition retries after its backoff.
 */
function preferredReplicaRefused(context: string, replica: number): KafkaError {
  return new KafkaError(
    "PREFERRED_READ_REPLICA_NOT_SUPPORTED",
    -1,
    true,
    `${context}: the source broker asks to read from replica ${replica} instead (a preferred read replica chosen by its replica.selector.class) and sends no records; the mirror fetches from partition leaders only. Use Kafka's default selector or RackAwareReplicaSelector for the mirror's clients.`,
  );
}

/** True when the partition names a real topic id (Kafka's ZERO_UUID means none: a topic from before 2.8). */
function hasTopicId(p: SourceFetchPartition): boolean {
  return p.topicId !== undefined && p.topicId !== ZERO_UUID;
}

/** Each wanted topic's name by its id (every partition of a v13 fetch has one). */
function topicNamesById(partitions: readonly SourceFetchPartition[]): Map<string, string> {
  const names = new Map<string, string>();
  for (const p of partitions) if (p.topicId) names.set(p.topicId, p.topic);
  return names;
}

/** A full fetch outside any session (id 0, epoch -1): it neither reads nor moves a session. */
function sessionless(partitions: readonly SourceFetchPartition[]): SessionFetch {
  return { sessionId: 0, epoch: FINAL_EPOCH, partitions, forgotten: [], incremental: false };
}

function sessionAnswer(response: FetchResponse): SessionAnswer {
  return {
    errorCode: response.errorCode,
    sessionId: response.sessionId,
    partitions: response.topics.flatMap((t) =>
      t.partitions.map((p) => ({
        topic: t.topic,
        partition: p.partition,
        highWatermark: p.highWatermark,
        lastStableOffset: p.lastStableOffset,
        logStartOffset: p.logStartOffset,
      })),
    ),
  };
}

function offsetsOnly(
  p: { topic: string; partition: number },
  error: KafkaError | undefined,
): SourceFetchPartitionResult {
  const result: SourceFetchPartitionResult = {
    topic: p.topic,
    partition: p.partition,
    recordSlices: [],
    highWatermark: -1n,
    lastStableOffset: -1n,
    logStartOffset: -1n,
  };
  if (error) result.error = error;
  return result;
}

/** `host:port,host:port` → addresses; INVALID_CONFIG when empty or malformed. */
export function parseBootstrap(mirrorName: string, servers: string): { host: string; port: number }[] {
  const out: { host: string; port: number }[] = [];
  for (const item of servers.split(",")) {
    const s = item.trim();
    if (s === "") continue;
    const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):\/\//.exec(s);
    if (scheme)
      throw new KafkaError(
        "INVALID_CONFIG",
        40,
        false,
        `mirror '${mirrorName}': bootstrap.servers entry '${s}' has a scheme (${scheme[1]}://); give the broker's host:port alone (e.g. ${s.slice(scheme[0].length).replace(/\/.*$/, "") || "127.0.0.1:9092"}); security.protocol says how to connect`,
      );
    const m = /^(.*):(\d+)$/.exec(s);
    const port = m ? Number(m[2]) : Number.NaN;
    if (m && m[1] !== "" && !(port > 0 && port < 65536))
      throw new KafkaError(
        "INVALID_CONFIG",
        40,
        false,
        `mirror '${mirrorName}': bootstrap.servers entry '${s}' has port ${m[2]}, out of range; a port is 1 to 65535`,
      );
    if (!m || m[1] === "")
      throw new KafkaError(
        "INVALID_CONFIG",
        40,
        false,
        `mirror '${mirrorName}': bootstrap.servers entry '${s}' is not host:port (e.g. 127.0.0.1:9092)`,
      );
    out.push({ host: m[1]!.replace(/^\[(.*)\]$/, "$1"), port });
  }
  if (out.length === 0)
    throw new KafkaError("INVALID_CONFIG", 40, false, `mirror '${mirrorName}': bootstrap.servers is empty`);
  return out;
}
