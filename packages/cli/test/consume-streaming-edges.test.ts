import { afterEach, describe, expect, it } from "vitest";
import { BIN, CLI_TEST_TIMEOUT_MS, ended, killAll, spawnBin, waitForLine } from "./cli-harness";
import { nodeWithTopic } from "./consume-node";

const open: { close(): unknown }[] = [];
afterEach(async () => {
  killAll();
  for (const o of open.splice(0).reverse()) await o.close();
});

const TOKEN = "consume-probes-test-token";

async function readUntil(reader: ReadableStreamDefaultReader<Uint8Array>, pred: (t: string) => boolean) {
  const decoder = new TextDecoder();
  let text = "";
  while (!pred(text)) {
    const read = await reader.read();
    if (read.done) break;
    text += decoder.decode(read.value, { stream: true });
  }
  return text;
}

describe("a streamed consume whose client misbehaves", () => {
  it(
    "a CLI killed (SIGKILL) mid-stream: the node ends the consume, commits nothing, and its consumer leaves the group",
    async () => {
      const { kafka, produce, committed, consumeArgs } = await nodeWithTopic(open, TOKEN);
      await produce("a", "b");
      for (const group of [["--group", "g"], []]) {
        const child = spawnBin(
          BIN.clusterMirror,
          consumeArgs(...group, "--from-beginning", "--timeout-ms", "600000"),
        );
        const result = ended(child);
        await waitForLine(child, /^b$/);
        child.kill("SIGKILL");
        await result;
      }
      // The consumer leaves, and the throwaway group of the consume without --group is deleted, as the node
      // notices the client went away (not after --timeout-ms).
      const members = async () => (await kafka.admin().describeGroups(["g"])).groups[0]?.members.length;
      const groupIds = async () => (await kafka.admin().listGroups()).groups.map((g) => g.groupId);
      for (let i = 0; i < 100 && ((await members()) !== 0 || (await groupIds()).length !== 1); i++) {
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(await members()).toBe(0);
      expect(await groupIds()).toEqual(["g"]);
      expect(await committed("g")).toEqual(["-1"]);
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it("a stop with a bad printed count, or no token, is refused and changes nothing", async () => {
    const { produce, post, committed, port } = await nodeWithTopic(open, TOKEN);
    await produce("a");
    const res = await post(
      "/v1/consume",
      { topic: "t", group: "g", fromBeginning: true, timeoutMs: 600_000 },
      { accept: "application/x-ndjson" },
    );
    const reader = res.body!.getReader();
    const text = await readUntil(reader, (t) => t.includes('"value":"a"'));
    const consumer = (JSON.parse(text.split("\n")[0]!) as { consumer: string }).consumer;
    const refusals: [unknown, RegExp][] = [
      [-1, /field 'printed' must be an integer >= 0/],
      ["x", /field 'printed' must be an integer >= 0/],
      [1.5, /field 'printed' must be an integer >= 0/],
      [null, /field 'printed' \(the number of messages the client printed\) is required/],
      [2, /printed is 2, but only 1 message\(s\) were sent to the client/],
    ];
    for (const [printed, message] of refusals) {
      const r = await post("/v1/consume/stop", { consumer, printed });
      expect(r.status).toBe(400);
      const { error } = (await r.json()) as { error: { name: string; message: string } };
      expect(error.name).toBe("INVALID_REQUEST");
      expect(error.message).toMatch(message);
    }
    const noToken = await fetch(`http://127.0.0.1:${port}/v1/consume/stop`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ consumer, printed: 0 }),
    });
    expect(noToken.status).toBe(401);
    // None of them stopped it: a valid stop still does, committing what it says was printed.
    const ok = await post("/v1/consume/stop", { consumer, printed: 1 });
    expect(await ok.json()).toEqual({ messages: 1, committed: 1, stopped: true });
    expect(await committed("g")).toEqual(["1"]);
  }, 60_000);

  it("concurrent streamed consumes get distinct ids, and each ends with its own end line", async () => {
    const { produce, post } = await nodeWithTopic(open, TOKEN);
    await produce("a");
    const texts = await Promise.all(
      Array.from({ length: 20 }, async () => {
        const res = await post(
          "/v1/consume",
          { topic: "t", fromBeginning: true, maxMessages: 1, timeoutMs: 5000 },
          { accept: "application/x-ndjson" },
        );
        return readUntil(res.body!.getReader(), () => false);
      }),
    );
    const lines = texts.map((t) => t.split("\n").filter((l) => l !== ""));
    expect(new Set(lines.map((l) => l[0])).size).toBe(20);
    for (const l of lines)
      expect(JSON.parse(l.at(-1)!)).toEqual({ end: { messages: 1, committed: 0, stopped: false } });
    // Once ended, none of them can be stopped any more: the node forgot them.
    for (const l of lines) {
      const { consumer } = JSON.parse(l[0]!) as { consumer: string };
      expect((await post("/v1/consume/stop", { consumer, printed: 0 })).status).toBe(400);
    }
  }, 60_000);
});
