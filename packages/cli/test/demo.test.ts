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
    // The failover preview, then the shared verification (cluster-mirror verify's table and verdict).
    expect(out).toMatch(/--failover-preview --topic 'orders\|payments' --mirror primary-to-dr/);
    expect(out).toMatch(/│ payments │ 0\s+│ MIRRORING │ 0\s+│ \d+\/\d+@\d+\s+│/);
    expect(out).toContain(
      "cluster-mirror verify --bootstrap-server :9094 --cluster primary --mirror dr-to-primary",
    );
    expect(out).toContain("Mirror dr-to-primary (orders, payments): source and destination agree");
    expect(out).toMatch(
      /│ batches\s+│ OK\s+│ 5 partitions, \d+ batches byte for byte up to the destination HW/,
    );
    expect(out).toMatch(/│ offsets\s+│ OK\s+│ 5 partitions \(log start, log end\), \d+ offsets/);
    expect(out).toMatch(/│ configs\s+│ OK\s+│ 2 topics, 4 synced dynamic configs/);
    expect(out).toMatch(/│ acls\s+│ OK\s+│ 4 bindings the mirror syncs/);
    expect(out).toMatch(/│ group offsets\s+│ OK\s+│ 1 group, 3 committed offsets/);
    expect(out).toContain("✓ verify: source and destination agree on all 6 checks");
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
