import { Reader, Writer } from "./wire";

/**
 * The requests kafkajs 2.2.4 lacks or sends in a form that loses what a mirror needs, encoded and decoded
 * here from Kafka 3.9's message definitions (clients/src/main/resources/common/message/*.json):
 * - Fetch v12 and v13: `LastFetchedEpoch` and the `DivergingEpoch` answer (KIP-320/595) exist from v12 on;
 *   v13 names topics by id (KIP-516), so a topic deleted and created again under the same name answers
 *   UNKNOWN_TOPIC_ID instead of its new records. The records section is kept as the broker's bytes
 *   (kafkajs's own decoder flattens batches).
 * - Metadata v12: topic ids and leader epochs (kafkajs stops at v6, which has neither).
 * - OffsetsForLeaderEpoch v3 (kafkajs has none) and ListOffsets v5 (the current leader epoch check, and
 *   KIP-207's OFFSET_NOT_AVAILABLE: before v5 Kafka calls a new leader whose high watermark still lags its
 *   epoch start LEADER_NOT_AVAILABLE, which the promote's catch-up barrier cannot tell from a real fault).
 * - ConsumerGroupDescribe v0 (KIP-848, Kafka 4; kafkajs has none): the classic DescribeGroups answers a
 *   group of the new consumer protocol as Dead with no members.
 * Flexible versions (Fetch v12+, Metadata v12) use request header v2 and response header v1: each is the
 * older header plus an empty tagged-field section, so the body starts with that section (one 0 byte
 * going out, skipped coming in) and kafkajs's v1 header writer and correlation-id reader stay correct.
 */

/** A request as kafkajs's connection sends it: api key and version, and the body. */
export interface RawRequest {
  apiKey: number;
  apiVersion: number;
  apiName: string;
  body: Buffer;
}

export const API_FETCH = 1;
export const API_LIST_OFFSETS = 2;
export const API_METADATA = 3;
export const API_OFFSETS_FOR_LEADER_EPOCH = 23;
export const API_CONSUMER_GROUP_DESCRIBE = 69;

/** Kafka's isolation levels. */
export const READ_UNCOMMITTED = 0;
export const READ_COMMITTED = 1;

// ---------------------------------------------------------------------------------------------------- Fetch

export interface FetchPartitionRequest {
  partition: number;
  currentLeaderEpoch: number;
  fetchOffset: bigint;
  lastFetchedEpoch: number;
  partitionMaxBytes: number;
}

export interface FetchRequest {
  maxWaitMs: number;
  minBytes: number;
  maxBytes: number;
  isolationLevel: number;
  /** The fetch session (KIP-227): 0 with epoch -1 fetches without one; see `FetchSessionHandler`. */
  sessionId: number;
  sessionEpoch: number;
  /** Each topic by name (v12) or by id (v13: `topicId` is required). */
  topics: { topic: string; topicId?: string; partitions: FetchPartitionRequest[] }[];
  /** Partitions an incremental fetch drops from its session. */
  forgottenTopics: { topic: string; topicId?: string; partitions: number[] }[];
}

/** The Fetch versions sent: 13 (topics by id) where the broker has it, else 12 (by name). */
export type FetchVersion = 12 | 13;

/** Fetch v12 or v13 as a consumer sends it: replica id -1, in a fetch session or without one. */
export function encodeFetch(request: FetchRequest, version: FetchVersion): RawRequest {
  const topic = (tw: Writer, t: { topic: string; topicId?: string }): Writer => {
    if (version === 12) return tw.compactString(t.topic);
    if (t.topicId === undefined) throw new RangeError(`Fetch v13 names topics by id: '${t.topic}' has none`);
    return tw.uuid(t.topicId);
  };
  const w = new Writer().noTags(); // request header v2's tagged fields
  w.int32(-1) // ReplicaId: a consumer, so a plain Kafka cluster needs no replication rights
    .int32(request.maxWaitMs)
    .int32(request.minBytes)
    .int32(request.maxBytes)
    .int8(request.isolationLevel)
    .int32(request.sessionId)
    .int32(request.sessionEpoch)
    .compactArray(request.topics, (tw, t) => {
      topic(tw, t)
        .compactArray(t.partitions, (pw, p) => {
          pw.int32(p.partition)
            .int32(p.currentLeaderEpoch)
            .int64(p.fetchOffset)
            .int32(p.lastFetchedEpoch)
            .int64(-1n) // LogStartOffset: only followers send it
            .int32(p.partitionMaxBytes)
            .noTags();
        })
        .noTags();
    })
    .compactArray(request.forgottenTopics, (fw, t) => {
      topic(fw, t)
        .compactArray(t.partitions, (pw, partition) => {
          pw.int32(partition);
        })
        .noTags();
    })
    .compactString("") // RackId
    .noTags();
  return { apiKey: API_FETCH, apiVersion: version, apiName: "Fetch", body: w.finish() };
}

