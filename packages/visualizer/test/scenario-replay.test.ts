import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  InvalidScenarioError,
  parseScenario,
  runScenario,
  scenarioFromHash,
  scenarioHash,
} from "../src/scenario/scenario";

const dir = new URL("../scenarios/", import.meta.url).pathname;
const files = readdirSync(dir)
  .filter((f) => f.endsWith(".json"))
  .sort();

describe("scenarios replay exactly (the JSON the browser runner's URL holds)", () => {
  it("has the topologies of the issue", () => {
    const topologies = files.map((f) => JSON.parse(readFileSync(`${dir}${f}`, "utf8")).spec.topology);
    expect(new Set(topologies)).toEqual(new Set(["active-passive", "fan-out", "fan-in", "chain-3"]));
  });

  for (const file of files) {
    it(`${file}: same final states, offsets and checks as recorded`, async () => {
      const { spec, expected } = JSON.parse(readFileSync(`${dir}${file}`, "utf8"));
      const result = await runScenario(spec);
      expect(result.violations).toEqual([]);
      expect(result).toEqual(expected);
    });
  }

  it("a URL fragment round-trips the scenario; a bad one says what is allowed", () => {
    const spec = parseScenario(JSON.parse(readFileSync(`${dir}${files[0]}`, "utf8")).spec);
    expect(scenarioFromHash(scenarioHash(spec))).toEqual(spec);
    expect(() => parseScenario({ topology: "ring", seed: 1, ops: [] })).toThrow(InvalidScenarioError);
    expect(() => parseScenario({ topology: "fan-in", seed: 1, ops: [{ op: "explode" }] })).toThrow(
      /unknown operation 'explode'; use one of produce/,
    );
  });
});
