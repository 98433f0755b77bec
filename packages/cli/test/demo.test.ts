import { afterEach, describe, expect, it } from "vitest";
import {
  BIN,
  CLI_TEST_TIMEOUT_MS,
  exited,
  killAll,
  mirrors,
  run,
  spawnBin,
  tempDir,
  waitForLine,
} from "./cli-harness";

afterEach(() => killAll());

describe("cluster-mirror demo", { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it("runs the guided failover and failback and prints a passing, computed verification", async () => {
    const r = await run(BIN.clusterMirror, ["demo", "--data-dir", tempDir("cm-demo")]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const out = r.stdout;
    expect(out).toContain("Added 2 topic(s) to mirror primary-to-dr: [orders, payments]");
    expect(out).toContain("Paused mirroring for 1 topic(s): [orders]");
    expect(out).toContain("Resumed mirroring for 1 topic(s): [orders]");
    expect(out).toContain("Removed 2 topic(s) from mirror primary-to-dr: [orders, payments]");
    expect(out).toMatch(/✓ failover aborted the open transaction tx-3: 2 ABORT marker\(s\) appended/);
    expect(out).toMatch(/✓ one MIRROR_PID_RESET on 5\/5 partitions/);
    expect(out).toMatch(/✓ batches byte-identical: 5\/5 partitions, \d+ batches\n/);
    expect(out).toMatch(/✓ offsets equal: 5\/5 partitions/);
    expect(out).toMatch(/✓ topic configs equal: 2\/2 topics, 4 dynamic configs\n/);
    expect(out).toMatch(/✓ ACLs equal: 4 vs 4 bindings\n/);
    expect(out).toMatch(/✓ group offsets equal: 1\/1 groups, 3 committed offsets\n/);
    expect(out).not.toContain("✗");
    expect(out).toMatch(/MIRROR\s+TOPIC\s+PARTITION\s+SOURCE-OFFSET\s+DESTINATION-OFFSET\s+LAG\s+STATE/);
    expect(out).toMatch(/dr-to-primary\s+payments\s+1\s+\d+\s+\d+\s+0\s+MIRRORING/);
    // How long it took depends on the machine's load; no test measures wall-clock speed.
    expect(out).toMatch(/All checks passed in \d+(\.\d+)?s\.\n/);
  });

  it("--keep-running serves the admin endpoint for kafka-mirrors", async () => {
    const child = spawnBin(BIN.clusterMirror, ["demo", "--keep-running", "--port", "0"]);
    const still = await waitForLine(child, /Still running/);
    const port = Number(/127\.0\.0\.1:(\d+)/.exec(still)?.[1]);
    const list = await mirrors(port, "--list", "--cluster", "primary");
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/dr-to-primary\s+2\s+\S+\s+dr:9092/);
    child.kill("SIGTERM");
    await exited(child);
  });
});
