import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { KafkajsSourceCluster } from "../src/index";

/** A loopback port nothing listens on (one a listener just gave back). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  return typeof address === "object" && address ? address.port : 0;
}

describe("a source whose bootstrap servers are all down", () => {
  it("tries every one, and the error names each with its own failure (retriable)", async () => {
    const [a, b] = [await closedPort(), await closedPort()];
    const source = new KafkajsSourceCluster(
      "down",
      { "bootstrap.servers": `127.0.0.1:${a},127.0.0.1:${b}` },
      { connectionTimeoutMs: 1_000 },
    );
    try {
      const error = await source.clusterId().catch((e: unknown) => e);
      expect(error).toMatchObject({ errorName: "BROKER_NOT_AVAILABLE", retriable: true });
      expect((error as Error).message).toMatch(
        new RegExp(
          `^down: no bootstrap server of the source answered: connect to source broker 127\\.0\\.0\\.1:${a}: .*ECONNREFUSED.*; connect to source broker 127\\.0\\.0\\.1:${b}: .*ECONNREFUSED`,
        ),
      );
    } finally {
      await source.close();
    }
  });

  it("with one server, its own error as before", async () => {
    const a = await closedPort();
    const source = new KafkajsSourceCluster("one", { "bootstrap.servers": `127.0.0.1:${a}` });
    try {
      await expect(source.clusterId()).rejects.toThrow(
        new RegExp(`^one: connect to source broker 127\\.0\\.0\\.1:${a}: .*ECONNREFUSED`),
      );
    } finally {
      await source.close();
    }
  });
});
