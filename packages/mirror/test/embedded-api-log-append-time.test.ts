import { describePartitionLog } from "@cluster-mirror/cluster";
import { describe, expect, it } from "vitest";
import { advance, embeddedApiEnv, produce, runUntil, SOURCE_BOOTSTRAP } from "./embedded-api-helpers";

describe("mirroring a LogAppendTime topic", () => {
  it("appends the source's stamped batches as they are: the destination keeps the source's append time", async () => {
    const env = embeddedApiEnv();
    const { mirroring } = env;
    env.source.controller.createTopic({
      name: "orders",
      replicaAssignment: [[0]],
      configs: { "message.timestamp.type": "LogAppendTime" },
    });
    await runUntil(env, mirroring.admin.createMirror("m1", { "bootstrap.servers": SOURCE_BOOTSTRAP }));
    await runUntil(env, mirroring.admin.addTopics("m1", "orders"));
    await produce(env, env.source, "orders", 3);
    // The destination appends later than the source did: a re-stamp would show.
    await advance(env, 5_000);
    await runUntil(env, mirroring.whenCaughtUp("m1"));
    // Even with the destination topic set to LogAppendTime (the mirror does not copy message.timestamp.*).
    env.destination.controller.incrementalAlterConfigs({ type: "topic", name: "orders" }, [
      { name: "message.timestamp.type", op: "SET", value: "LogAppendTime" },
    ]);
    await produce(env, env.source, "orders", 2);
    await advance(env, 5_000);
    await runUntil(env, mirroring.whenCaughtUp("m1"));
    const source = describePartitionLog(env.source, "orders", 0).batches;
    const destination = describePartitionLog(env.destination, "orders", 0).batches;
    expect(source).toHaveLength(2);
    expect(source[0]?.timestampType).toBe("LogAppendTime");
    expect(destination).toEqual(source);
  });
});
