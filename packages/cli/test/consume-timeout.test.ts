import * as http from "node:http";
import { afterEach, describe, expect, it, vi } from "vitest";
import { runConsume } from "../src/commands/console-commands";
import { NODE_HEADER } from "../src/node/wire";

afterEach(() => vi.restoreAllMocks());

describe("consume --timeout-ms (issue 15)", () => {
  it("the HTTP request waits longer than the requested poll time, so 70 s is not cut at 60 s", async () => {
    const server = http.createServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json", [NODE_HEADER]: "1" });
      res.end(JSON.stringify({ messages: [] }));
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const address = server.address();
    const port = typeof address === "object" && address ? address.port : 0;
    // The client's deadline is a timer it sets per request (one that keeps the process alive).
    const spy = vi.spyOn(globalThis, "setTimeout");
    const timeouts = () => spy.mock.calls.map((call) => Number(call[1] ?? 0)).filter((ms) => ms >= 60_000);
    try {
      let err = "";
      await runConsume(
        { bootstrapServer: `:${port}`, topic: "t", isolation: "read_uncommitted", timeoutMs: "70000" },
        () => {},
        (t) => {
          err += t;
        },
      );
      expect(err).toBe("Processed a total of 0 messages\n");
      expect(timeouts()).toHaveLength(1);
      expect(timeouts()[0]).toBeGreaterThan(70_000);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});

describe("consume of a streamed answer", () => {
  it("prints what arrived, then fails when the node ends its answer without saying the consume ended", async () => {
    const server = http.createServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/x-ndjson", [NODE_HEADER]: "1" });
      res.end(`{"consumer":"1"}\n{"message":{"partition":0,"offset":"0","key":null,"value":"a"}}\n`);
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const address = server.address();
    const port = typeof address === "object" && address ? address.port : 0;
    try {
      let out = "";
      const consumed = runConsume(
        {
          bootstrapServer: `:${port}`,
          token: "t",
          topic: "t",
          group: "g",
          isolation: "read_uncommitted",
          timeoutMs: "1000",
        },
        (t) => {
          out += t;
        },
        () => {},
      );
      await expect(consumed).rejects.toThrow(
        "the node ended its answer after 1 message(s) without saying the consume ended (it may have stopped); group g may not have committed them: consume again",
      );
      expect(out).toBe("a\n");
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