export interface FetchPartitionResponse {
  partition: number;
  errorCode: number;
  highWatermark: bigint;
  lastStableOffset: bigint;
  logStartOffset: bigint;
  divergingEpoch?: { epoch: number; endOffset: bigint };
  currentLeader?: { leaderId: number; leaderEpoch: number };
  /** KIP-392: the replica the broker wants this partition read from (-1: none; then no records came). */
  preferredReadReplica: number;
  abortedTransactions: { producerId: bigint; firstOffset: bigint }[] | null;
  /** The records section exactly as the broker sent it (a view of the response, not a copy), or empty. */
  records: Buffer;
}

export interface FetchResponse {
  throttleTimeMs: number;
  errorCode: number;
  /** The fetch session the broker holds for this client (0: none). */
  sessionId: number;
  /** v12 answers topics by name; v13 by id (`topic` is then empty: the caller knows the names it asked for). */
  topics: { topic: string; topicId?: string; partitions: FetchPartitionResponse[] }[];
}

/** Decodes a Fetch v12 or v13 response body (after the correlation id). */
export function decodeFetch(body: Buffer, version: FetchVersion): FetchResponse {
  const r = new Reader(body);
  r.tags(); // response header v1
  const throttleTimeMs = r.int32();
  const errorCode = r.int16();
  const sessionId = r.int32();
  const topics = r.compactArray((tr) => {
    const topicId = version === 13 ? tr.uuid() : undefined;
    const topic = version === 13 ? "" : (tr.compactString() ?? "");
    const partitions = tr.compactArray((pr): FetchPartitionResponse => {
      const out: FetchPartitionResponse = {
        partition: pr.int32(),
        errorCode: pr.int16(),
        highWatermark: pr.int64(),
        lastStableOffset: pr.int64(),
        logStartOffset: pr.int64(),
        abortedTransactions: null,
        preferredReadReplica: -1,
        records: EMPTY,
      };
      const aborted = pr.uvarint();
      if (aborted > 0) {
        out.abortedTransactions = [];
        for (let i = 0; i < aborted - 1; i++) {
          out.abortedTransactions.push({ producerId: pr.int64(), firstOffset: pr.int64() });
          pr.tags();
        }
      }
      out.preferredReadReplica = pr.int32();
      const size = pr.uvarint();
      if (size > 0) out.records = pr.take(size - 1);
      pr.tags((tag, v) => {
        if (tag === 0) {
          out.divergingEpoch = { epoch: v.int32(), endOffset: v.int64() };
        } else if (tag === 1) {
          out.currentLeader = { leaderId: v.int32(), leaderEpoch: v.int32() };
        }
      });
      return out;
    });
    tr.tags();
    return topicId === undefined ? { topic, partitions } : { topic, topicId, partitions };
  });
  r.tags();
  return { throttleTimeMs, errorCode, sessionId, topics };
}

const EMPTY = Buffer.alloc(0);

// ------------------------------------------------------------------------------------------------- Metadata

export interface MetadataBroker {
  nodeId: number;
  host: string;
  port: number;
  rack: string | null;
}

export interface MetadataPartition {
  errorCode: number;
  partition: number;
  leaderId: number;
  leaderEpoch: number;
  replicas: number[];
  isr: number[];
}

