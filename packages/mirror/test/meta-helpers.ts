import {
  type AclBinding,
  KafkaCluster,
  ManualClock,
  ManualScheduler,
  SeededRandom,
  type Uuid,
} from "@cluster-mirror/cluster";
import {
  COMMAND_ACCEPTED_IN,
  COMMAND_TARGETS,
  InvalidMirrorStateError,
  type LifecycleState,
  NON_RETRYABLE_ATTEMPT,
} from "@cluster-mirror/machines";
import { encodeRecordBatch } from "@cluster-mirror/protocol";
import { MirrorAdmin } from "../src/admin/mirror-admin";
import { MirrorMetadataManager } from "../src/metadata/mirror-metadata-manager";
import { SourceConnections } from "../src/metadata/source-connections";
import { MirrorMetrics } from "../src/metrics/mirror-metrics";
import type {
  DescribeTopicsOptions,
  MirrorCoordinators,
  MirrorPartitionKey,
  MirrorPartitionView,
  SourceCluster,
  SourceConnector,
} from "../src/ports";
import { EmbeddedSourceCluster } from "../src/source/embedded-source";

type Command = Parameters<MirrorCoordinators["command"]>[1];

/**
 * A fake MirrorCoordinators: one committed state per partition, commands checked against the machines'
 * COMMAND_ACCEPTED_IN and applied at once (the command's target state), every accepted command recorded.
 */
export class FakeCoordinators implements MirrorCoordinators {
  readonly commands: { key: MirrorPartitionKey; command: Command }[] = [];
  readonly tombstoned: string[] = [];
  private readonly states = new Map<string, MirrorPartitionView>();

  async command(key: MirrorPartitionKey, command: Command): Promise<void> {
    const view = this.states.get(id(key));
    const state = (view?.state ?? "UNKNOWN") as LifecycleState;
    const nonRetryable = state === "FAILED" && view?.retryAttempt === NON_RETRYABLE_ATTEMPT;
    if (!COMMAND_ACCEPTED_IN[command.type].includes(state) || (nonRetryable && command.type === "START")) {
      throw new InvalidMirrorStateError(
        state,
        command.type,
        null,
        `Cannot ${command.type} mirror partition in state ${state}`,
      );
    }
    this.commands.push({ key, command });
    const next = COMMAND_TARGETS[command.type];
    this.put(key, next, {
      errorMessage: command.type === "FAIL" ? command.message : null,
      retryAttempt: command.type === "FAIL" && !command.retryable ? NON_RETRYABLE_ATTEMPT : 0,
      previousState: state,
    });
  }

  describe(mirror?: string): MirrorPartitionView[] {
    return [...this.states.values()].filter((v) => mirror === undefined || v.key.mirror === mirror);
  }

  /** While set, tombstone writes wait for it (as appends waiting for their replicas). */
  tombstoneWait: Promise<void> | undefined;

  async tombstoneMirror(mirror: string): Promise<void> {
    await this.tombstoneWait;
    this.tombstoned.push(mirror);
    for (const [k, v] of this.states) if (v.key.mirror === mirror) this.states.delete(k);
  }

  /** Sets a partition's committed state (what the runtime would do as effects complete). */
  put(key: MirrorPartitionKey, state: LifecycleState, extra: Partial<MirrorPartitionView> = {}): void {
    const before = this.states.get(id(key));
    this.states.set(id(key), {
      key,
      state,
      stateEpoch: (before?.stateEpoch ?? 0) + 1,
      leaderEpoch: -1,
      lastMirrorEpoch: -1,
      errorMessage: null,
      retryAttempt: 0,
      previousState: before?.state ?? null,
      ...extra,
    });
  }

  /** Moves every partition in `from` to `to` (e.g. PREPARING -> MIRRORING once truncation is done). */
  advance(from: LifecycleState, to: LifecycleState): void {
    for (const v of [...this.states.values()]) if (v.state === from) this.put(v.key, to);
  }

  /** The state of one partition (UNKNOWN when it has none). */
  stateOf(topic: string, partition: number, mirror = "m1"): string {
    return (
      [...this.states.values()].find(
        (v) => v.key.mirror === mirror && v.key.topic === topic && v.key.partition === partition,
      )?.state ?? "UNKNOWN"
    );
  }

  /** Commands sent since the last call, as `TYPE topic-partition`, then forgotten. */
  take(): string[] {
    const out = this.commands.map((c) => `${c.command.type} ${c.key.topic}-${c.key.partition}`);
    this.commands.length = 0;
    return out;
  }
}

function id(key: MirrorPartitionKey): string {
  return `${key.mirror}\u0000${key.topic}\u0000${key.partition}`;
}

/**
 * A source reached through a "network" the test controls: `target` is the cluster answering at the
 * address (swap it to change the cluster id), `reachable = false` makes every call reject.
 */
export class TestSourceNetwork implements SourceConnector {
  target: KafkaCluster;
  reachable = true;
  /**
   * Topics the listing leaves out, as Kafka leaves out those the principal may not DESCRIBE; asked for by
   * name (`listOffsets`), each answers with its error (undefined: the source's own answer).
   */
  readonly hidden = new Map<string, Error | undefined>();
  /** For each describeTopics call, the source topics whose configs it asked for. */
  readonly configsAsked: string[][] = [];

