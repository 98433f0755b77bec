import * as http from "node:http";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  BIN,
  CLI_TEST_TIMEOUT_MS,
  cm,
  ended,
  killAll,
  spawnBin,
  startNode,
  tempDir,
  waitForLine,
} from "./cli-harness";

afterEach(killAll);

describe("Ctrl-C (SIGINT) says what it stopped, and exits 130", () => {
  it(
    "consume prints 'Processed a total of N messages' on stderr, as kafka-console-consumer.sh does",
    async () => {
      // A node that holds the consume request open: Ctrl-C comes while the CLI waits for its answer.
      let requested!: () => void;
      const consumeArrived = new Promise<void>((resolve) => {
        requested = resolve;
      });
      const server = http.createServer((req) => {
        if (req.url === "/v1/consume") requested();
      });
      await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      try {
        const child = spawnBin(BIN.clusterMirror, [
          "consume",
          "--bootstrap-server",
          `127.0.0.1:${port}`,
          "--token",
          "t",
          "--topic",
          "orders",
          "--timeout-ms",
          "600000",
        ]);
        const result = ended(child);
        await consumeArrived;
        child.kill("SIGINT");
        const { code, stdout, stderr } = await result;
        expect(code).toBe(130);
        expect(stderr).toBe("Processed a total of 0 messages\n");
        expect(stdout).toBe("");
      } finally {
        server.closeAllConnections();
        await new Promise((r) => server.close(r));
      }
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it(
    "node start-up says it was interrupted, and the data dir starts again",
    async () => {
      const dataDir = path.join(tempDir("cm-ctrl-c"), "data");
      const child = spawnBin(BIN.clusterMirror, [
        "node",
        "--data-dir",
        dataDir,
        "--port",
        "0",
        "--metrics-port",
        "0",
        "--source",
        "primary=3",
      ]);
      const result = ended(child);
      // (A node that does not say it is starting is interrupted once up, and must not pass either.)
      await waitForLine(child, /"event":"node\.start(ing|ed)"/);
      child.kill("SIGINT");
      const { code, stdout } = await result;
      expect(code).toBe(130);
      const events = stdout
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .map((l) => JSON.parse(l) as { event?: string; msg: string });
      const interrupted = events.find((e) => e.event === "node.startup_interrupted");
      expect(interrupted?.msg, stdout).toBe(
        `start-up interrupted (SIGINT): stopping the node; the data dir ${dataDir} is left usable, start the node on it again to go on`,
      );
      // Stopped as after any stop (its .lock released), not left as a crash leaves it.
      expect(events.at(-1)?.event).toBe("node.stopped");
      // It is: a node starts on it and serves requests.
      const node = await startNode(dataDir);
      const created = await cm("create-topic", node.port, "--topic", "after-ctrl-c", "--partitions", "1");
      expect(created.stdout).toBe("Created topic after-ctrl-c.\n");
      node.child.kill("SIGTERM");
    },
    CLI_TEST_TIMEOUT_MS,
  );
});
