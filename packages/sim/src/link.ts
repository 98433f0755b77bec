import type { Random, Scheduler } from "@cluster-mirror/cluster";
import type { SourceCluster, SourceConnectOptions, SourceConnector } from "@cluster-mirror/mirror";
import { KafkaError } from "@cluster-mirror/protocol";

/** Settings of a link between a destination cluster and one of its sources. */
export interface LinkOptions {
  /** One-way latency, ms (default 1). */
  latencyMs?: number;
  /** Extra one-way latency drawn uniformly from [0, jitterMs) per message (default 0). */
  jitterMs?: number;
  /** A call whose round trip would take longer fails with REQUEST_TIMED_OUT after this long (default 30 000). */
  timeoutMs?: number;
}

/**
 * The network between a destination cluster and one source cluster, as the destination's mirror sees it:
 * latency with seeded jitter (delivered through the simulation scheduler), request timeouts, and cuts.
 * While the link is cut every call fails with a retriable NETWORK_EXCEPTION, as a lost connection would;
 * a call in flight when the link is cut fails when its answer would have arrived.
 */
export class Link {
  private cut = false;
  private configsRefused = false;
  private extraLatencyMs = 0;
  /** Calls that reached the source, and calls refused by a cut or a timeout (for reports). */
  readonly stats = { delivered: 0, refused: 0, timedOut: 0 };
  /** Hears every change of the link's behaviour (a cut, a heal, refused configs, a slowdown). */
  onChange: ((why: string) => void) | undefined;

  constructor(
    readonly name: string,
    private readonly scheduler: Scheduler,
    private readonly random: Random,
    private readonly options: LinkOptions = {},
  ) {}

  /** True while the link is cut. */
  get isCut(): boolean {
    return this.cut;
  }

  /** Cuts the link (a network partition between the two clusters). */
  cutLink(): void {
    this.cut = true;
    this.onChange?.("link cut");
  }

  /** Heals a cut link. */
  heal(): void {
    if (this.cut) this.onChange?.("link healed");
    this.cut = false;
  }

  /** True while the source answers topic metadata without configs (see `refuseConfigs`). */
  get refusesConfigs(): boolean {
    return this.configsRefused;
  }

  /**
   * Makes the source answer topic metadata without configs (`refuse` true) or with them again: as when
   * DescribeConfigs is refused (no DESCRIBE_CONFIGS on the topic), so the mirror sees them as unknown.
   */
  refuseConfigs(refuse: boolean): void {
    if (refuse !== this.configsRefused) this.onChange?.("configs refused or answered again");
    this.configsRefused = refuse;
  }

  /** Adds `ms` of one-way latency (0 restores the configured latency); above the timeout, calls time out. */
  slowDown(ms: number): void {
    if (Math.max(0, ms) !== this.extraLatencyMs) this.onChange?.(`link slowed by ${ms} ms`);
    this.extraLatencyMs = Math.max(0, ms);
  }

  /** Carries one call across the link: request latency, the call, response latency, cut and timeout checks. */
  async carry<T>(operation: string, call: () => Promise<T>): Promise<T> {
    this.refuseIfCut(operation);
    const timeoutMs = this.options.timeoutMs ?? 30_000;
    const there = this.oneWay();
    const back = this.oneWay();
    if (there + back > timeoutMs) {
      await this.sleep(timeoutMs);
      this.stats.timedOut++;
      throw new KafkaError(
        "REQUEST_TIMED_OUT",
        7,
        true,
        `${operation} over link ${this.name} timed out after ${timeoutMs} ms (simulated slow network)`,
      );
    }
    await this.sleep(there);
    this.refuseIfCut(operation);
    const result = await call();
    this.stats.delivered++;
    await this.sleep(back);
    this.refuseIfCut(operation);
    return result;
  }

  private oneWay(): number {
    const jitter = this.options.jitterMs ?? 0;
    return (this.options.latencyMs ?? 1) + this.extraLatencyMs + Math.floor(this.random.next() * jitter);
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.scheduler.schedule(resolve, ms);
    });
  }

  private refuseIfCut(operation: string): void {
    if (!this.cut) return;
    this.stats.refused++;
    throw new KafkaError(
      "NETWORK_EXCEPTION",
      13,
      true,
      `${operation} failed: link ${this.name} is cut (simulated network partition); retry after it heals`,
    );
  }
}

