import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { describePartitionLog } from "@cluster-mirror/cluster";
import { FleetModel, type InspectionEvent, type StateHistoryPage } from "@cluster-mirror/visualizer";
import Fastify from "fastify";
import { pino } from "pino";
import { afterEach, describe, expect, it, vi } from "vitest";
import { buildAdminServer } from "../src/node/http-server";
import { InspectionStream } from "../src/node/inspection-stream";
import { MirrorNode } from "../src/node/mirror-node";
import { registerUiRoutes } from "../src/node/ui-routes";
import { addTopicsWhenReady, mirroringNode } from "./in-process-node";

const open: { close(): unknown }[] = [];
const SECURITY = { adminToken: "ui-routes-test-token", principals: [], allowedHosts: [] };
const AUTH = { authorization: `Bearer ${SECURITY.adminToken}` };
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

describe("the visualizer's node routes", () => {
  it("stream: a new client gets every partition, then each committed transition as an XState snapshot event", async () => {
    const node = await mirroringNode(open);
    const stream = new InspectionStream(node);
    open.push(stream);
    const events: InspectionEvent[] = [];
    stream.connect((e) => events.push(e));
    const actors = events.filter((e) => e.type === "@xstate.actor");
    expect(actors.map((e) => e.sessionId).sort()).toEqual(["dr/m/orders-0", "dr/m/orders-1"]);
    expect(actors[0]).toMatchObject({
      rootId: "dr",
      parentId: "dr/m",
      actorRef: { id: actors[0]?.sessionId, sessionId: actors[0]?.sessionId },
      snapshot: { value: "MIRRORING", status: "active", context: { mirror: "m", topic: "orders" } },
    });

    await node.destination.mirroring.admin.removeTopics("m", "orders");
    await node.destination.mirroring.whenState("m", "STOPPED");
    const changes = events
      .filter((e) => e.type === "@xstate.snapshot" && e.event.type !== "cluster-mirror.lag")
      .map((e) => (e.type === "@xstate.snapshot" ? `${e.sessionId} ${e.snapshot.value}` : ""));
    // Each snapshot follows the event the actor handled, as XState's inspector reports a step.
    const stepOf = (i: number) => `${events[i]?.type} ${events[i]?.sessionId}`;
    const firstSnapshot = events.findIndex(
      (e) => e.type === "@xstate.snapshot" && e.event.type !== "cluster-mirror.lag",
    );
    expect(stepOf(firstSnapshot - 1)).toBe(`@xstate.event ${events[firstSnapshot]?.sessionId}`);
    for (const p of ["dr/m/orders-0", "dr/m/orders-1"]) {
      expect(changes).toContain(`${p} STOPPING`);
      expect(changes).toContain(`${p} STOPPED`);
      expect(changes.indexOf(`${p} STOPPING`)).toBeLessThan(changes.indexOf(`${p} STOPPED`));
    }
  });

  it("stream: ?cluster= (empty) is the destination, as on /ui/api/mirror-state, not a stream of nothing", async () => {
    const node = await mirroringNode(open);
    const stream = new InspectionStream(node);
    open.push(stream);
    const events: InspectionEvent[] = [];
    stream.connect((e) => events.push(e), "");
    expect(events.map((e) => e.sessionId).sort()).toEqual(["dr/m/orders-0", "dr/m/orders-1"]);
    await node.destination.mirroring.admin.pauseTopics("m", "orders");
    await node.destination.mirroring.whenState("m", "PAUSED");
    const committed = events.filter(
      (e) => e.type === "@xstate.snapshot" && e.event.type !== "cluster-mirror.lag",
    );
    expect(committed.map((e) => (e.type === "@xstate.snapshot" ? e.snapshot.value : ""))).toContain("PAUSED");
  });

  it("stream: inspects the actors only while a client listens, and a later client gets later commits", async () => {
    const node = await mirroringNode(open);
    const stream = new InspectionStream(node);
    open.push(stream);
    expect(stream.observing).toBe(false);
    const early: InspectionEvent[] = [];
    const leave = stream.connect((e) => early.push(e));
    expect(stream.observing).toBe(true);
    leave();
    expect(stream.observing).toBe(false);

    const admin = node.destination.mirroring.admin;
    await admin.pauseTopics("m", "orders");
    await node.destination.mirroring.whenState("m", "PAUSED");
    expect(early.filter((e) => e.type !== "@xstate.actor")).toEqual([]);

    const late: InspectionEvent[] = [];
    stream.connect((e) => late.push(e));
    expect(late.map((e) => (e.type === "@xstate.actor" ? e.snapshot.value : e.type))).toEqual([
      "PAUSED",
      "PAUSED",
    ]);
    await admin.resumeTopics("m", "orders");
    await node.destination.mirroring.whenState("m", "MIRRORING");
    const committed = late.filter(
      (e) => e.type === "@xstate.snapshot" && e.event.type !== "cluster-mirror.lag",
    );
    expect(
      committed
        .map((e) =>
          e.type === "@xstate.snapshot" ? `${e.sessionId} ${e.event.type} ${e.snapshot.value}` : "",
        )
        .sort(),
    ).toEqual(["dr/m/orders-0 COMMITTED MIRRORING", "dr/m/orders-1 COMMITTED MIRRORING"]);
  });

  it("stream: a deleted mirror's partitions are pushed as stopped actors, so the page drops them as --describe does", async () => {
    const node = await mirroringNode(open);
    const rounds: (() => void)[] = [];
    const stream = new InspectionStream(node, {
      schedule: (task) => {
        rounds.push(task);
        return () => {};
      },
    });
    open.push(stream);
    const events: InspectionEvent[] = [];
    stream.connect((e) => events.push(e));
    const admin = node.destination.mirroring.admin;
    await admin.removeTopics("m", "orders");
    await node.destination.mirroring.whenState("m", "STOPPED");
    await admin.deleteMirror("m");
    expect(await admin.describe()).toEqual([]);
    const stopped = () =>
      events
        .filter((e) => e.type === "@xstate.snapshot" && e.snapshot.status === "stopped")
        .map((e) => (e.type === "@xstate.snapshot" ? `${e.sessionId} ${e.snapshot.value}` : ""))
        .sort();
    rounds.shift()?.(); // the next lag round
    await vi.waitFor(() => expect(stopped()).toEqual(["dr/m/orders-0 STOPPED", "dr/m/orders-1 STOPPED"]));
    const fleet = new FleetModel();
    for (const e of events) fleet.apply(e);
    expect(fleet.size).toBe(0);
    expect(fleet.mirrors()).toEqual([]);

    // Created again: the new partitions come back as actors on their first transitions.
    await admin.createMirror("m", { "bootstrap.servers": "primary:9092" });
    await addTopicsWhenReady(admin, "m", "orders");
    await node.destination.mirroring.whenState("m", "MIRRORING");
    for (const e of events) fleet.apply(e);
    expect(fleet.ordered().map((c) => `${c.id} ${c.state}`)).toEqual([
      "dr/m/orders-0 MIRRORING",
      "dr/m/orders-1 MIRRORING",
    ]);
  });

  it("mirror-state: pages the decoded __mirror_state history in time order", async () => {
    const node = await mirroringNode(open);
    const app = buildAdminServer(node, pino({ level: "silent" }), SECURITY);
    open.push(app);
    const all = (
      await app.inject({ method: "GET", url: "/ui/api/mirror-state", headers: AUTH })
    ).json() as StateHistoryPage;
    expect(all.partitions.map((p) => p.partition)).toEqual([0, 1]);
    const states = all.records.filter((r) => r.key?.kind === "MirrorPartitionState");
    expect(new Set(states.map((r) => `${r.key?.topic}-${r.key?.partition}`))).toEqual(
      new Set(["orders-0", "orders-1"]),
    );
    expect(states.map((r) => r.timestamp)).toEqual([...states.map((r) => r.timestamp)].sort((a, b) => a - b));
    expect(all.records.map((r) => r.position)).toEqual(all.records.map((_, i) => i));
    // The last state record of each partition is MIRRORING, the first PREPARING (stateEpoch 1).
    const first = states.find((r) => r.key?.partition === 0);
    expect(first?.value).toMatchObject({ state: "PREPARING", stateEpoch: 1, previousState: "UNKNOWN" });

    const page = (
      await app.inject({ method: "GET", url: "/ui/api/mirror-state?offset=1&limit=2", headers: AUTH })
    ).json();
    expect(page).toMatchObject({ total: all.total, offset: 1, records: all.records.slice(1, 3) });
    const bad = await app.inject({ method: "GET", url: "/ui/api/mirror-state?limit=0", headers: AUTH });
    expect(bad.statusCode).toBe(400);
  });

  it("mirror-state: lists committed records only, not those above a partition's high watermark", async () => {
    const node = await mirroringNode(open, { brokers: 3, numStatePartitions: 1, partitions: 1 });
    const admin = node.destination.mirroring.admin;
    const app = buildAdminServer(node, pino({ level: "silent" }), SECURITY);
    open.push(app);
    const history = async () =>
      (
        await app.inject({ method: "GET", url: "/ui/api/mirror-state", headers: AUTH })
      ).json() as StateHistoryPage;
    const stateOf = (r: StateHistoryPage["records"][number]) =>
      r.value !== null && "state" in r.value ? r.value.state : undefined;
    const before = await history();

    // The followers hear of the pause's records late: the leader holds them above its high watermark.
    const kafka = node.destination.cluster;
    kafka.setReplicationLatency(3_000);
    const paused = admin.pauseTopics("m", "orders");
    paused.catch(() => {}); // awaited below; a failed assertion in between must not leave it unhandled
    await vi.waitFor(() => {
      const log = describePartitionLog(kafka, "__mirror_state", 0, { maxBatches: 0 });
      expect(log.logEndOffset).toBeGreaterThan(log.highWatermark);
    });
    const during = await history();
    expect(during.total).toBe(before.total);
    expect(during.records.map(stateOf)).not.toContain("PAUSING");

    kafka.setReplicationLatency(0);
    await paused;
    await node.destination.mirroring.whenState("m", "PAUSED");
    await vi.waitFor(async () => expect((await history()).records.map(stateOf)).toContain("PAUSED"));
  });

  it("stream over HTTP: server-sent events, and closing the node ends open streams instead of hanging", async () => {
    const node = await mirroringNode(open);
    const app = buildAdminServer(node, pino({ level: "silent" }), SECURITY);
    await app.listen({ host: "127.0.0.1", port: 0 });
    const { port } = app.server.address() as { port: number };
    const res = await fetch(`http://127.0.0.1:${port}/ui/api/stream`, { headers: AUTH });
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    let text = "";
    while (!text.includes("@xstate.actor")) text += new TextDecoder().decode((await reader.read()).value);
    expect(text).toMatch(/^: cluster-mirror inspection stream\n\ndata: \{"type":"@xstate.actor"/);
    await app.close();
    for (;;) if ((await reader.read()).done) break;
    const unknown = await buildAdminServer(node, pino({ level: "silent" }), SECURITY).inject({
      method: "GET",
      url: "/ui/api/stream?cluster=nope",
      headers: AUTH,
    });
    expect(unknown.statusCode).toBe(404);
  });

  it("graphs: the machines' graphs, spec §4's table and the precomputed layouts", async () => {
    const node = await mirroringNode(open);
    const app = buildAdminServer(node, pino({ level: "silent" }), SECURITY);
    open.push(app);
    const body = (await app.inject({ method: "GET", url: "/ui/api/graphs", headers: AUTH })).json();
    expect(Object.keys(body.graphs)).toEqual(["mirrorPartition", "coordinatorShard", "fetcher"]);
    expect(body.validFrom.STOPPED).toContain("STOPPING");
    expect(body.layouts.mirrorPartition.nodes.length).toBeGreaterThan(9);
    // Never served: outside /ui it needs the token (401); inside, no such file (404).
    expect([401, 404]).toContain(
      (await app.inject({ method: "GET", url: "/ui/../package.json" })).statusCode,
    );
  });

  it("auth: the page loads without a token; its API answers only to the token or the cookie ?token= sets", async () => {
    const node = await mirroringNode(open);
    const app = buildAdminServer(node, pino({ level: "silent" }), SECURITY);
    open.push(app);
    const refused = await app.inject({ method: "GET", url: "/ui/api/graphs" });
    expect(refused.statusCode).toBe(401);
    // A browser sends no Authorization header: the refusal says how the page gets the token, and no more.
    expect(refused.json().error.message).toMatch(
      /^no admin token was sent\. .*open the page once as \/ui\/\?token=TOKEN/,
    );
    expect(refused.body).not.toContain(SECURITY.adminToken);
    const stale = await app.inject({
      method: "GET",
      url: "/ui/api/stream",
      headers: { cookie: "cluster_mirror_token=an-old-token" },
    });
    expect(stale.statusCode).toBe(401);
    expect(stale.json().error.message).toMatch(
      /^the admin token sent is not this node's.*\/ui\/\?token=TOKEN/,
    );
    const wrong = await app.inject({ method: "GET", url: "/ui/?token=nope" });
    expect(wrong.headers["set-cookie"]).toBeUndefined();
    const login = await app.inject({ method: "GET", url: `/ui/?token=${SECURITY.adminToken}` });
    const cookie = String(login.headers["set-cookie"]);
    expect(cookie).toMatch(/HttpOnly; SameSite=Strict; Path=\/ui/);
    const cookieHeader = cookie.split(";")[0] as string;
    const ok = await app.inject({ method: "GET", url: "/ui/api/graphs", headers: { cookie: cookieHeader } });
    expect(ok.statusCode).toBe(200);
    // The cookie is for the visualizer's API only, never the admin API.
    const admin = await app.inject({ method: "GET", url: "/v1/mirrors", headers: { cookie: cookieHeader } });
    expect(admin.statusCode).toBe(401);
  });

  it("page: serves the built files, and says how to build them when they are missing", async () => {
    const node = MirrorNode.start({ name: "dr", brokers: 1, sources: [] });
    open.push(node);
    const dist = mkdtempSync(path.join(tmpdir(), "viz-dist-"));
    const app = Fastify();
    registerUiRoutes(app, node, { distDir: dist });
    open.push(app);
    const missing = await app.inject({ method: "GET", url: "/ui/" });
    expect(missing.statusCode).toBe(503);
    expect(missing.body).toMatch(/pnpm --filter @cluster-mirror\/visualizer run build/);
    writeFileSync(path.join(dist, "index.html"), "<!doctype html><title>viz</title>");
    const page = await app.inject({ method: "GET", url: "/ui/" });
    expect(page.statusCode).toBe(200);
    expect(page.headers["content-type"]).toMatch(/^text\/html/);
    expect(page.body).toContain("<title>viz</title>");
    expect((await app.inject({ method: "GET", url: "/ui/nope.js" })).statusCode).toBe(404);
    expect((await app.inject({ method: "GET", url: "/ui" })).headers.location).toBe("/ui/");
  });
});
