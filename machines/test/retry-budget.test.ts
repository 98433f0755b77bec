import { describe, expect, it } from "vitest";
import { lifecycleStateOf, recoverPartition, toStateRecord } from "../src/index";
import { COMMITTED, drive, START_TO_MIRRORING, type TestEvent } from "./helpers";

const RETRY = { baseMs: 100, capMs: 1000, maxAttempts: 2 };
const fail = (afterProgress?: boolean): TestEvent => ({
  type: "FAIL",
  message: "append failed",
  retryable: true,
  random: 0.5,
  ...(afterProgress === undefined ? {} : { afterProgress }),
});
const retried = [COMMITTED, { type: "RETRY_TIMER_FIRED" }, COMMITTED] as const;

describe("FAILED retry budget per incident", () => {
  it("a failure after the partition mirrored again starts the count over", () => {
    let s = drive(recoverPartition({ retry: RETRY }).snapshot, START_TO_MIRRORING).snapshot;
    for (let incident = 0; incident < 5; incident++) {
      s = drive(s, [fail(true), ...retried]).snapshot;
      expect(lifecycleStateOf(s)).toBe("MIRRORING");
      expect(toStateRecord(s).retryAttempt).toBe(1);
    }
  });

  it("failures with no progress between them keep counting, then give up", () => {
    let s = drive(recoverPartition({ retry: RETRY }).snapshot, START_TO_MIRRORING).snapshot;
    s = drive(s, [fail(true), ...retried, fail(false), ...retried]).snapshot;
    expect(toStateRecord(s).retryAttempt).toBe(2);
    const exhausted = drive(s, [fail(), COMMITTED]).snapshot;
    expect(toStateRecord(exhausted)).toMatchObject({ state: "FAILED", retryAttempt: -1 });
  });
});
