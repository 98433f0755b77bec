import { describe, expect, it } from "vitest";
import {
  InvalidScenarioError,
  MAX_ADVANCE_MS,
  MAX_PRODUCE_COUNT,
  parseScenario,
  scenarioFromHash,
  scenarioHash,
} from "../src/scenario/scenario";

const base = { topology: "fan-in", seed: 1 };

function rejection(value: unknown): string {
  try {
    parseScenario(value);
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidScenarioError);
    return (error as Error).message;
  }
  throw new Error(`accepted ${JSON.stringify(value)}`);
}

describe("parseScenario refuses what the URL can hold but the simulator cannot run", () => {
  it("a topology name inherited from Object.prototype is unknown", () => {
    for (const topology of ["toString", "constructor", "__proto__", "hasOwnProperty"]) {
      expect(rejection({ ...base, topology, ops: [] })).toMatch(
        new RegExp(`unknown topology '${topology}'; use one of active-passive`),
      );
    }
  });

  it("an operation without its fields says which field is missing", () => {
    expect(rejection({ ...base, ops: [{ op: "restart" }] })).toBe(
      "ops[0] (restart).node must be an integer, got nothing",
    );
    expect(rejection({ ...base, ops: [{ op: "settle" }, { op: "produce", target: 0, partition: 0 }] })).toBe(
      `ops[1] (produce).count must be an integer from 1 to ${MAX_PRODUCE_COUNT.toLocaleString("en")}, got nothing`,
    );
    expect(rejection({ ...base, ops: [{ op: "crash", node: "0", broker: 1 }] })).toBe(
      'ops[0] (crash).node must be an integer, got "0"',
    );
    expect(rejection({ ...base, ops: [null] })).toMatch(/^ops\[0\]: unknown operation 'undefined'/);
    expect(rejection({ ...base, ops: [{ op: "toString" }] })).toMatch(
      /^ops\[0\]: unknown operation 'toString'/,
    );
  });

  it("sizes that would hold the page's thread for minutes are refused, with the limit", () => {
    expect(
      rejection({ ...base, ops: [{ op: "produce", target: 0, partition: 0, count: 100_000_000 }] }),
    ).toMatch(/count must be an integer from 1 to 1,000, got 100000000/);
    expect(rejection({ ...base, ops: [{ op: "advance", ms: 1e12 }] })).toMatch(
      /ms must be an integer from 0 to 600,000, got 1000000000000/,
    );
    expect(rejection({ ...base, ops: [{ op: "advance", ms: -5 }] })).toMatch(/ms must be an integer from 0/);
    expect(rejection({ ...base, brokers: "x", ops: [] })).toBe(
      'brokers must be an integer from 1 to 5, got "x"',
    );
    expect(rejection({ ...base, brokers: 0, ops: [] })).toMatch(/^brokers must be an integer from 1 to 5/);
    // At the limits it runs.
    expect(
      parseScenario({
        ...base,
        brokers: 5,
        ops: [
          { op: "produce", target: -3, partition: 7, count: MAX_PRODUCE_COUNT },
          { op: "advance", ms: MAX_ADVANCE_MS },
        ],
      }).ops,
    ).toHaveLength(2);
  });

  it("a fragment that is not URI-encoded JSON is an InvalidScenarioError saying so", () => {
    for (const hash of ["#%E0%A4%A", "#{not json", `#${encodeURIComponent("[1,2]")}`]) {
      expect(() => scenarioFromHash(hash)).toThrow(InvalidScenarioError);
    }
    expect(() => scenarioFromHash("#%E0%A4%A")).toThrow(/the URL fragment is not URI-encoded JSON/);
    const spec = parseScenario({ ...base, ops: [{ op: "failover", choice: 1, mode: "unplanned" }] });
    expect(scenarioFromHash(scenarioHash(spec))).toEqual(spec);
  });
});
