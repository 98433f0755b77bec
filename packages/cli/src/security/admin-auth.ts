import * as crypto from "node:crypto";
import { KafkaError } from "@cluster-mirror/protocol";
import type { FastifyInstance, FastifyRequest } from "fastify";

declare module "fastify" {
  interface FastifyRequest {
    /** The principal the request's bearer token belongs to (set by the admin auth hook). */
    principal: string;
  }
}

/** The principal of the node's own admin token: a super user of every cluster of the node. */
export const ADMIN_PRINCIPAL = "User:admin";

/**
 * The principal of the node's mirroring engine towards its own embedded clusters (a mirror fetching from an
 * embedded source): a super user, never reachable through the admin API.
 */
export const NODE_PRINCIPAL = "User:cluster-mirror";

/** A principal and the bearer token that authenticates it on the admin API. */
export interface PrincipalToken {
  principal: string;
  token: string;
}

/** Who may call the admin API, and under which Host names. */
export interface AdminSecurity {
  /** The node's admin token (data dir `admin.token`): authenticates {@link ADMIN_PRINCIPAL}. */
  adminToken: string;
  /** Further principals, each with its own token (`--principals FILE`). */
  principals: readonly PrincipalToken[];
  /**
   * Host names besides 127.0.0.1, localhost and ::1 that a request's Host header may name (the port must
   * always be the one the request reached), e.g. the name of a host behind an SSH tunnel.
   */
  allowedHosts: readonly string[];
}

/** No (or a wrong) bearer token: HTTP 401. Kafka's name for a failed authentication. */
export class AdminAuthenticationError extends KafkaError {
  constructor(message: string) {
    super("SASL_AUTHENTICATION_FAILED", 58, false, message);
  }
}

/**
 * The Host header names neither a loopback name nor a configured host with the port the request reached:
 * HTTP 421. A web page the user visits could otherwise rebind its own name to 127.0.0.1 (DNS rebinding)
 * and call the API from the browser.
 */
export class MisdirectedRequestError extends KafkaError {
  constructor(message: string) {
    super("MISDIRECTED_REQUEST", -1, false, message);
  }
}

const LOOPBACK = ["127.0.0.1", "localhost", "::1"];

/** The message of a 401: what was wrong, and where the CLIs find the token. */
export function tokenAdvice(what: string): string {
  return `${what}. The node's admin API needs 'Authorization: Bearer <token>': the CLIs read it from the node's data dir (DATA_DIR/admin.token, or --data-dir DATA_DIR), from --token TOKEN or from the CLUSTER_MIRROR_TOKEN environment variable, and find it on their own for a node of the same user on this host`;
}

/**
 * The message of a 401 from the visualizer's API: a browser sends no Authorization header, it carries the
 * token in the cookie that opening the page with `?token=` sets.
 */
export function uiTokenAdvice(what: string): string {
  return `${what}. The visualizer's API needs the node's admin token: open the page once as /ui/?token=TOKEN (TOKEN is in the node's data dir, DATA_DIR/admin.token), which gives this browser the token as a cookie for /ui/, then reload; other clients send 'Authorization: Bearer <token>'`;
}

/**
 * Installs the check every admin request passes before any route runs: first the Host header (421 unless
 * it names 127.0.0.1, localhost, [::1] or an allowed host, with the port the request reached), then the
 * bearer token (401 unless it is the admin token or a principal's). Sets `req.principal`.
 */
export function registerAdminAuth(app: FastifyInstance, security: AdminSecurity): void {
  const byDigest = new Map<string, string>();
  byDigest.set(digest(security.adminToken), ADMIN_PRINCIPAL);
  for (const p of security.principals) byDigest.set(digest(p.token), p.principal);
  const hosts = new Set([...LOOPBACK, ...security.allowedHosts.map((h) => h.toLowerCase())]);
  app.decorateRequest("principal", "");
  app.addHook("onRequest", async (req, reply) => {
    checkHost(req, hosts);
    const url = req.url;
    // The visualizer's page and scripts hold no data: they load without a token. Opening
    // `/ui/?token=TOKEN` (the URL the node prints) hands the browser the token as an HttpOnly, SameSite=Strict
    // cookie, which its API calls and server-sent events then carry (EventSource cannot set headers).
    if (isUiAsset(url)) {
      const login = new URL(url, "http://node").searchParams.get("token");
      if (login !== null && byDigest.has(digest(login))) {
        reply.header("set-cookie", `${UI_COOKIE}=${login}; HttpOnly; SameSite=Strict; Path=/ui`);
      }
      return;
    }
    const header = req.headers.authorization;
    const ui = url.startsWith("/ui/api/");
    const advice = ui ? uiTokenAdvice : tokenAdvice;
    const cookie = ui ? uiCookie(req.headers.cookie) : undefined;
    if (header === undefined && cookie === undefined)
      throw new AdminAuthenticationError(advice("no admin token was sent"));
    const match = header === undefined ? undefined : /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (header !== undefined && !match)
      throw new AdminAuthenticationError(advice("the Authorization header is not 'Bearer <token>'"));
    // Tokens are compared by their SHA-256: a map lookup on digests tells an attacker nothing about a token.
    const principal = byDigest.get(digest(match?.[1] ?? cookie ?? ""));
    if (principal === undefined) {
      throw new AdminAuthenticationError(
        advice("the admin token sent is not this node's (nor a configured principal's)"),
      );
    }
    req.principal = principal;
  });
}

/** The cookie that carries the admin token for the visualizer's API calls. */
const UI_COOKIE = "cluster_mirror_token";

/** The visualizer's static files (`/ui`, `/ui/...` outside `/ui/api/`). */
function isUiAsset(url: string): boolean {
  return (url === "/ui" || url.startsWith("/ui/") || url.startsWith("/ui?")) && !url.startsWith("/ui/api/");
}

function uiCookie(header: string | undefined): string | undefined {
  for (const part of (header ?? "").split(";")) {
    const [name, ...value] = part.trim().split("=");
    if (name === UI_COOKIE) return decodeURIComponent(value.join("="));
  }
  return undefined;
}

function checkHost(req: FastifyRequest, hosts: ReadonlySet<string>): void {
  const host = req.headers.host ?? "";
  const match = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(host);
  const name = match?.[1]?.replace(/^\[|\]$/g, "").toLowerCase();
  const port = match?.[2] === undefined ? undefined : Number(match[2]);
  const reached = req.raw.socket?.localPort;
  const portOk = reached === undefined || port === reached;
  if (name !== undefined && hosts.has(name) && portOk) return;
  throw new MisdirectedRequestError(
    `the Host header '${host}' is not one this node answers to (${[...hosts].join(", ")} with port ${reached ?? "of the request"}); call it as http://127.0.0.1:${reached ?? "PORT"}, or start the node with --allowed-host NAME for a name that must reach it`,
  );
}

function digest(token: string): string {
  return crypto.createHash("sha256").update(token).digest("hex");
}
