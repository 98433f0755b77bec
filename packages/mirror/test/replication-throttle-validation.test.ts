import { ClusterError, type ClusterLogger } from "@cluster-mirror/cluster";
import { afterEach, describe, expect, it, vi } from "vitest";
import { throttledRate } from "../src/fetcher/replication-quota";
import { mirrorEnv as dataEnv, drive, leaderLog, produce, TOPIC, valuesBatch } from "./data-helpers";
import { mirrorEnv, sourceTopic } from "./meta-helpers";

const RATE = "mirror.replication.throttled.rate";
const REPLICAS = "mirror.replication.throttled.replicas";
const KB = "x".repeat(1000);

function errorOf(fn: () => unknown): ClusterError {
  try {
    fn();
  } catch (e) {
    if (e instanceof ClusterError) return e;
    throw e;
  }
  throw new Error("expected a ClusterError");
}

function recordingLogger() {
  const warnings: { fields: Record<string, unknown>; message: string }[] = [];
  const logger: ClusterLogger = { warn: (fields, message) => warnings.push({ fields, message }) };
  return { logger, warnings };
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("mirror throttle configs are validated when set (spec §8)", () => {
  it("refuses a mirror.replication.throttled.rate of 0, negative, garbage or with units", () => {
    const env = mirrorEnv();
    for (const broker of ["0", ""]) {
      for (const value of ["0", "-1", "abc", "10MB"]) {
        const err = errorOf(() =>
          env.destination.controller.incrementalAlterConfigs({ type: "broker", name: broker }, [
            { name: RATE, op: "SET", value },
          ]),
        );
        expect(err.errorName, `${broker}=${value}`).toBe("INVALID_CONFIG");
        expect(err.message).toContain(RATE);
      }
    }
    expect(env.destination.controller.image.brokerConfig(0, RATE)).toBeUndefined();
  });

  it("refuses a malformed mirror.replication.throttled.replicas on a mirror topic", () => {
    const env = mirrorEnv();
    sourceTopic(env.destination, "x");
    const err = errorOf(() =>
      env.destination.controller.incrementalAlterConfigs({ type: "topic", name: "x" }, [
        { name: REPLICAS, op: "SET", value: "0-1,garbage" },
      ]),
    );
    expect(err.errorName).toBe("INVALID_CONFIG");
    expect(err.message).toContain("'0-1,garbage'");
    expect(env.destination.controller.image.topic("x")?.configs.has(REPLICAS)).toBe(false);
  });

  it("a valid rate set through the controller still throttles, and deleting it lifts the throttle", async () => {
    const env = dataEnv({ config: { partitionMaxBytes: 2048 } });
    for (let i = 0; i < 60; i++) await produce(env, valuesBatch([KB]), 0);
    env.destination.controller.incrementalAlterConfigs({ type: "broker", name: "" }, [
      { name: RATE, op: "SET", value: "1000" },
    ]);
    env.destination.controller.incrementalAlterConfigs({ type: "topic", name: TOPIC }, [
      { name: REPLICAS, op: "SET", value: "*" },
    ]);
    env.manager.addPartition(env.key(0));
    await drive(env, 5000);
    expect(leaderLog(env.destination, 0).logEndOffset).toBeLessThan(25n);
    env.destination.controller.incrementalAlterConfigs({ type: "broker", name: "" }, [
      { name: RATE, op: "DELETE" },
    ]);
    await drive(env, 1000);
    expect(leaderLog(env.destination, 0).logEndOffset).toBe(60n);
  });
});

describe("a stored rate the controller would refuse now (from an older metadata log)", () => {
  it("reads positive numbers as the rate, and unset as no throttle, without a warning", () => {
    const { logger, warnings } = recordingLogger();
    expect(throttledRate(undefined, logger)).toBeUndefined();
    expect(throttledRate("1000", logger)).toBe(1000);
    expect(throttledRate("1e6", logger)).toBe(1_000_000);
    expect(warnings).toEqual([]);
  });

  it("is ignored, as before, but reported once per value naming the config and the value", () => {
    const { logger, warnings } = recordingLogger();
    for (const value of ["0", "-1", "abc", "10MB", "", "10MB", "0"]) {
      expect(throttledRate(value, logger), value).toBeUndefined();
    }
    expect(warnings.map((w) => w.fields)).toEqual(
      ["0", "-1", "abc", "10MB", ""].map((value) => ({ config: RATE, value })),
    );
    expect(warnings[3]!.message).toContain(`${RATE}='10MB'`);
    expect(warnings[3]!.message).toContain("NOT throttled");
  });

  it("leaves the fetchers mirroring unthrottled and warns once, not on every fetch round", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const env = dataEnv({ config: { partitionMaxBytes: 2048 } });
    for (let i = 0; i < 60; i++) await produce(env, valuesBatch([KB]), 0);
    // What replaying an old metadata log leaves in the image: the controller refuses this value today.
    env.destination.controller.image.brokerConfigs.set("0", new Map([[RATE, "25MB"]]));
    env.destination.controller.incrementalAlterConfigs({ type: "topic", name: TOPIC }, [
      { name: REPLICAS, op: "SET", value: "0:0" },
    ]);
    env.manager.addPartition(env.key(0));
    await drive(env, 5000);
    expect(leaderLog(env.destination, 0).logEndOffset).toBe(60n);
    const about = warn.mock.calls.filter((args) => String(args[0]).includes(`${RATE}='25MB'`));
    expect(about).toHaveLength(1);
  });
});