/**
 * A `SourceCluster` whose every call crosses a `Link`. `source` is asked for the connection as each call
 * arrives at the source, so a call made before the source's node restarted reaches the new process.
 */
export class LinkedSourceCluster implements SourceCluster {
  constructor(
    private readonly source: SourceCluster | (() => SourceCluster),
    readonly link: Link,
  ) {}

  private get inner(): SourceCluster {
    return typeof this.source === "function" ? this.source() : this.source;
  }

  clusterId(): ReturnType<SourceCluster["clusterId"]> {
    return this.link.carry("clusterId", () => this.inner.clusterId());
  }
  describeTopics(
    options?: Parameters<SourceCluster["describeTopics"]>[0],
  ): ReturnType<SourceCluster["describeTopics"]> {
    return this.link.carry("describeTopics", async () => {
      const topics = await this.inner.describeTopics(options);
      return this.link.refusesConfigs ? topics.map(({ configs: _unknown, ...topic }) => topic) : topics;
    });
  }
  partitionLeaders(topics: readonly string[]): ReturnType<SourceCluster["partitionLeaders"]> {
    return this.link.carry("partitionLeaders", () => this.inner.partitionLeaders(topics));
  }
  fetch(request: Parameters<SourceCluster["fetch"]>[0]): ReturnType<SourceCluster["fetch"]> {
    return this.link.carry("fetch", () => this.inner.fetch(request));
  }
  endOffsetForEpoch(
    topic: string,
    partition: number,
    epoch: number,
    topicId?: string,
  ): ReturnType<SourceCluster["endOffsetForEpoch"]> {
    return this.link.carry("endOffsetForEpoch", () =>
      this.inner.endOffsetForEpoch(topic, partition, epoch, topicId),
    );
  }
  listOffsets(topic: string, partition: number, timestamp: bigint, topicId?: string): Promise<bigint> {
    return this.link.carry("listOffsets", () => this.inner.listOffsets(topic, partition, timestamp, topicId));
  }
  listGroupOffsets(
    ...args: Parameters<SourceCluster["listGroupOffsets"]>
  ): ReturnType<SourceCluster["listGroupOffsets"]> {
    return this.link.carry("listGroupOffsets", () => this.inner.listGroupOffsets(...args));
  }
  describeAcls(): ReturnType<SourceCluster["describeAcls"]> {
    return this.link.carry("describeAcls", () => this.inner.describeAcls());
  }
  lastMirrorEpoch(...args: Parameters<SourceCluster["lastMirrorEpoch"]>): Promise<number> {
    return this.link.carry("lastMirrorEpoch", () => this.inner.lastMirrorEpoch(...args));
  }
  listMirrors(...args: Parameters<SourceCluster["listMirrors"]>): ReturnType<SourceCluster["listMirrors"]> {
    return this.link.carry("listMirrors", () => this.inner.listMirrors(...args));
  }
  /** What the source is, not a call over the link. */
  canFailBack(): boolean {
    return this.inner.canFailBack?.() ?? true;
  }
}

/**
 * A `SourceConnector` for one destination cluster that puts a `Link` between it and each source it connects
 * to (`linkFor(bootstrap)` names the link by the mirror's `bootstrap.servers`).
 */
export class LinkedSourceConnector implements SourceConnector {
  constructor(
    private readonly inner: SourceConnector,
    private readonly linkFor: (bootstrapServers: string) => Link,
    /** What answers at an address now (a node's current process): a change reconnects (see `connect`). */
    private readonly answering?: (bootstrapServers: string) => unknown,
  ) {}

  /**
   * Connects through the link. When what answers at the address changes (the node there was restarted:
   * a new process), the next call connects again, as a Kafka client reconnects to the same host and port
   * once the old connection died; the old process answers nothing more.
   */
  connect(
    mirrorName: string,
    configs: Readonly<Record<string, string>>,
    options?: SourceConnectOptions,
  ): SourceCluster {
    const bootstrap = configs["bootstrap.servers"] ?? "";
    const open = () => ({
      process: this.answering?.(bootstrap),
      source: this.inner.connect(mirrorName, configs, options),
    });
    let current = open();
    const source = () => {
      if (this.answering && this.answering(bootstrap) !== current.process) current = open();
      return current.source;
    };
    return new LinkedSourceCluster(this.answering ? source : current.source, this.linkFor(bootstrap));
  }
}
