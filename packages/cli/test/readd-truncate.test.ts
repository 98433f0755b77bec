import { afterEach, describe, expect, it } from "vitest";
import { cm, describeRows, failureLine, killAll, mirrors, startNode, tempDir, waitFor } from "./cli-harness";

afterEach(() => killAll());

/** Bound on each wait: the condition is what is waited for; this only stops a hung run. */
const BOUND_MS = 120_000;

describe("kafka-mirrors --add over a failed-over topic (issue 11 item 8)", () => {
  it("refuses to truncate records written since the failover unless --truncate-local-writes", async () => {
    const node = await startNode(tempDir("cm-readd"));
    const port = node.port;
    const inState = async (state: string) =>
      (await describeRows(port, "dr")).every(
        (r) => r.state === state && (state !== "MIRRORING" || r.lag === "0"),
      );
    expect((await cm("create-topic", port, "--cluster", "primary", "--topic", "orders")).code).toBe(0);
    await cm("produce", port, "--cluster", "primary", "--topic", "orders", "--count", "3", "--value", "p");
    expect(
      (await mirrors(port, "--create", "--mirror", "dr", "--source-bootstrap", "primary:9092")).code,
    ).toBe(0);
    expect((await mirrors(port, "--add", "--topic", "orders", "--mirror", "dr")).code).toBe(0);
    await waitFor("dr caught up", () => inState("MIRRORING"), BOUND_MS);
    expect((await mirrors(port, "--remove", "--topic", "orders", "--mirror", "dr")).code).toBe(0);
    await waitFor("dr STOPPED", () => inState("STOPPED"), BOUND_MS);
    const local = await cm("produce", port, "--topic", "orders", "--count", "2", "--value", "local");
    expect(local.code).toBe(0);

    const usage = await mirrors(
      port,
      "--remove",
      "--topic",
      "orders",
      "--mirror",
      "dr",
      "--truncate-local-writes",
    );
    expect(usage.code).toBe(2);
    expect(failureLine(usage)).toMatch(/--truncate-local-writes cannot be used with --remove/);

    const refused = await mirrors(port, "--add", "--topic", "orders", "--mirror", "dr");
    expect(refused.code).toBe(1);
    expect(failureLine(refused)).toMatch(/orders-0: 2 record\(s\) from offset 4.*--truncate-local-writes/);
    expect((await describeRows(port, "dr")).map((r) => r.state)).toEqual(["STOPPED"]);

    const forced = await mirrors(
      port,
      "--add",
      "--topic",
      "orders",
      "--mirror",
      "dr",
      "--truncate-local-writes",
    );
    expect(forced.code).toBe(0);
    expect(forced.stdout).toBe("Added 1 topic(s) to mirror dr: [orders]\n");
    await waitFor("dr mirroring again", () => inState("MIRRORING"), BOUND_MS);
  }, 300_000);
});