export interface MetadataTopic {
  errorCode: number;
  name: string;
  topicId: string;
  isInternal: boolean;
  partitions: MetadataPartition[];
}

export interface MetadataResponse {
  throttleTimeMs: number;
  brokers: MetadataBroker[];
  clusterId: string | null;
  controllerId: number;
  topics: MetadataTopic[];
}

/** Metadata v12 for the named topics, or every topic when `topics` is null; never auto-creates. */
export function encodeMetadataV12(topics: readonly string[] | null): RawRequest {
  const w = new Writer().noTags();
  w.compactArray(topics, (tw, name) => {
    tw.uuid("00000000-0000-0000-0000-000000000000").compactString(name).noTags();
  })
    .int8(0) // AllowAutoTopicCreation: a mirror must never create topics on its source
    .int8(0) // IncludeTopicAuthorizedOperations
    .noTags();
  return { apiKey: API_METADATA, apiVersion: 12, apiName: "Metadata", body: w.finish() };
}

export function decodeMetadataV12(body: Buffer): MetadataResponse {
  const r = new Reader(body);
  r.tags();
  const throttleTimeMs = r.int32();
  const brokers = r.compactArray((br) => {
    const b = {
      nodeId: br.int32(),
      host: br.compactString() ?? "",
      port: br.int32(),
      rack: br.compactString(),
    };
    br.tags();
    return b;
  });
  const clusterId = r.compactString();
  const controllerId = r.int32();
  const int32s = (ar: Reader) => ar.compactArray((x) => x.int32());
  const topics = r.compactArray((tr): MetadataTopic => {
    const errorCode = tr.int16();
    const name = tr.compactString() ?? "";
    const topicId = tr.uuid();
    const isInternal = tr.bool();
    const partitions = tr.compactArray((pr): MetadataPartition => {
      const p = {
        errorCode: pr.int16(),
        partition: pr.int32(),
        leaderId: pr.int32(),
        leaderEpoch: pr.int32(),
        replicas: int32s(pr),
        isr: int32s(pr),
      };
      int32s(pr); // OfflineReplicas
      pr.tags();
      return p;
    });
    tr.int32(); // TopicAuthorizedOperations
    tr.tags();
    return { errorCode, name, topicId, isInternal, partitions };
  });
  r.tags();
  return { throttleTimeMs, brokers, clusterId, controllerId, topics };
}

// ------------------------------------------------------------------------------------ OffsetsForLeaderEpoch

export interface EpochEndOffset {
  topic: string;
  partition: number;
  errorCode: number;
  leaderEpoch: number;
  endOffset: bigint;
}

/** OffsetsForLeaderEpoch v3 as a consumer sends it (replica id -1). */
export function encodeOffsetsForLeaderEpochV3(
  partitions: readonly {
    topic: string;
    partition: number;
    currentLeaderEpoch: number;
    leaderEpoch: number;
  }[],
): RawRequest {
  const w = new Writer().int32(-1);
  w.array(groupByTopic(partitions), (tw, [topic, ps]) => {
    tw.string(topic).array(ps, (pw, p) => {
      pw.int32(p.partition).int32(p.currentLeaderEpoch).int32(p.leaderEpoch);
    });
  });
  return {
    apiKey: API_OFFSETS_FOR_LEADER_EPOCH,
    apiVersion: 3,
    apiName: "OffsetForLeaderEpoch",
    body: w.finish(),
  };
}

export function decodeOffsetsForLeaderEpochV3(body: Buffer): {
  throttleTimeMs: number;
  partitions: EpochEndOffset[];
} {
  const r = new Reader(body);
  const throttleTimeMs = r.int32();
  const partitions: EpochEndOffset[] = [];
  r.array((tr) => {
    const topic = tr.string() ?? "";
    tr.array((pr) => {
      const errorCode = pr.int16();
      const partition = pr.int32();
      partitions.push({ topic, partition, errorCode, leaderEpoch: pr.int32(), endOffset: pr.int64() });
    });
  });
  return { throttleTimeMs, partitions };
}

