import type { AddressInfo } from "node:net";
import Fastify from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import type { ConsumeStreamLine } from "../src/node/consume-stream";
import { UnknownConsumerError } from "../src/node/consume-stream";
import { errorResponse } from "../src/node/http-errors";
import { NDJSON, NODE_HEADER } from "../src/node/wire";
import { BIN, CLI_TEST_TIMEOUT_MS, ended, killAll, spawnBin, waitForLine } from "./cli-harness";

const open: { close(): unknown }[] = [];
afterEach(async () => {
  killAll();
  for (const o of open.splice(0).reverse()) await o.close();
});

const message = (offset: number, value: string): ConsumeStreamLine => ({
  message: { partition: 0, offset: String(offset), key: null, value },
});

/**
 * A node whose consume of a, b, c reaches --max-messages 3 (its group committing all three) while the CLI
 * has printed only `a`: b, c and the `end` line are still on their way when the Ctrl-C's stop arrives, which
 * then names a consume that ended (`stopAnswer`), or one that was committing when the stop landed.
 */
async function nodeEndingAsCtrlCLands(stopAnswer: "ended" | "committing") {
  const app = Fastify();
  open.push(app);
  let stream: import("node:http").ServerResponse | undefined;
  const send = (line: ConsumeStreamLine) => stream!.write(`${JSON.stringify(line)}\n`);
  app.post("/v1/consume", async (_req, reply) => {
    reply.hijack();
    stream = reply.raw;
    stream.writeHead(200, { "content-type": `${NDJSON}; charset=utf-8`, [NODE_HEADER]: "1" });
    send({ consumer: "1" });
    send(message(0, "a"));
  });
  app.post("/v1/consume/stop", async (_req, reply) => {
    const outcome = { messages: 3, committed: 3, stopped: stopAnswer === "committing" };
    send(message(1, "b"));
    send(message(2, "c"));
    send({ end: outcome });
    stream!.end();
    if (stopAnswer === "committing") return reply.header(NODE_HEADER, "1").send(outcome);
    const { status, body } = errorResponse(new UnknownConsumerError("1"));
    return reply.code(status).header(NODE_HEADER, "1").send(body);
  });
  await app.listen({ host: "127.0.0.1", port: 0 });
  const port = (app.server.address() as AddressInfo).port;
  return ["consume", "--bootstrap-server", `127.0.0.1:${port}`, "--token", "x", "--topic", "t"];
}

describe("Ctrl-C as the consume ends by itself", () => {
  for (const stopAnswer of ["ended", "committing"] as const) {
    it(
      `prints every message the group committed, not only those printed before Ctrl-C (stop answer: ${stopAnswer})`,
      async () => {
        const args = await nodeEndingAsCtrlCLands(stopAnswer);
        const child = spawnBin(BIN.clusterMirror, [...args, "--group", "g", "--max-messages", "3"]);
        const result = ended(child);
        await waitForLine(child, /^a$/);
        child.kill("SIGINT");
        // The group's offset is after c: a CLI that printed only `a` would have lost b and c.
        expect(await result).toEqual({
          code: 130,
          stdout: "a\nb\nc\n",
          stderr: "Processed a total of 3 messages\n",
        });
      },
      CLI_TEST_TIMEOUT_MS,
    );
  }
});
