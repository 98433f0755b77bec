import { afterEach, describe, expect, it } from "vitest";
import { cm, describeRows, failureLine, killAll, mirrors, startNode, tempDir, waitFor } from "./cli-harness";

afterEach(() => killAll());

/** Bound on each wait: the condition is what is waited for; this only stops a hung run. */
const BOUND_MS = 120_000;

describe("kafka-mirrors --failover-preview / --promote and cluster-mirror verify (issue 15)", () => {
  it("previews, verifies (exit 0 only when all agree), refuses a promote that cannot reach lag 0, then promotes", async () => {
    const node = await startNode(tempDir("cm-promote"));
    const port = node.port;
    expect((await cm("create-topic", port, "--cluster", "primary", "--topic", "orders")).code).toBe(0);
    await cm("produce", port, "--cluster", "primary", "--topic", "orders", "--count", "5", "--value", "p");
    expect(
      (await mirrors(port, "--create", "--mirror", "dr", "--source-bootstrap", "primary:9092")).code,
    ).toBe(0);
    expect((await mirrors(port, "--add", "--topic", "orders", "--mirror", "dr")).code).toBe(0);
    const caughtUp = async () =>
      (await describeRows(port, "dr")).every((r) => r.state === "MIRRORING" && r.lag === "0");
    await waitFor("dr caught up", caughtUp, BOUND_MS);

    const preview = await mirrors(port, "--failover-preview", "--topic", "orders", "--mirror", "dr");
    expect(preview.code).toBe(0);
    expect(preview.stdout).toContain("Failover preview of mirror dr (dry run: nothing was changed)");
    expect(preview.stdout).toMatch(
      /│ orders │ 0\s+│ MIRRORING │ 0\s+│ none\s+│ \d+\s+│ \d+ -> \d+\s+│ none\s+│/,
    );

    // --json gives offsets and lags as numbers, as --describe --json does (they were strings: in jq,
    // `.lag > 0` held for every row).
    const previewJson = await mirrors(
      port,
      "--failover-preview",
      "--topic",
      "orders",
      "--mirror",
      "dr",
      "--json",
    );
    expect(previewJson.code).toBe(0);
    const [row] = JSON.parse(previewJson.stdout) as Record<string, unknown>[];
    const [described] = JSON.parse(
      (await mirrors(port, "--describe", "--mirror", "dr", "--json")).stdout,
    ) as Record<string, unknown>[];
    expect(row).toMatchObject({
      topic: "orders",
      partition: 0,
      state: "MIRRORING",
      sourceOffset: described!.sourceOffset,
      destinationOffset: described!.destinationOffset,
      lag: 0,
      openTransactions: [],
      failbackTruncation: null,
      failbackSupported: true,
    });
    expect(typeof row!.sourceOffset).toBe("number");

    let verified = await cm("verify", port, "--mirror", "dr");
    for (let i = 0; i < 50 && verified.code !== 0; i++) verified = await cm("verify", port, "--mirror", "dr");
    expect(verified.code).toBe(0);
    expect(verified.stdout).toContain("Mirror dr (orders): source and destination agree");
    expect(verified.stdout).toMatch(/│ batches\s+│ OK\s+│ 1 partition, \d+ batch(es)?/);

    expect((await mirrors(port, "--pause", "--topic", "orders", "--mirror", "dr")).code).toBe(0);
    await waitFor("dr PAUSED", async () => (await describeRows(port, "dr"))[0]?.state === "PAUSED", BOUND_MS);
    await cm("produce", port, "--cluster", "primary", "--topic", "orders", "--count", "2", "--value", "late");

    const differs = await cm("verify", port, "--mirror", "dr");
    expect(differs.code).toBe(1);
    expect(differs.stdout).toMatch(
      /│ offsets\s+│ DIFFERS\s+│.*│ orders-0: log end 5 here, source high watermark 7/,
    );
    expect(failureLine(differs)).toMatch(/mirror dr differs from its source in offsets/);

    const timedOut = await mirrors(
      port,
      "--promote",
      "--topic",
      "orders",
      "--mirror",
      "dr",
      "--timeout-ms",
      "300",
    );
    expect(timedOut.code).toBe(1);
    expect(failureLine(timedOut)).toMatch(
      /did not reach lag 0.*orders-0 lag 2 \(PAUSED\).*Nothing was failed over/,
    );
    expect((await describeRows(port, "dr"))[0]?.state).toBe("PAUSED");

    expect((await mirrors(port, "--resume", "--topic", "orders", "--mirror", "dr")).code).toBe(0);
    const promoted = await mirrors(port, "--promote", "--topic", "orders", "--mirror", "dr");
    expect(promoted.code).toBe(0);
    expect(promoted.stdout).toMatch(
      /^Promoted 1 topic\(s\) of mirror dr: \[orders\]; 1 partition\(s\) reached lag 0/,
    );
    expect((await describeRows(port, "dr")).map((r) => r.state)).toEqual(["STOPPED"]);
    expect((await cm("produce", port, "--topic", "orders", "--value", "on dr")).code).toBe(0);
    // Failed over, the topic is no longer the mirror's: verify compares nothing and does not call it agreement.
    const nothing = await cm("verify", port, "--mirror", "dr");
    expect(nothing.code).toBe(1);
    expect(nothing.stdout).toContain("Mirror dr (no topics): nothing to compare");
    expect(failureLine(nothing)).toBe(
      "Error: mirror dr has no mirrored or paused topics, so nothing was compared; a topic failed over (--remove) is no longer part of the mirror: verify before the failover, or add topics with kafka-mirrors --add",
    );
  }, 300_000);

  it("rejects bad flag combinations with a usage error", async () => {
    const noTopic = await mirrors(1, "--promote", "--mirror", "dr");
    expect(noTopic.code).toBe(2);
    expect(failureLine(noTopic)).toMatch(/--promote needs --topic REGEX/);
    const zeroTimeout = await mirrors(1, "--add", "--topic", "t", "--mirror", "dr", "--timeout-ms", "0");
    expect(zeroTimeout.code).toBe(2);
    expect(failureLine(zeroTimeout)).toMatch(/--timeout-ms must be an integer from 1 to 2147483647, got '0'/);
    // Longer than a Node.js timer waits: refused, rather than a timer that fires at once.
    const tooLong = await mirrors(1, "--describe", "--timeout-ms", "3000000000");
    expect(tooLong.code).toBe(2);
    expect(tooLong.stderr).not.toMatch(/TimeoutOverflowWarning/);
    expect(failureLine(tooLong)).toMatch(
      /--timeout-ms must be an integer from 1 to 2147483647, got '3000000000'/,
    );
    const badTimeout = await mirrors(
      1,
      "--promote",
      "--topic",
      "t",
      "--mirror",
      "dr",
      "--timeout-ms",
      "soon",
    );
    expect(badTimeout.code).toBe(2);
    expect(failureLine(badTimeout)).toMatch(
      /--timeout-ms must be an integer from 1 to 2147483647, got 'soon'/,
    );
    const noMirror = await cm("verify", 1);
    expect(noMirror.code).toBe(2);
  }, 60_000);
});