// ---------------------------------------------------------------------------------------------- ListOffsets

export interface ListOffsetsAnswer {
  topic: string;
  partition: number;
  errorCode: number;
  timestamp: bigint;
  offset: bigint;
  leaderEpoch: number;
}

/**
 * ListOffsets v5 (consumer, replica id -1): timestamp -2 earliest, -1 latest (HW or LSO by isolation). The
 * same fields as v4; v5 lets the broker answer OFFSET_NOT_AVAILABLE (KIP-207) where it answers v4 with
 * LEADER_NOT_AVAILABLE: a leader whose high watermark has not reached its epoch's start yet.
 */
export function encodeListOffsetsV5(
  isolationLevel: number,
  partitions: readonly { topic: string; partition: number; currentLeaderEpoch: number; timestamp: bigint }[],
): RawRequest {
  const w = new Writer().int32(-1).int8(isolationLevel);
  w.array(groupByTopic(partitions), (tw, [topic, ps]) => {
    tw.string(topic).array(ps, (pw, p) => {
      pw.int32(p.partition).int32(p.currentLeaderEpoch).int64(p.timestamp);
    });
  });
  return { apiKey: API_LIST_OFFSETS, apiVersion: 5, apiName: "ListOffsets", body: w.finish() };
}

export function decodeListOffsetsV5(body: Buffer): {
  throttleTimeMs: number;
  partitions: ListOffsetsAnswer[];
} {
  const r = new Reader(body);
  const throttleTimeMs = r.int32();
  const partitions: ListOffsetsAnswer[] = [];
  r.array((tr) => {
    const topic = tr.string() ?? "";
    tr.array((pr) => {
      partitions.push({
        topic,
        partition: pr.int32(),
        errorCode: pr.int16(),
        timestamp: pr.int64(),
        offset: pr.int64(),
        leaderEpoch: pr.int32(),
      });
    });
  });
  return { throttleTimeMs, partitions };
}

// ------------------------------------------------------------------------------------ ConsumerGroupDescribe

/** One group of the KIP-848 consumer protocol, as far as a mirror needs it. */
export interface ConsumerGroupSummary {
  errorCode: number;
  groupId: string;
  groupState: string;
  members: number;
}

/** ConsumerGroupDescribe v0 (flexible) for one group: asking one at a time keeps the answer's parse short. */
export function encodeConsumerGroupDescribeV0(groupId: string): RawRequest {
  const w = new Writer().noTags();
  w.compactArray([groupId], (gw, id) => {
    gw.compactString(id);
  })
    .int8(0) // IncludeAuthorizedOperations
    .noTags();
  return {
    apiKey: API_CONSUMER_GROUP_DESCRIBE,
    apiVersion: 0,
    apiName: "ConsumerGroupDescribe",
    body: w.finish(),
  };
}

/**
 * The first group of a ConsumerGroupDescribe v0 answer: its error, state and member count (read up to the
 * members array's length; what follows, the members themselves, is not needed).
 */
export function decodeConsumerGroupDescribeV0(body: Buffer): {
  throttleTimeMs: number;
  group: ConsumerGroupSummary | undefined;
} {
  const r = new Reader(body);
  r.tags();
  const throttleTimeMs = r.int32();
  const groups = r.uvarint() - 1;
  if (groups <= 0) return { throttleTimeMs, group: undefined };
  const errorCode = r.int16();
  r.compactString(); // ErrorMessage
  const groupId = r.compactString() ?? "";
  const groupState = r.compactString() ?? "";
  r.int32(); // GroupEpoch
  r.int32(); // AssignmentEpoch
  r.compactString(); // AssignorName
  const members = Math.max(0, r.uvarint() - 1);
  return { throttleTimeMs, group: { errorCode, groupId, groupState, members } };
}

function groupByTopic<T extends { topic: string }>(items: readonly T[]): [string, T[]][] {
  const by = new Map<string, T[]>();
  for (const item of items) {
    const list = by.get(item.topic);
    if (list) list.push(item);
    else by.set(item.topic, [item]);
  }
  return [...by];
}
