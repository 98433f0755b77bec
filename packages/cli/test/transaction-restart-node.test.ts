import { afterEach, describe, expect, it } from "vitest";
import { CLI_TEST_TIMEOUT_MS, cm, exited, killAll, startNode, tempDir } from "./cli-harness";

afterEach(() => killAll());

/** The values `consume` printed, one per line (its closing summary line left out). */
async function read(port: number, isolation: string): Promise<string[]> {
  const r = await cm("consume", port, "--topic", "t", "--from-beginning", "--isolation", isolation);
  expect(r.code).toBe(0);
  return r.stdout.split("\n").filter((l) => l !== "" && !l.startsWith("Processed a total of"));
}

describe("a transaction left open across a kill -9 of the node", { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it("is still the transactional id's after the restart: its next producer aborts it, and read_committed moves past it", async () => {
    const dir = tempDir("cm-txn-node");
    let node = await startNode(dir);
    const port = node.port;
    expect((await cm("create-topic", port, "--topic", "t", "--partitions", "1")).code).toBe(0);
    const open = await cm(
      "produce",
      port,
      "--topic",
      "t",
      "--value",
      "open",
      "--transactional-id",
      "tx",
      "--leave-open",
    );
    expect(open.stdout).toContain("transaction tx open");
    expect((await cm("produce", port, "--topic", "t", "--value", "plain")).code).toBe(0);
    expect(await read(port, "read_committed")).toEqual([]);
    node.child.kill("SIGKILL");
    await exited(node.child);

    node = await startNode(dir, port);
    // Before transactions.json the restarted coordinator knew no "tx": this producer got a new producer id,
    // and the open transaction hung for good (read_committed read nothing, ever).
    const next = await cm("produce", port, "--topic", "t", "--value", "next", "--transactional-id", "tx");
    expect(next.stdout).toContain("the transaction an earlier producer left open with this id was aborted");
    expect(await read(port, "read_committed")).toEqual(["plain", "next"]);
    expect(await read(port, "read_uncommitted")).toEqual(["open", "plain", "next"]);
  });
});
