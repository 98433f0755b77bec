import { createRequire } from "node:module";
import { framedSocketFactory, isReusedReadMemory, type SocketFactory } from "./framed-socket";
import type { RawRequest } from "./requests";

/**
 * The parts of kafkajs 2.2.4 used below its public API (it has no `exports` map, so deep requires work;
 * the version is pinned exactly and kafkajs is in maintenance mode, so these are frozen): one connection
 * pool and broker per source broker and client id, which give sockets, TLS, SASL, ApiVersions, request
 * queuing and throttling, and the broker's admin requests. Only these shapes are typed here.
 */
const require = createRequire(import.meta.url);

/** kafkajs's logger (src/loggers). */
export interface KjsLogger {
  namespace(name: string): KjsLogger;
}

/** A TLS and SASL setting as kafkajs's connections take them. */
export interface KjsConnectionSecurity {
  ssl?: boolean | Record<string, unknown>;
  sasl?: { mechanism: string; username?: string; password?: string; [k: string]: unknown };
}

/** kafkajs's Broker (src/broker): the admin requests used here. */
/** A broker's ApiVersions answer as kafkajs keeps it (opaque here: only handed from one connection to the next). */
/** kafkajs's public `ApiVersions`: each API key's version range on a broker. */
export type KjsApiVersions = Readonly<Record<number, { minVersion: number; maxVersion: number }>>;

export interface KjsBroker {
  readonly connectionPool: KjsConnectionPool;
  /** The broker's ApiVersions answer, once connected (kafkajs asks it on connect unless it was given). */
  readonly versions: KjsApiVersions | null;
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  isConnected(): boolean;
  describeConfigs(args: {
    resources: { type: number; name: string; configNames?: string[] }[];
    includeSynonyms?: boolean;
  }): Promise<{
    resources: {
      errorCode: number;
      errorMessage: string | null;
      resourceName: string;
      configEntries: {
        configName: string;
        configValue: string | null;
        configSource?: number;
        isDefault?: boolean;
      }[];
    }[];
  }>;
  describeAcls(filter: {
    resourceType: number;
    resourceName: string | null;
    resourcePatternType: number;
    principal: string | null;
    host: string | null;
    operation: number;
    permissionType: number;
  }): Promise<{
    errorCode: number;
    resources: {
      resourceType: number;
      resourceName: string;
      resourcePatternType: number;
      acls: { principal: string; host: string; operation: number; permissionType: number }[];
    }[];
  }>;
  listGroups(): Promise<{ groups: { groupId: string; protocolType: string }[] }>;
  describeGroups(args: { groupIds: string[] }): Promise<{
    groups: { groupId: string; state: string; members: unknown[]; errorCode: number }[];
  }>;
  offsetFetch(args: {
    groupId: string;
    topics: { topic: string; partitions: { partition: number }[] }[];
  }): Promise<{
    responses: {
      topic: string;
      partitions: { partition: number; offset: string; metadata: string | null }[];
    }[];
  }>;
  findGroupCoordinator(args: { groupId: string; coordinatorType: number }): Promise<{
    coordinator: { nodeId: number; host: string; port: number };
  }>;
}

/** kafkajs's ConnectionPool (src/network/connectionPool): `send` puts Fetch on its own connection. */
export interface KjsConnectionPool {
  send<T>(request: {
    request: { apiKey: number; apiVersion: number; apiName: string; encode: () => Promise<unknown> };
    response: { decode: (payload: Buffer) => Promise<unknown>; parse: (decoded: unknown) => Promise<T> };
    requestTimeout?: number;
    logResponseError?: boolean;
  }): Promise<T>;
  destroy(): Promise<void>;
}

type Ctor<T> = new (options: Record<string, unknown>) => T;

interface Kjs {
  Broker: Ctor<KjsBroker>;
  ConnectionPool: Ctor<KjsConnectionPool>;
  Encoder: new () => { writeBuffer(b: Buffer): unknown };
  socketFactory: SocketFactory;
  framedSocketFactory: SocketFactory;
  createLogger(o: { level: number; logCreator: unknown }): KjsLogger;
  LEVELS: Record<string, number>;
  errorCodes: ReadonlyMap<number, { type: string; retriable: boolean; message: string }>;
}

let loaded: Kjs | undefined;

