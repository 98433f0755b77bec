import * as fs from "node:fs";
import * as http from "node:http";
import * as os from "node:os";
import * as path from "node:path";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { type NodeRuntime, startNodeRuntime } from "../src/node/node-runtime";
import { BIN, run, tempDir } from "./cli-harness";

const open: NodeRuntime[] = [];
afterEach(async () => {
  for (const r of open.splice(0)) await r.close();
});

async function startOn(dataDir: string | undefined): Promise<NodeRuntime> {
  const runtime = await startNodeRuntime(
    { name: "dr", brokers: 1, sources: [], port: 0, dataDir, numStatePartitions: 1, fsync: false },
    pino({ level: "silent" }),
  );
  open.push(runtime);
  return runtime;
}

/** A raw HTTP GET (fetch would not let the test choose the Host header). */
function get(
  port: number,
  route: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: { error?: { name: string; message: string } }; auth?: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port, path: route, headers }, (res) => {
      let text = "";
      res.on("data", (d: Buffer) => {
        text += d.toString();
      });
      res.on("end", () =>
        resolve({
          status: res.statusCode ?? 0,
          body: JSON.parse(text) as { error?: { name: string; message: string } },
          auth: res.headers["www-authenticate"],
        }),
      );
    });
    req.once("error", reject);
    req.end();
  });
}

describe("the admin API requires the node's token (issue 15, security)", () => {
  it("writes a 0600 token into the data dir at first start and keeps it across restarts", async () => {
    const dir = tempDir("cm-token");
    const first = await startOn(dir);
    const file = path.join(dir, "admin.token");
    expect(first.adminTokenFile).toBe(file);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.readFileSync(file, "utf8").trim()).toBe(first.adminToken);
    expect(first.adminToken.length).toBeGreaterThanOrEqual(40);
    const token = first.adminToken;
    await first.close();
    open.splice(0);
    const second = await startOn(dir);
    expect(second.adminToken).toBe(token);
    // Two fresh nodes never share a token (it is not drawn from the seeded Random).
    const other = await startOn(tempDir("cm-token-2"));
    expect(other.adminToken).not.toBe(token);
  });

  it("refuses a token file other users may read", async () => {
    const dir = tempDir("cm-token-mode");
    fs.writeFileSync(path.join(dir, "admin.token"), "0123456789abcdef0123456789\n", { mode: 0o644 });
    fs.chmodSync(path.join(dir, "admin.token"), 0o644);
    await expect(startOn(dir)).rejects.toThrow(/readable by other users.*chmod 600/);
  });

  it("answers 401 without the token or with a wrong one, saying where the token is; 200 with it", async () => {
    const node = await startOn(tempDir("cm-token-401"));
    const none = await get(node.adminPort, "/v1/health", { host: `127.0.0.1:${node.adminPort}` });
    expect(none.status).toBe(401);
    expect(none.auth).toMatch(/^Bearer/);
    expect(none.body.error?.name).toBe("SASL_AUTHENTICATION_FAILED");
    expect(none.body.error?.message).toMatch(
      /no admin token was sent.*admin\.token.*--token.*CLUSTER_MIRROR_TOKEN/,
    );
    const wrong = await get(node.adminPort, "/v1/mirrors", {
      host: `127.0.0.1:${node.adminPort}`,
      authorization: "Bearer not-the-token",
    });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error?.message).toMatch(/not this node's/);
    // Unknown routes are no way around it: 401, not 404.
    expect((await get(node.adminPort, "/nope", { host: `127.0.0.1:${node.adminPort}` })).status).toBe(401);
    const ok = await get(node.adminPort, "/v1/health", {
      host: `localhost:${node.adminPort}`,
      authorization: `Bearer ${node.adminToken}`,
    });
    expect(ok.status).toBe(200);
  });

  it("answers 421 to a Host header that is not a loopback name with the node's port (DNS rebinding)", async () => {
    const node = await startOn(undefined);
    const auth = { authorization: `Bearer ${node.adminToken}` };
    for (const host of [`evil.example:${node.adminPort}`, `127.0.0.1:${node.adminPort + 1}`, "127.0.0.1"]) {
      const res = await get(node.adminPort, "/v1/health", { ...auth, host });
      expect(res.status, host).toBe(421);
      expect(res.body.error?.name).toBe("MISDIRECTED_REQUEST");
      expect(res.body.error?.message).toContain(`'${host}'`);
    }
    expect(
      (await get(node.adminPort, "/v1/health", { ...auth, host: `[::1]:${node.adminPort}` })).status,
    ).toBe(200);
  });

  it("kafka-mirrors finds the token by itself, or takes --token, CLUSTER_MIRROR_TOKEN or --data-dir", async () => {
    const dir = tempDir("cm-token-cli");
    const node = await startOn(dir);
    const bootstrap = `:${node.adminPort}`;
    // Same user, same runtime dir: the node's pointer file is found (the README's walkthrough, no flags).
    expect((await run(BIN.kafkaMirrors, ["--bootstrap-server", bootstrap, "--list"])).code).toBe(0);
    // A CLI that cannot find it (another runtime dir) gets the node's 401 and what to do.
    const elsewhere = { CLUSTER_MIRROR_RUNTIME_DIR: fs.mkdtempSync(path.join(os.tmpdir(), "cm-other-")) };
    const refused = await runWith(elsewhere, ["--bootstrap-server", bootstrap, "--list"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^Error: no admin token was sent\..*--data-dir/);
    expect(
      (await runWith(elsewhere, ["--bootstrap-server", bootstrap, "--list", "--data-dir", dir])).code,
    ).toBe(0);
    const withFlag = await runWith(elsewhere, [
      "--bootstrap-server",
      bootstrap,
      "--list",
      "--token",
      node.adminToken,
    ]);
    expect(withFlag.code).toBe(0);
    const withEnv = await runWith({ ...elsewhere, CLUSTER_MIRROR_TOKEN: node.adminToken }, [
      "--bootstrap-server",
      bootstrap,
      "--list",
    ]);
    expect(withEnv.code).toBe(0);
    const wrong = await runWith(elsewhere, [
      "--bootstrap-server",
      bootstrap,
      "--list",
      "--token",
      "wrong-token",
    ]);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/not this node's/);
  });
});

/** kafka-mirrors with extra environment variables. */
async function runWith(env: Record<string, string>, args: string[]) {
  const saved = { ...process.env };
  Object.assign(process.env, env);
  try {
    return await run(BIN.kafkaMirrors, args);
  } finally {
    for (const k of Object.keys(env)) {
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
    }
  }
}
