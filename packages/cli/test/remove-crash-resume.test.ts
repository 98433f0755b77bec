import { afterEach, describe, expect, it } from "vitest";
import {
  BIN,
  cm,
  describeRows,
  killAll,
  mirrors,
  spawnBin,
  startNode,
  tempDir,
  waitFor,
} from "./cli-harness";

afterEach(() => killAll());

const PARTITIONS = 16;
/** Bound on each wait: the condition is what is waited for; this only stops a hung run. */
const BOUND_MS = 120_000;

describe("kill -9 during --remove (issue 11 item 11)", () => {
  it("after a restart, a repeated --remove is accepted and the failover completes", async () => {
    const dir = tempDir("cm-remove-crash");
    let node = await startNode(dir);
    const port = node.port;
    const topic = ["--topic", "events", "--mirror", "dr"];
    await cm(
      "create-topic",
      port,
      "--cluster",
      "primary",
      "--topic",
      "events",
      "--partitions",
      String(PARTITIONS),
    );
    await cm("produce", port, "--cluster", "primary", "--topic", "events", "--count", "64", "--value", "v");
    expect(
      (await mirrors(port, "--create", "--mirror", "dr", "--source-bootstrap", "primary:9092")).code,
    ).toBe(0);
    expect((await mirrors(port, "--add", ...topic)).code).toBe(0);
    await waitFor(
      "caught up",
      async () => {
        const rows = await describeRows(port, "dr");
        return rows.length === PARTITIONS && rows.every((r) => r.state === "MIRRORING" && r.lag === "0");
      },
      BOUND_MS,
    );

    // --remove, and kill -9 the node as soon as the first partition has begun its failover: the remove's
    // config is written, its STOP commands are (usually) not all sent.
    const remove = spawnBin(BIN.kafkaMirrors, ["--bootstrap-server", `:${port}`, "--remove", ...topic]);
    const removeExited = new Promise((r) => remove.once("exit", r));
    await waitFor(
      "the failover to begin",
      async () =>
        (await describeRows(port, "dr")).some((r) => r.state === "STOPPING" || r.state === "STOPPED"),
      BOUND_MS,
    );
    node.child.kill("SIGKILL");
    await new Promise((r) => node.child.once("exit", r));
    await removeExited;

    node = await startNode(dir, port);
    const again = await mirrors(port, "--remove", ...topic);
    expect(again.stderr).toBe("");
    expect(again.code).toBe(0);
    expect(again.stdout).toBe("Removed 1 topic(s) from mirror dr: [events]\n");
    await waitFor(
      "every partition STOPPED",
      async () => (await describeRows(port, "dr")).every((r) => r.state === "STOPPED"),
      BOUND_MS,
    );
    const twice = await mirrors(port, "--remove", ...topic);
    expect(twice.code).toBe(0);
    expect((await cm("produce", port, "--topic", "events", "--count", "16", "--value", "after")).code).toBe(
      0,
    );
  }, 400_000);
});