/** kafkajs's modules, loaded on first use (a process that never reaches a real Kafka cluster never loads them). */
function kjs(): Kjs {
  if (loaded) return loaded;
  const { createLogger, LEVELS } = require("kafkajs/src/loggers") as Pick<Kjs, "createLogger" | "LEVELS">;
  const { errorCodes } = require("kafkajs/src/protocol/error") as {
    errorCodes: { type: string; code: number; retriable: boolean; message: string }[];
  };
  const socketFactory = (require("kafkajs/src/network/socketFactory") as () => SocketFactory)();
  loaded = {
    Broker: require("kafkajs/src/broker"),
    ConnectionPool: require("kafkajs/src/network/connectionPool"),
    Encoder: require("kafkajs/src/protocol/encoder"),
    socketFactory,
    framedSocketFactory: framedSocketFactory(socketFactory),
    createLogger,
    LEVELS,
    errorCodes: new Map(errorCodes.map((e) => [e.code, e])),
  };
  return loaded;
}

/** kafkajs's table of Kafka error codes: name, retriable and message by code. */
export function kafkajsErrorCode(
  code: number,
): { type: string; retriable: boolean; message: string } | undefined {
  return kjs().errorCodes.get(code);
}

/**
 * Where kafkajs's own log lines go: errors to `warn` when given; with `debug`, every other line too (each
 * request kafkajs sends on a connection, its connects and disconnects).
 */
export function kafkajsLogger(
  warn?: (message: string) => void,
  debug?: (message: string) => void,
): KjsLogger {
  const { createLogger, LEVELS } = kjs();
  const error = LEVELS.ERROR ?? 1;
  const logCreator =
    () => (entry: { namespace: string; level: number; log: { message: string; error?: string } }) => {
      const line = `kafkajs ${entry.namespace}: ${entry.log.message}${entry.log.error ? ` (${entry.log.error})` : ""}`;
      if (entry.level <= error) warn?.(line);
      else debug?.(line);
    };
  return createLogger({ level: debug ? (LEVELS.DEBUG ?? 5) : error, logCreator });
}

/** One kafkajs broker connection (a pool of two sockets: requests, and fetches) with this client id. */
export function kafkajsBroker(options: {
  host: string;
  port: number;
  nodeId: number | null;
  clientId: string;
  security: KjsConnectionSecurity;
  logger: KjsLogger;
  connectionTimeout: number;
  requestTimeout: number;
  /** What this broker answered to ApiVersions on another connection: kafkajs then does not ask again. */
  versions?: KjsApiVersions;
}): KjsBroker {
  const { Broker, ConnectionPool } = kjs();
  // SASL connections hand raw reads to kafkajs's authenticators: they keep kafkajs's own sockets.
  const socketFactory = options.security.sasl ? kjs().socketFactory : kjs().framedSocketFactory;
  const connectionPool = new ConnectionPool({
    host: options.host,
    port: options.port,
    ssl: options.security.ssl ?? null,
    sasl: options.security.sasl ?? null,
    clientId: options.clientId,
    socketFactory,
    connectionTimeout: options.connectionTimeout,
    requestTimeout: options.requestTimeout,
    enforceRequestTimeout: true,
    logger: options.logger,
  });
  return new Broker({
    connectionPool,
    logger: options.logger,
    nodeId: options.nodeId,
    allowAutoTopicCreation: false,
    // kafkajs's own cluster hands one ApiVersions answer to every broker it creates (BrokerPool).
    versions: options.versions ?? null,
  });
}

/** Sends one of our own requests over a kafkajs connection; `decode` reads the body after the correlation id. */
export function sendRaw<T>(
  broker: KjsBroker,
  request: RawRequest,
  decode: (body: Buffer) => T & { throttleTimeMs: number },
  requestTimeout?: number,
): Promise<T & { throttleTimeMs: number }> {
  return broker.connectionPool.send({
    request: {
      apiKey: request.apiKey,
      apiVersion: request.apiVersion,
      apiName: request.apiName,
      encode: async () => {
        const encoder = new (kjs().Encoder)();
        encoder.writeBuffer(request.body);
        return encoder;
      },
    },
    response: {
      // kafkajs throttles the connection by `clientSideThrottleTime` (KIP-219).
      decode: async (payload: Buffer) => {
        // Records are kept as views of the response, so it must not lie in memory the socket reuses
        // (kafkajs copies every response out of it; see framedSocketFactory).
        if (isReusedReadMemory(payload))
          throw new Error(
            `kafkajs handed over a ${request.apiName} response still in the socket's reused read memory; its bytes cannot be kept`,
          );
        const decoded = decode(payload);
        return { decoded, clientSideThrottleTime: decoded.throttleTimeMs };
      },
      parse: async (d: unknown) => (d as { decoded: T & { throttleTimeMs: number } }).decoded,
    },
    requestTimeout,
    logResponseError: false,
  });
}
