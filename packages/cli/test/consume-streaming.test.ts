import type { AddressInfo } from "node:net";
import Fastify from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import { ConsoleConsumer } from "../src/node/console-consumer";
import { ConsumeSessions } from "../src/node/consume-stream";
import { requestSignal } from "../src/node/request-signal";
import { BIN, CLI_TEST_TIMEOUT_MS, ended, killAll, run, spawnBin, waitForLine } from "./cli-harness";
import { nodeWithTopic } from "./consume-node";

const open: { close(): unknown }[] = [];
afterEach(async () => {
  killAll();
  for (const o of open.splice(0).reverse()) await o.close();
});

const TOKEN = "consume-streaming-test-token";
const BOB_TOKEN = "consume-streaming-test-bob-token";

describe("cluster-mirror consume prints messages as they arrive, as kafka-console-consumer.sh", () => {
  it(
    "prints each message before the consume stops; Ctrl-C reports them, exits 130, and the group starts after them",
    async () => {
      const { produce, committed, consumeArgs } = await nodeWithTopic(open, TOKEN, [
        { principal: "User:bob", token: BOB_TOKEN },
      ]);
      await produce("a", "b");
      // Ten minutes without a message before it stops by itself: only the Ctrl-C below ends it in time.
      const child = spawnBin(
        BIN.clusterMirror,
        consumeArgs("--group", "g", "--from-beginning", "--timeout-ms", "600000"),
      );
      const result = ended(child);
      await waitForLine(child, /^b$/);
      await produce("c");
      await waitForLine(child, /^c$/);
      child.kill("SIGINT");
      const { code, stdout, stderr } = await result;
      expect({ code, stdout, stderr }).toEqual({
        code: 130,
        stdout: "a\nb\nc\n",
        stderr: "Processed a total of 3 messages\n",
      });
      // Closing the consumer committed what was printed: the group's next consume starts after it.
      expect(await committed("g")).toEqual(["3"]);
      await produce("d");
      const again = await run(BIN.clusterMirror, consumeArgs("--group", "g", "--timeout-ms", "1000"));
      expect(again).toEqual({ code: 0, stdout: "d\n", stderr: "Processed a total of 1 messages\n" });
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it("a stop commits the messages the client printed, not the ones sent after them", async () => {
    const { produce, committed, post } = await nodeWithTopic(open, TOKEN, [
      { principal: "User:bob", token: BOB_TOKEN },
    ]);
    await produce("a", "b", "c");
    const res = await post(
      "/v1/consume",
      { topic: "t", group: "g", fromBeginning: true, timeoutMs: 600_000 },
      { accept: "application/x-ndjson" },
    );
    expect(res.headers.get("content-type")).toMatch(/^application\/x-ndjson/);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    const lines = () => text.split("\n").filter((l) => l !== "");
    while (lines().length < 4) {
      const read = await reader.read();
      if (read.done) break;
      text += decoder.decode(read.value, { stream: true });
    }
    const [first, ...messages] = lines().map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(messages.map((m) => (m.message as { value: string }).value)).toEqual(["a", "b", "c"]);
    const consumer = (first as { consumer: string }).consumer;
    // Another principal cannot stop it (nor learn that it runs).
    const bobs = await post(
      "/v1/consume/stop",
      { consumer, printed: 0 },
      { authorization: `Bearer ${BOB_TOKEN}` },
    );
    expect(bobs.status).toBe(400);
    expect(((await bobs.json()) as { error: { name: string } }).error.name).toBe("UNKNOWN_MEMBER_ID");
    // Printing "c" failed (the client was stopped before): only two were printed.
    const stop = await post("/v1/consume/stop", { consumer, printed: 2 });
    expect(await stop.json()).toEqual({ messages: 3, committed: 2, stopped: true });
    for (let read = await reader.read(); !read.done; read = await reader.read()) {
      text += decoder.decode(read.value, { stream: true });
    }
    expect(JSON.parse(lines().at(-1)!)).toEqual({ end: { messages: 3, committed: 2, stopped: true } });
    expect(await committed("g")).toEqual(["2"]);
    // Once it ended, the id names nothing to stop.
    const late = await post("/v1/consume/stop", { consumer, printed: 2 });
    expect(late.status).toBe(400);
    expect(((await late.json()) as { error: { name: string } }).error.name).toBe("UNKNOWN_MEMBER_ID");
  }, 60_000);

  it("--timeout-ms is the wait for the next message (restarted by each one), not the consume's whole time", async () => {
    const { produce, post } = await nodeWithTopic(open, TOKEN, [{ principal: "User:bob", token: BOB_TOKEN }]);
    // One message a second for five seconds: no gap reaches the 2.5 s timeout, the whole time does.
    const producing = (async () => {
      for (const value of ["m0", "m1", "m2", "m3", "m4"]) {
        await produce(value);
        await new Promise((r) => setTimeout(r, 1000));
      }
    })();
    const res = await post("/v1/consume", { topic: "t", fromBeginning: true, timeoutMs: 2500 });
    await producing;
    const { messages } = (await res.json()) as { messages: { value: string }[] };
    expect(messages.map((m) => m.value)).toEqual(["m0", "m1", "m2", "m3", "m4"]);
  }, 60_000);

  it("a stream waiting for a message sends empty heartbeat lines, so no HTTP client gives up on it", async () => {
    const { node } = await nodeWithTopic(open, TOKEN, [{ principal: "User:bob", token: BOB_TOKEN }]);
    const app = Fastify();
    open.push(app);
    const sessions = new ConsumeSessions(50);
    app.get("/", async (_req, reply) => {
      const consumer = await ConsoleConsumer.open(node.destination, {
        topic: "t",
        group: undefined,
        fromBeginning: true,
        isolation: "read_uncommitted",
        maxMessages: 1,
        timeoutMs: 600_000,
        signal: requestSignal(node.stopping, reply),
      });
      await sessions.stream(reply, "User:ANONYMOUS", consumer);
    });
    await app.listen({ host: "127.0.0.1", port: 0 });
    const res = await fetch(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}/`);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    while (!text.includes("\n\n")) {
      const read = await reader.read();
      if (read.done) break;
      text += decoder.decode(read.value, { stream: true });
    }
    expect(text).toMatch(/^\{"consumer":"1"\}\n\n/);
    await reader.cancel();
  }, 60_000);

  it("a node that begins to stop ends a streamed consume with a 503 error line, committing nothing", async () => {
    const { node, produce, committed, post } = await nodeWithTopic(open, TOKEN, [
      { principal: "User:bob", token: BOB_TOKEN },
    ]);
    await produce("a");
    const res = await post(
      "/v1/consume",
      { topic: "t", group: "g", fromBeginning: true, timeoutMs: 600_000 },
      { accept: "application/x-ndjson" },
    );
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    let stopped = false;
    for (let read = await reader.read(); !read.done; read = await reader.read()) {
      text += decoder.decode(read.value, { stream: true });
      if (!stopped && text.includes('"value":"a"')) {
        stopped = true;
        node.stopRequests();
      }
    }
    const last = JSON.parse(text.trimEnd().split("\n").at(-1)!) as {
      status: number;
      error: { message: string };
    };
    expect(last.status).toBe(503);
    expect(last.error.message).toMatch(
      /consume was cut short .* after 1 message\(s\); no offsets were committed for group g/,
    );
    expect(await committed("g")).toEqual(["-1"]);
  }, 60_000);
});