  constructor(target: KafkaCluster) {
    this.target = target;
  }

  connect(): SourceCluster {
    const call =
      <K extends Exclude<keyof SourceCluster, "close" | "canFailBack">>(name: K) =>
      // biome-ignore lint/suspicious/noExplicitAny: a generic pass-through of the port's methods
      async (...args: any[]) => {
        if (!this.reachable) throw new Error("connection refused");
        // biome-ignore lint/suspicious/noExplicitAny: see above
        return (new EmbeddedSourceCluster(this.target)[name] as any)(...args);
      };
    return {
      clusterId: call("clusterId"),
      describeTopics: async (options?: DescribeTopicsOptions) => {
        if (!this.reachable) throw new Error("connection refused");
        const topics = (await new EmbeddedSourceCluster(this.target).describeTopics(options)).filter(
          (t) => !this.hidden.has(t.name),
        );
        this.configsAsked.push(
          topics.map((t) => t.name).filter((name) => options?.configsOf?.(name) ?? true),
        );
        return topics;
      },
      partitionLeaders: call("partitionLeaders"),
      fetch: call("fetch"),
      listOffsets: async (topic: string, ...rest: [number, bigint, string?]) => {
        const refusal = this.hidden.get(topic);
        if (refusal) throw refusal;
        return call("listOffsets")(topic, ...rest);
      },
      endOffsetForEpoch: call("endOffsetForEpoch"),
      listGroupOffsets: call("listGroupOffsets"),
      describeAcls: call("describeAcls"),
      lastMirrorEpoch: call("lastMirrorEpoch"),
      listMirrors: call("listMirrors"),
    } as SourceCluster;
  }
}

/** A source (1 broker) and a destination (2 brokers) on one manual clock, with the admin API and a manager. */
export function mirrorEnv(options: { leads?: boolean } = {}) {
  const clock = new ManualClock(1_700_000_000_000);
  const scheduler = new ManualScheduler(clock);
  const source = KafkaCluster.start({
    brokers: 1,
    clock,
    scheduler,
    random: new SeededRandom(1),
    clusterId: "source-cluster-AAAAAAAAA",
  });
  const destination = KafkaCluster.start({
    brokers: 2,
    clock,
    scheduler,
    random: new SeededRandom(2),
    clusterId: "dest-cluster-BBBBBBBBBBB",
  });
  const network = new TestSourceNetwork(source);
  const sources = new SourceConnections(network);
  const coordinators = new FakeCoordinators();
  const metrics = new MirrorMetrics({ coordinators });
  const admin = new MirrorAdmin({ destination, sources, coordinators });
  const lead = { leads: options.leads ?? true };
  const errors: { mirror: string; kind: string; error: unknown }[] = [];
  const skipped: { mirror: string; topic: string; why: string }[] = [];
  const manager = new MirrorMetadataManager({
    destination,
    sources,
    coordinators,
    scheduler,
    leadsMirror: () => lead.leads,
    metrics,
    onSyncError: (mirror, kind, error) => errors.push({ mirror, kind, error }),
    onTopicSkipped: (mirror, topic, why) => skipped.push({ mirror, topic, why }),
  });
  return {
    clock,
    scheduler,
    source,
    destination,
    network,
    sources,
    coordinators,
    metrics,
    admin,
    manager,
    lead,
    errors,
    skipped,
  };
}

/** The default mirror config of the tests. */
export const MIRROR_CONFIG = { "bootstrap.servers": "source:9092" };

/** Creates a source topic; returns its id. */
export function sourceTopic(
  cluster: KafkaCluster,
  name: string,
  numPartitions = 1,
  configs: Record<string, string> = {},
): Uuid {
  return cluster.controller.createTopic({ name, numPartitions, replicationFactor: 1, configs });
}

/** Appends `count` records (one batch) at a partition leader's log end, as the mirror fetcher would. */
export function appendRecords(
  cluster: KafkaCluster,
  topic: string,
  partition: number,
  count: number,
  leaderEpoch = 0,
): void {
  const leader = cluster.leaderFor(topic, partition);
  const log = leader.replica(topic, partition)!.log;
  leader.appendAsIs(topic, partition, recordsBatch(log.logEndOffset, leaderEpoch, count));
}

/** One batch of `count` records (values `v0`, `v1`, ...) at `baseOffset`, written at leader epoch `epoch`. */
export function recordsBatch(baseOffset: bigint, epoch: number, count: number): Buffer {
  return encodeRecordBatch({
    baseOffset,
    partitionLeaderEpoch: epoch,
    baseTimestamp: 1_700_000_000_000n,
    records: Array.from({ length: count }, (_, i) => ({
      attributes: 0,
      offsetDelta: i,
      timestampDelta: 0n,
      key: null,
      value: Buffer.from(`v${i}`),
      headers: [],
    })),
  });
}

/** An ACL binding with defaults (ALLOW READ for User:alice from any host, LITERAL). */
export function acl(
  resourceType: AclBinding["resourceType"],
  resourceName: string,
  extra: Partial<AclBinding> = {},
): AclBinding {
  return {
    resourceType,
    resourceName,
    patternType: "LITERAL",
    principal: "User:alice",
    host: "*",
    operation: "READ",
    permissionType: "ALLOW",
    ...extra,
  };
}
