import { describe, expect, it } from "vitest";
import { ClusterError, Controller, SeededRandom } from "../src/index";

function controller(): Controller {
  const c = new Controller({ random: new SeededRandom(1) });
  c.registerBroker(0);
  return c;
}

function refusal(configs: Record<string, string>): ClusterError {
  try {
    controller().createTopic({ name: "t", configs });
  } catch (error) {
    if (error instanceof ClusterError) return error;
    throw error;
  }
  throw new Error("the topic was created");
}

describe("an unknown topic config is refused with a did-you-mean hint", () => {
  it("names the closest known config for a typo, then lists every known one", () => {
    const e = refusal({ "retention.msx": "1000" });
    expect(e.errorName).toBe("INVALID_CONFIG");
    expect(e.message).toContain("unknown topic config 'retention.msx'; did you mean 'retention.ms'?");
    expect(e.message).toContain("Known configs are: ");
    expect(e.message).toContain("cleanup.policy");
    // Case and a dropped dot are typos too.
    expect(refusal({ "Segment.Bytes": "1" }).message).toContain("did you mean 'segment.bytes'?");
    expect(refusal({ "minisync.replicas": "2" }).message).toContain("did you mean 'min.insync.replicas'?");
  });

  it("gives no hint for a name that is not a typo of a known one", () => {
    const e = refusal({ "replication.factor": "3" });
    expect(e.message).not.toContain("did you mean");
    expect(e.message).toContain("unknown topic config 'replication.factor'. Known configs are: ");
  });

  it("refuses names every JavaScript object inherits (toString, constructor, __proto__) as unknown, as Kafka does", () => {
    for (const name of ["toString", "constructor", "__proto__", "hasOwnProperty"]) {
      const e = refusal({ [name]: "1" });
      expect(e.errorName, name).toBe("INVALID_CONFIG");
      expect(e.message).toContain(`unknown topic config '${name}'`);
    }
    const c = controller();
    c.createTopic({ name: "t", configs: {} });
    expect(() =>
      c.incrementalAlterConfigs({ type: "topic", name: "t" }, [{ name: "valueOf", op: "SET", value: "1" }]),
    ).toThrow(/unknown topic config 'valueOf'/);
    expect(c.image.topic("t")!.configs.size).toBe(0);
  });
});
