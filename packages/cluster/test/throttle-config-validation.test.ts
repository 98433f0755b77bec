import { describe, expect, it } from "vitest";
import type { Controller } from "../src/index";
import { controller, errorOf } from "./controller-helpers";

const RATE = "mirror.replication.throttled.rate";
const REPLICAS = "mirror.replication.throttled.replicas";

const setRate = (c: Controller, broker: string, value: string) =>
  c.incrementalAlterConfigs({ type: "broker", name: broker }, [{ name: RATE, op: "SET", value }]);

describe(`broker config ${RATE}`, () => {
  it.each([
    "0",
    "00",
    "-1",
    "abc",
    "10MB",
    "10 MB",
    "1.5",
    "1e6",
    "",
    " 1000",
    "+1000",
    "9223372036854775808",
  ])(
    "refuses %j on a broker and as the cluster-wide default, with INVALID_CONFIG naming config and value",
    (value) => {
      const c = controller();
      for (const broker of ["0", ""]) {
        const err = errorOf(() => setRate(c, broker, value));
        expect(err.errorName).toBe("INVALID_CONFIG");
        expect(err.message).toContain(RATE);
        expect(err.message).toContain(broker === "" ? "cluster-wide broker default" : "broker 0");
        if (!/^0+$/.test(value)) {
          expect(err.message).toContain(`got '${value}'`);
          expect(err.message).toContain("whole number of bytes per second from 1 to 9223372036854775807");
          expect(err.message).toContain("without units");
        }
      }
      expect(c.image.brokerConfig(0, RATE)).toBeUndefined();
    },
  );

  it("explains that 0 would stop mirroring and points to --pause or deleting the config", () => {
    const c = controller();
    const err = errorOf(() => setRate(c, "1", "0"));
    expect(err.errorName).toBe("INVALID_CONFIG");
    expect(err.message).toContain("cannot be 0");
    expect(err.message).toContain("stop mirroring altogether");
    expect(err.message).toContain("kafka-mirrors --pause");
    expect(err.message).toContain("delete the config");
  });

  it("accepts whole bytes per second from 1 up, on a broker and as the default, and deletes it", () => {
    const c = controller();
    setRate(c, "", "1");
    setRate(c, "0", "10485760");
    setRate(c, "1", "9223372036854775807");
    expect(c.image.brokerConfig(0, RATE)).toBe("10485760");
    expect(c.image.brokerConfig(1, RATE)).toBe("9223372036854775807");
    expect(c.image.brokerConfig(2, RATE)).toBe("1");
    c.incrementalAlterConfigs({ type: "broker", name: "0" }, [{ name: RATE, op: "DELETE" }]);
    c.incrementalAlterConfigs({ type: "broker", name: "" }, [{ name: RATE, op: "DELETE" }]);
    expect(c.image.brokerConfig(0, RATE)).toBeUndefined();
    expect(c.image.brokerConfig(2, RATE)).toBeUndefined();
  });

  it("is all or nothing: a bad rate leaves the other configs of the request unset", () => {
    const c = controller();
    const err = errorOf(() =>
      c.incrementalAlterConfigs({ type: "broker", name: "0" }, [
        { name: "some.other.config", op: "SET", value: "x" },
        { name: RATE, op: "SET", value: "10MB" },
      ]),
    );
    expect(err.errorName).toBe("INVALID_CONFIG");
    expect(c.image.brokerConfig(0, "some.other.config")).toBeUndefined();
  });

  it("still stores broker configs it does not know as they are", () => {
    const c = controller();
    c.incrementalAlterConfigs({ type: "broker", name: "0" }, [
      { name: "some.other.config", op: "SET", value: "0" },
    ]);
    expect(c.image.brokerConfig(0, "some.other.config")).toBe("0");
  });
});

describe(`topic config ${REPLICAS}`, () => {
  const setReplicas = (c: Controller, value: string, name = REPLICAS) =>
    c.incrementalAlterConfigs({ type: "topic", name: "t" }, [{ name, op: "SET", value }]);

  it.each([
    "0-1,garbage",
    "garbage",
    "0:1,garbage",
    "0",
    "0:",
    ":1",
    "0:1:2",
    "*,0:1",
    "a:b",
    "-1:0",
    "0:1;1:1",
  ])("refuses %j with INVALID_CONFIG naming config, value and the accepted format", (value) => {
    const c = controller();
    c.createTopic({ name: "t", numPartitions: 2 });
    const err = errorOf(() => setReplicas(c, value));
    expect(err.errorName).toBe("INVALID_CONFIG");
    expect(err.message).toContain(REPLICAS);
    expect(err.message).toContain(`got '${value}'`);
    expect(err.message).toContain("partition:brokerId");
    expect(c.image.topic("t")?.configs.has(REPLICAS)).toBe(false);
  });

  it("names the entries that are not partition:brokerId", () => {
    const c = controller();
    c.createTopic({ name: "t" });
    expect(errorOf(() => setReplicas(c, "0-1,1:0,garbage")).message).toContain("'0-1', 'garbage' are not");
  });

  // Stored as Kafka describes it (its LIST type split on commas with whitespace, joined with commas).
  it.each([
    ["*", "*"],
    [" * ", "*"],
    ["0:1", "0:1"],
    ["0:1,3:2", "0:1,3:2"],
    ["0:1, 3:2", "0:1,3:2"],
    ["", ""],
    ["0:1,,1:1", "0:1,,1:1"],
  ])("accepts %j as Kafka does, described as %j", (value, described) => {
    const c = controller();
    c.createTopic({ name: "t" });
    setReplicas(c, value);
    expect(c.image.topic("t")?.configs.get(REPLICAS)).toBe(described);
  });

  it("checks the result of APPEND and the configs given at topic creation", () => {
    const c = controller();
    c.createTopic({ name: "t", configs: { [REPLICAS]: "0:0" } });
    c.incrementalAlterConfigs({ type: "topic", name: "t" }, [{ name: REPLICAS, op: "APPEND", value: "1:0" }]);
    expect(c.image.topic("t")?.configs.get(REPLICAS)).toBe("0:0,1:0");
    const err = errorOf(() =>
      c.incrementalAlterConfigs({ type: "topic", name: "t" }, [
        { name: REPLICAS, op: "APPEND", value: "junk" },
      ]),
    );
    expect(err.errorName).toBe("INVALID_CONFIG");
    expect(errorOf(() => c.createTopic({ name: "u", configs: { [REPLICAS]: "junk" } })).errorName).toBe(
      "INVALID_CONFIG",
    );
  });

  it("applies the same check to Kafka's leader/follower.replication.throttled.replicas", () => {
    const c = controller();
    c.createTopic({ name: "t" });
    for (const name of ["leader.replication.throttled.replicas", "follower.replication.throttled.replicas"]) {
      expect(errorOf(() => setReplicas(c, "0-1,garbage", name)).errorName).toBe("INVALID_CONFIG");
      setReplicas(c, "0:1", name);
      expect(c.image.topic("t")?.configs.get(name)).toBe("0:1");
    }
  });

  it("can still be deleted", () => {
    const c = controller();
    c.createTopic({ name: "t" });
    setReplicas(c, "*");
    c.incrementalAlterConfigs({ type: "topic", name: "t" }, [{ name: REPLICAS, op: "DELETE" }]);
    expect(c.image.topic("t")?.configs.has(REPLICAS)).toBe(false);
  });
});
