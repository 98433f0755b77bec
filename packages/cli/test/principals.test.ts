import * as fs from "node:fs";
import * as path from "node:path";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { UsageError } from "../src/commands/cli-errors";
import { type NodeRuntime, startNodeRuntime } from "../src/node/node-runtime";
import { readPrincipalsFile } from "../src/security/principals-file";
import {
  BIN,
  CLI_TEST_TIMEOUT_MS,
  exited,
  killAll,
  run,
  spawnBin,
  tempDir,
  waitForLine,
} from "./cli-harness";

const ALICE = { principal: "User:alice", token: "alice-token-0123456789" };
const BOB = { principal: "User:bob", token: "bob-token-0123456789ab" };

let runtime: NodeRuntime | undefined;
afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
});

type Answer = {
  status: number;
  body: { error?: { name: string; message: string } } & Record<string, unknown>;
};

/** An admin API call with a bearer token. */
async function call(token: string, method: string, route: string, body?: unknown): Promise<Answer> {
  const res = await fetch(`http://127.0.0.1:${runtime!.adminPort}${route}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Answer["body"] };
}

async function until(what: string, predicate: () => boolean | Promise<boolean>): Promise<void> {
  console.log(`waiting for ${what}`);
  for (;;) {
    if (await predicate()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("principals and the authorizer (issue 15, security)", () => {
  it("a principal without WRITE cannot produce, one with it can; mirrored ACLs hold on the destination after failover", async () => {
    runtime = await startNodeRuntime(
      {
        name: "dr",
        brokers: 1,
        sources: [{ name: "primary", brokers: 1 }],
        port: 0,
        numStatePartitions: 1,
        fsync: false,
        principals: [ALICE, BOB],
        enforceAcls: true,
      },
      pino({ level: "silent" }),
    );
    const admin = runtime.adminToken;
    const produce = (token: string, cluster: string, topic = "orders") =>
      call(token, "POST", "/v1/produce", { cluster, topic, value: "v" });
    expect((await call(admin, "POST", "/v1/topics", { cluster: "primary", topic: "orders" })).status).toBe(
      200,
    );
    // The usual `orders*` grant: a PREFIXED binding.
    const grant = {
      resourceType: "TOPIC",
      resourceName: "ord",
      patternType: "PREFIXED",
      principal: ALICE.principal,
      operation: "WRITE",
    };
    expect((await call(admin, "POST", "/v1/acls", { cluster: "primary", acls: [grant] })).status).toBe(200);

    const denied = await produce(BOB.token, "primary");
    expect(denied.status).toBe(403);
    expect(denied.body.error?.name).toBe("TOPIC_AUTHORIZATION_FAILED");
    expect(denied.body.error?.message).toMatch(/User:bob may not WRITE TOPIC 'orders'/);
    // Not even whether a topic exists leaks to a principal without WRITE.
    expect((await produce(BOB.token, "primary", "nope")).body.error?.name).toBe("TOPIC_AUTHORIZATION_FAILED");
    expect((await produce(ALICE.token, "primary")).status).toBe(200);
    // Mirrors are the CLUSTER's: alice (no ALTER on it) may not create one, nor list ACLs.
    const noMirror = await call(ALICE.token, "POST", "/v1/mirrors", {
      name: "m",
      configs: { "bootstrap.servers": "primary:9092" },
    });
    expect(noMirror.status).toBe(403);
    expect(noMirror.body.error?.name).toBe("CLUSTER_AUTHORIZATION_FAILED");
    expect((await call(BOB.token, "GET", "/v1/acls?cluster=primary")).status).toBe(403);

    // The admin mirrors orders to dr; the prefixed grant is synced and enforced there.
    const configs = { "bootstrap.servers": "primary:9092", "mirror.metadata.refresh.interval.ms": "200" };
    expect((await call(admin, "POST", "/v1/mirrors", { name: "m", configs })).status).toBe(200);
    await until("the coordinators to load", async () => {
      const added = await call(admin, "POST", "/v1/mirrors/m/topics/add", { topic: "orders" });
      return added.status === 200;
    });
    const dr = runtime.node.destination.cluster;
    await until("alice's grant to sync to dr", () =>
      dr.authorizer
        .describeAcls()
        .some((b) => b.principal === ALICE.principal && b.patternType === "PREFIXED"),
    );
    expect((await produce(BOB.token, "dr")).body.error?.name).toBe("TOPIC_AUTHORIZATION_FAILED");
    expect((await produce(ALICE.token, "dr")).body.error?.name).toBe("READ_ONLY_TOPIC");
    const promoted = await call(admin, "POST", "/v1/mirrors/m/promote", {
      topic: "orders",
      timeoutMs: 60_000,
    });
    expect(promoted.status).toBe(200);
    // After the failover the mirrored ACL still decides who may write on dr.
    expect((await produce(ALICE.token, "dr")).status).toBe(200);
    const bobAfter = await produce(BOB.token, "dr");
    expect(bobAfter.status).toBe(403);
    expect(bobAfter.body.error?.name).toBe("TOPIC_AUTHORIZATION_FAILED");
  });
});

describe("--principals FILE", () => {
  const file = (content: unknown, mode = 0o600) => {
    const f = path.join(tempDir("cm-principals"), "principals.json");
    fs.writeFileSync(f, typeof content === "string" ? content : JSON.stringify(content), { mode });
    fs.chmodSync(f, mode);
    return f;
  };

  it("reads principals and their tokens", () => {
    expect(readPrincipalsFile(file([ALICE, BOB]))).toEqual([ALICE, BOB]);
  });

  it("refuses a file it cannot read, saying what to pass instead", () => {
    const missing = path.join(tempDir("cm-principals"), "no-such-principals.json");
    expect(() => readPrincipalsFile(missing)).toThrow(UsageError);
    expect(() => readPrincipalsFile(missing)).toThrow(
      /cannot read --principals .*no-such-principals\.json \(ENOENT\); pass a readable JSON file \(mode 0600\) of principals and their tokens, e\.g\. \[\{"principal": "User:alice"/,
    );
  });

  it("refuses a file others may read, bad JSON, bad entries, shared tokens and the node's own principals", () => {
    expect(() => readPrincipalsFile(file([ALICE], 0o644))).toThrow(/readable by other users.*chmod 600/);
    expect(() => readPrincipalsFile(file("{"))).toThrow(/is not JSON/);
    expect(() => readPrincipalsFile(file({ alice: "x" }))).toThrow(/must hold a JSON array/);
    expect(() => readPrincipalsFile(file([{ principal: "alice", token: ALICE.token }]))).toThrow(/Type:name/);
    expect(() => readPrincipalsFile(file([{ ...ALICE, token: "short" }]))).toThrow(/at least 16 characters/);
    expect(() => readPrincipalsFile(file([{ ...ALICE, role: "admin" }]))).toThrow(
      /entry 0: unknown key 'role' \(an entry has only 'principal' and 'token'/,
    );
    expect(() => readPrincipalsFile(file([ALICE, "User:bob"]))).toThrow(/entry 1 must be an object/);
    expect(() => readPrincipalsFile(file([ALICE, { ...BOB, token: ALICE.token }]))).toThrow(/used twice/);
    expect(() => readPrincipalsFile(file([{ ...ALICE, principal: "User:admin" }]))).toThrow(
      /node's own principal/,
    );
  });
});

describe("cluster-mirror node --principals, acls and produce --token", () => {
  afterEach(() => killAll());

  it("enforces ACLs made with `acls --add` for the principals' tokens", {
    timeout: CLI_TEST_TIMEOUT_MS,
  }, async () => {
    const dir = tempDir("cm-principals-node");
    const principals = path.join(tempDir("cm-principals-file"), "principals.json");
    fs.writeFileSync(principals, JSON.stringify([ALICE, BOB]), { mode: 0o600 });
    const child = spawnBin(BIN.clusterMirror, [
      ...["node", "--data-dir", dir, "--port", "0", "--metrics-port", "0", "--source", "primary=1"],
      ...["--brokers", "1", "--state-partitions", "1", "--principals", principals, "--no-fsync"],
    ]);
    const started = JSON.parse(await waitForLine(child, /"event":"node\.started"/)) as {
      adminPort: number;
      principals: string[];
      aclsEnforced: boolean;
    };
    expect(started).toMatchObject({ principals: [ALICE.principal, BOB.principal], aclsEnforced: true });
    const bs = ["--bootstrap-server", `:${started.adminPort}`];
    // The admin token (found by the CLI on its own) is a super user.
    expect(
      (await run(BIN.clusterMirror, ["create-topic", ...bs, "--cluster", "primary", "--topic", "orders"]))
        .code,
    ).toBe(0);
    const added = await run(BIN.clusterMirror, [
      ...["acls", ...bs, "--cluster", "primary", "--add", "--allow-principal", ALICE.principal],
      ...["--operation", "WRITE", "--topic", "ord", "--resource-pattern-type", "prefixed"],
    ]);
    expect(added.stdout).toContain(
      "Added 1 ACL binding(s) to primary:\n  ALLOW User:alice WRITE on TOPIC PREFIXED 'ord' from host *",
    );
    const produce = (token: string) =>
      run(BIN.clusterMirror, [
        "produce",
        ...bs,
        "--cluster",
        "primary",
        "--topic",
        "orders",
        "--value",
        "v",
        "--token",
        token,
      ]);
    const bob = await produce(BOB.token);
    expect(bob.code).toBe(1);
    expect(bob.stderr).toMatch(/^Error: User:bob may not WRITE TOPIC 'orders'/);
    expect((await produce(ALICE.token)).code).toBe(0);
    child.kill("SIGTERM");
    await exited(child);
  });
});
