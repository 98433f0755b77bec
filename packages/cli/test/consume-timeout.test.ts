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
