import { afterEach, describe, expect, it } from "vitest";
import {
  BIN,
  CLI_TEST_TIMEOUT_MS,
  cm,
  describeRows,
  exited,
  getJson,
  killAll,
  mirrors,
  spawnBin,
  startNode,
  tempDir,
  waitFor,
  waitForLine,
  waitForMirror,
} from "./cli-harness";

afterEach(() => killAll());

interface LogView {
  logEndOffset: string;
  highWatermark: string;
  batches: {
    isControl: boolean;
    controlType: number | null;
    recordCount: number;
    producerId: string;
    isTransactional: boolean;
  }[];
}

const PARTITIONS = 4;
const ABORT = 0;
const COMMIT = 1;
const PID_RESET = 7;

/** Per partition: data records, ABORT, COMMIT and MIRROR_PID_RESET control batches. */
async function counts(port: number, cluster: string | undefined) {
  const out = [];
  for (let p = 0; p < PARTITIONS; p++) {
    const q = `${cluster ? `cluster=${cluster}&` : ""}topic=events&partition=${p}`;
    const log = await getJson<LogView>(port, `/v1/log?${q}`);
    const control = (type: number) => log.batches.filter((b) => b.isControl && b.controlType === type).length;
    out.push({
      records: log.batches.filter((b) => !b.isControl).reduce((n, b) => n + b.recordCount, 0),
      aborts: control(ABORT),
      commits: control(COMMIT),
      resets: control(PID_RESET),
      end: BigInt(log.logEndOffset),
    });
  }
  return out;
}

describe("node crash in the middle of a failover", { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it("SIGKILL right after --remove, restart on the same data dir: failover completes, nothing lost, no duplicate marker", async () => {
    const dir = tempDir("cm-crash");
    let node = await startNode(dir);
    const port = node.port;
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
    let acknowledged = 0;
    for (let i = 0; i < 3; i++) {
      const r = await cm(
        "produce",
        port,
        "--cluster",
        "primary",
        "--topic",
        "events",
        "--count",
        "40",
        "--value",
        `batch${i}`,
      );
      expect(r.code).toBe(0);
      acknowledged += 40;
    }
    await cm(
      "produce",
      port,
      "--cluster",
      "primary",
      "--topic",
      "events",
      "--count",
      "6",
      "--value",
      "c",
      "--transactional-id",
      "committed",
    );
    await cm(
      "produce",
      port,
      "--cluster",
      "primary",
      "--topic",
      "events",
      "--count",
      "6",
      "--value",
      "a",
      "--transactional-id",
      "aborted",
      "--abort",
    );
    const open = await cm(
      "produce",
      port,
      "--cluster",
      "primary",
      "--topic",
      "events",
      "--count",
      "8",
      "--value",
      "o",
      "--transactional-id",
      "open",
      "--leave-open",
    );
    expect(open.stdout).toContain("transaction open open");
    const openPartitions = new Set([...open.stdout.matchAll(/events-(\d+)@/g)].map((m) => Number(m[1])));
    expect(openPartitions.size).toBeGreaterThan(0);

    expect(
      (await mirrors(port, "--create", "--mirror", "dr", "--source-bootstrap", "primary:9092")).code,
    ).toBe(0);
    expect((await mirrors(port, "--add", "--topic", "events", "--mirror", "dr")).code).toBe(0);
    await waitForMirror(port, "dr", { caughtUp: true });
    expect(await describeRows(port, "dr")).toHaveLength(PARTITIONS);
    const source = await counts(port, "primary");
    expect(source.reduce((n, c) => n + c.records, 0)).toBe(acknowledged + 6 + 6 + 8);

    // --remove, and kill the node the moment the CLI prints its answer.
    const remove = spawnBin(BIN.kafkaMirrors, [
      "--bootstrap-server",
      `:${port}`,
      "--remove",
      "--topic",
      "events",
      "--mirror",
      "dr",
    ]);
    expect(await waitForLine(remove, /./)).toBe("Removed 1 topic(s) from mirror dr: [events]");
    node.child.kill("SIGKILL");
    await exited(node.child);

    node = await startNode(dir, port);
    const health = await getJson<{ clusters: { name: string; recoveredMetadataRecords: number }[] }>(
      port,
      "/v1/health",
    );
    expect(health.clusters.every((c) => c.recoveredMetadataRecords > 0)).toBe(true);
    // The failover completes after the restart.
    await waitForMirror(port, "dr", { state: "STOPPED" });
    const expectedEnd = (p: number) => source[p]!.end + BigInt(openPartitions.has(p) ? 1 : 0) + 1n;
    // The node has no event for a high watermark: poll the logs (the test's timeout is the hang guard).
    await waitFor("high watermarks to recover", async () =>
      (await counts(port, undefined)).every((c, p) => c.end === expectedEnd(p)),
    );
    const dest = await counts(port, undefined);
    for (let p = 0; p < PARTITIONS; p++) {
      const s = source[p]!;
      expect(dest[p], `partition ${p}`).toEqual({
        records: s.records,
        aborts: s.aborts + (openPartitions.has(p) ? 1 : 0),
        commits: s.commits,
        resets: 1,
        end: expectedEnd(p),
      });
    }
    // The topic is writable now, and stays consistent across another restart.
    expect((await cm("produce", port, "--topic", "events", "--value", "after")).code).toBe(0);
    const rows = await mirrors(port, "--describe", "--mirror", "dr");
    expect(rows.stdout).toMatch(/dr\s+events\s+0\s+.*STOPPED/);
  });
});
