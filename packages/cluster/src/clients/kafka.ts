import { AdminHandler } from "../admin-handler";
import type { RequestContext } from "../broker";
import type { KafkaCluster } from "../kafka-cluster";
import { type Random, SeededRandom } from "../random";
import type { Scheduler } from "../scheduler";
import { Admin, type AdminConfig } from "./admin";
import {
  checkAdminConfig,
  checkConsumerConfig,
  checkEmbeddedKafkaArguments,
  checkProducerConfig,
} from "./client-config-checks";
import { Consumer, type ConsumerConfig } from "./consumer";
import { Producer, type ProducerConfig } from "./producer";
import type { RetryOptions } from "./retry";

/** Settings of an embedded client (the in-process counterpart of kafkajs's `KafkaConfig`). */
export interface EmbeddedKafkaConfig {
  /** Client id for quotas and group member ids (default `kafkajs`, as kafkajs). */
  clientId?: string;
  /** The authenticated principal ACLs are checked against (default `User:ANONYMOUS`). */
  principal?: string;
  /** The client's host for host-specific ACLs (default: none, matching only `*` bindings). */
  host?: string;
  /** Default retry settings of every client made from this one. */
  retry?: RetryOptions;
  /** Randomness for retry jitter; defaults to a generator seeded from the client id, so runs repeat. */
  random?: Random;
  /**
   * Where the clients' own waits (retry backoffs, polls) run; default the cluster's scheduler. An
   * application is a process of its own: a simulation that kills the cluster's node gives its clients
   * the world's scheduler, so their timers outlive that node's.
   */
  scheduler?: Scheduler;
}

/** What the admin, producer and consumer share: the cluster, who they are, and how they retry. */
export interface ClientContext {
  readonly cluster: KafkaCluster;
  readonly handler: AdminHandler;
  readonly request: RequestContext;
  readonly clientId: string;
  readonly retry: RetryOptions | undefined;
  readonly random: Random;
  /** Where the clients' own waits run (see `EmbeddedKafkaConfig.scheduler`). */
  readonly scheduler: Scheduler;
}

/**
 * The in-process counterpart of kafkajs's `Kafka` object: `new EmbeddedKafka(cluster, { clientId })`, then
 * `.admin()`, `.producer(opts)` and `.consumer({ groupId })`, shaped like kafkajs 2.2.4. Requests go
 * straight to the brokers and coordinators of `cluster` (no sockets); time comes from the cluster's clock
 * and every wait runs on its scheduler, so with a `ManualScheduler` a test drives them step by step.
 */
export class EmbeddedKafka {
  readonly context: ClientContext;

  constructor(cluster: KafkaCluster, config: EmbeddedKafkaConfig = {}) {
    checkEmbeddedKafkaArguments(cluster, config);
    const clientId = config.clientId ?? "kafkajs";
    this.context = {
      cluster,
      handler: new AdminHandler(cluster),
      request: {
        principal: config.principal ?? "User:ANONYMOUS",
        clientId,
        ...(config.host === undefined ? {} : { host: config.host }),
      },
      clientId,
      retry: config.retry,
      random: config.random ?? new SeededRandom(seedOf(clientId)),
      scheduler: config.scheduler ?? cluster.scheduler,
    };
  }

  /** An admin client. */
  admin(config: AdminConfig = {}): Admin {
    checkAdminConfig(config);
    return new Admin(this.context, config);
  }

  /** A producer (idempotent and/or transactional on request). */
  producer(config: ProducerConfig = {}): Producer {
    checkProducerConfig(config);
    return new Producer(this.context, config);
  }

  /** A group consumer. */
  consumer(config: ConsumerConfig): Consumer {
    checkConsumerConfig(config);
    return new Consumer(this.context, config);
  }
}

function seedOf(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}
