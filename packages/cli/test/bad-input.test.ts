import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  authHeader,
  cm,
  describeRows,
  failureLine,
  killAll,
  mirrors,
  type NodeProcess,
  startNode,
  tempDir,
  waitFor,
} from "./cli-harness";

let node: NodeProcess;

beforeAll(async () => {
  node = await startNode(tempDir("cm-bad-input"));
}, 60_000);

afterAll(() => killAll());

async function post(
  route: string,
  body: string,
): Promise<{ status: number; error: { name: string; message: string } }> {
  const res = await fetch(`http://127.0.0.1:${node.port}${route}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...authHeader(node.port) },
    body,
  });
  return {
    status: res.status,
    error: ((await res.json()) as { error: { name: string; message: string } }).error,
  };
}

function configFile(text: string): string {
  const file = path.join(tempDir("cm-bad-conf"), "mirror.properties");
  fs.writeFileSync(file, text);
  return file;
}

describe("bad input gets a clear error and changes nothing (issue 15)", () => {
  it("create-topic on an existing topic: TOPIC_ALREADY_EXISTS, exit 1", async () => {
    expect((await cm("create-topic", node.port, "--cluster", "primary", "--topic", "dup")).code).toBe(0);
    const again = await cm(
      "create-topic",
      node.port,
      "--cluster",
      "primary",
      "--topic",
      "dup",
      "--partitions",
      "5",
    );
    expect(again.code).toBe(1);
    expect(again.stdout).toBe("");
    expect(failureLine(again)).toMatch(/topic 'dup' already exists on cluster primary; nothing was changed/);
  }, 60_000);

  it("create-topic --config mirror.name=... is refused: the config is reserved for mirroring", async () => {
    const r = await cm("create-topic", node.port, "--topic", "fake", "--config", "mirror.name=my-mirror");
    expect(r.code).toBe(1);
    expect(failureLine(r)).toMatch(/topic config 'mirror\.name' is reserved for cluster mirroring/);
    // Nothing was created: the same name is free.
    expect((await cm("create-topic", node.port, "--topic", "fake")).code).toBe(0);
  }, 60_000);

  it("a mirror named __mirror_state is refused", async () => {
    const r = await mirrors(
      node.port,
      "--create",
      "--mirror",
      "__mirror_state",
      "--source-bootstrap",
      "primary:9092",
    );
    expect(r.code).toBe(1);
    expect(failureLine(r)).toMatch(/names starting with '__' are reserved/);
  }, 60_000);

  it("an unknown mirror config key is refused with the valid keys", async () => {
    const file = configFile("bootstrap.servers=primary:9092\ntopic.include=orders\n");
    const r = await mirrors(node.port, "--create", "--mirror", "typo", "--mirror-config", file);
    expect(r.code).toBe(1);
    expect(failureLine(r)).toMatch(
      /Unknown mirror config 'topic\.include'\. Did you mean 'topics\.include'\? Valid keys: .*topics\.include/,
    );
    expect((await mirrors(node.port, "--list")).stdout).not.toContain("typo");
  }, 60_000);

  it("a malformed --source-bootstrap is a config error to fix, not 'cannot reach the source'", async () => {
    const cases = [
      ["localhost", "is not host:port (e.g. 127.0.0.1:9092)"],
      [":9092", "is not host:port (e.g. 127.0.0.1:9092)"],
      ["host:99999", "has port 99999, out of range; a port is 1 to 65535"],
      [
        "http://127.0.0.1:9092",
        "has a scheme (http://); give the broker's host:port alone (e.g. 127.0.0.1:9092); security.protocol says how to connect",
      ],
    ];
    for (const [servers, why] of cases) {
      const r = await mirrors(node.port, "--create", "--mirror", "malformed", "--source-bootstrap", servers!);
      expect(r.code, servers).toBe(1);
      const line = failureLine(r);
      expect(line).toContain(`bootstrap.servers entry '${servers}' ${why}`);
      expect(line).toContain("Fix the mirror config and try again.");
      expect(line).not.toContain("Cannot reach");
    }
    expect((await mirrors(node.port, "--list")).stdout).not.toContain("malformed");
  }, 60_000);

  it("a mirror asked for on the wrong cluster: the error says which --cluster has it", async () => {
    const created = await mirrors(
      node.port,
      "--cluster",
      "primary",
      "--create",
      "--mirror",
      "back-to-primary",
      "--source-bootstrap",
      "destination:9092",
    );
    expect(created.code).toBe(0);
    // A mirror with no topics: the table's header, and on stderr what to do.
    const empty = await mirrors(
      node.port,
      "--cluster",
      "primary",
      "--describe",
      "--mirror",
      "back-to-primary",
    );
    expect(empty.code).toBe(0);
    expect(empty.stdout.trim().split("\n")).toHaveLength(1);
    expect(empty.stderr).toContain(
      "Mirror back-to-primary has no topics: add some with --add --topic REGEX --mirror back-to-primary.",
    );
    // Forgetting --cluster primary, as after a failback.
    const r = await mirrors(node.port, "--describe", "--mirror", "back-to-primary");
    expect(r.code).toBe(1);
    expect(failureLine(r)).toMatch(
      /^Error: Mirror 'back-to-primary' does not exist .* This node has mirror 'back-to-primary' on cluster primary: pass --cluster primary\.$/,
    );
    // A name no cluster has: no location.
    const none = await mirrors(node.port, "--describe", "--mirror", "nowhere");
    expect(failureLine(none)).not.toContain("This node has");
  }, 60_000);

  it("an unsupported security.protocol is refused with the supported values", async () => {
    const file = configFile("bootstrap.servers=primary:9092\nsecurity.protocol=SASL_SSL\n");
    const r = await mirrors(node.port, "--create", "--mirror", "secure", "--mirror-config", file);
    expect(r.code).toBe(1);
    expect(failureLine(r)).toMatch(/security\.protocol=SASL_SSL is not supported.*Supported: PLAINTEXT/);
    expect((await mirrors(node.port, "--list")).stdout).not.toContain("secure");
    // A value that is not one of Kafka's protocols is refused before any source is asked.
    const bogus = configFile("bootstrap.servers=primary:9092\nsecurity.protocol=PLAIN_TEXT\n");
    const b = await mirrors(node.port, "--create", "--mirror", "bogus", "--mirror-config", bogus);
    expect(b.code).toBe(1);
    expect(failureLine(b)).toMatch(
      /security\.protocol=PLAIN_TEXT is not supported.*PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL/,
    );
  }, 60_000);

  it("consume of a topic that does not exist: UNKNOWN_TOPIC_OR_PARTITION, exit 1", async () => {
    const r = await cm("consume", node.port, "--topic", "nope");
    expect(r.code).toBe(1);
    expect(failureLine(r)).toMatch(/topic 'nope' does not exist on cluster destination/);
  }, 60_000);

  it("produce to a topic that does not exist: refused at once, exit 1", async () => {
    const r = await cm("produce", node.port, "--topic", "nope", "--value", "x");
    expect(r.code).toBe(1);
    expect(failureLine(r)).toMatch(/topic 'nope' does not exist on cluster destination/);
  }, 60_000);

  it('"count":"1e3" over HTTP: 400 naming the field', async () => {
    const r = await post("/v1/produce", JSON.stringify({ topic: "dup", cluster: "primary", count: "1e3" }));
    expect(r.status).toBe(400);
    expect(r.error.message).toMatch(/field 'count' must be an integer/);
  }, 60_000);

  it("a body over 1 MiB: 413", async () => {
    const r = await post("/v1/produce", JSON.stringify({ topic: "dup", value: "x".repeat(1_100_000) }));
    expect(r.status).toBe(413);
    expect(r.error.name).toBe("REQUEST_TOO_LARGE");
  }, 60_000);

  it("create-topic --partitions 100000000 is refused with the limit", async () => {
    const r = await cm("create-topic", node.port, "--topic", "huge", "--partitions", "100000000");
    expect(r.code).toBe(1);
    expect(failureLine(r)).toMatch(/one create-topic request creates at most 1000/);
  }, 60_000);

  it("produce --count 1000000 is refused with the limit", async () => {
    const r = await cm("produce", node.port, "--cluster", "primary", "--topic", "dup", "--count", "1000000");
    expect(r.code).toBe(1);
    // Names the flag the user gave and the node's flag that moves the limit, as create-topic's limit does.
    expect(failureLine(r)).toBe(
      "Error: field 'count' (produce --count) asks for 1000000 messages; one produce request writes at most 100000 (the node's --max-produce-count). Produce in several requests",
    );
  }, 60_000);

  it("a produce to a paused mirror topic names the mirror, not the internal mirror.name value", async () => {
    expect((await cm("create-topic", node.port, "--cluster", "primary", "--topic", "held")).code).toBe(0);
    expect(
      (await mirrors(node.port, "--create", "--mirror", "pm", "--source-bootstrap", "primary:9092")).code,
    ).toBe(0);
    expect((await mirrors(node.port, "--add", "--topic", "held", "--mirror", "pm")).code).toBe(0);
    await waitFor("held to be MIRRORING", async () =>
      (await describeRows(node.port, "pm")).every((r) => r.state === "MIRRORING"),
    );
    expect((await mirrors(node.port, "--pause", "--topic", "held", "--mirror", "pm")).code).toBe(0);
    await waitFor("held to be PAUSED", async () =>
      (await describeRows(node.port, "pm")).every((r) => r.state === "PAUSED"),
    );
    const r = await cm("produce", node.port, "--topic", "held", "--value", "x");
    expect(r.code).toBe(1);
    const line = failureLine(r);
    expect(line).toMatch(/held-0 is paused in mirror 'pm' and read-only/);
    expect(line).not.toContain("pm.paused");
  }, 60_000);
});
