import { describe, expect, it, vi } from "vitest";
import type { ClusterLogger } from "../src/index";
import { testCluster } from "./helpers";

describe("a broker's scheduled tasks", () => {
  it("a task that throws is reported and runs again at its next interval, as Kafka's scheduler does", () => {
    const warnings: string[] = [];
    const logger: ClusterLogger = { warn: (_fields, message) => warnings.push(message) };
    const { cluster, settle } = testCluster({ brokers: 1, logger });
    const broker = cluster.broker(0)!;
    let calls = 0;
    vi.spyOn(broker, "runLogCleaner").mockImplementation(() => {
      calls++;
      if (calls === 1) throw new TypeError("a bug in one partition's cleaning");
    });
    settle(30_000);
    expect(calls).toBe(1);
    expect(warnings).toEqual([
      "broker 0: its log-cleaner task failed (a bug in one partition's cleaning); it runs again in 30000 ms",
    ]);
    // Before, the throw ended the loop: the cleaner never ran again on this broker.
    settle(30_000);
    expect(calls).toBe(2);
    cluster.close();
  });
});
