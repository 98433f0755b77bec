import { describe, expect, it } from "vitest";
import {
  applyEvent,
  lifecycleStateOf,
  type MirrorPartitionCommand,
  type MirrorPartitionSnapshot,
  sendCommand,
} from "../src/index";
import {
  COMMITTED,
  drive,
  fresh,
  lastAppended,
  names,
  START_TO_MIRRORING,
  type TestEvent,
  withEpoch,
} from "./helpers";

const deleted: TestEvent = {
  type: "FAIL",
  message: "The source topic is deleted.",
  retryable: false,
  random: 0,
};
const fetchError: TestEvent = {
  type: "FAIL",
  message: "fetch from source broker 1: orders-0: UNKNOWN_TOPIC_OR_PARTITION",
  retryable: true,
  random: 0.5,
};
const refused: TestEvent = { type: "COMMIT_FAILED", message: "not enough replicas", random: 0.5 };

function mirroring(): MirrorPartitionSnapshot {
  return drive(fresh(), START_TO_MIRRORING).snapshot;
}

function step(s: MirrorPartitionSnapshot, e: TestEvent) {
  return applyEvent(s, withEpoch(s, e));
}

/**
 * Kafka 4.1.1 CI (revoked-acls): the source topic was deleted; the metadata sync failed the partition for
 * good ("The source topic is deleted."), and the fetcher's UNKNOWN_TOPIC_OR_PARTITION, in flight, landed
 * after it. FAILED recorded it again: still for good (retryAttempt -1), but with the fetch error as the only
 * reason an operator could read. Whatever the order, the failure for good keeps its own message.
 */
describe("a retryable failure after a failure for good", () => {
  it("on FAILED for good: ignored, nothing appended, the message kept", () => {
    const failed = drive(mirroring(), [deleted, COMMITTED]).snapshot;
    expect(failed.value).toEqual({ FAILED: "awaitingOperator" });
    const after = step(failed, fetchError);
    expect(after.effects).toEqual([]);
    expect(after.snapshot.context.record).toEqual(failed.context.record);
    expect(after.snapshot.context.record).toMatchObject({
      errorMessage: "The source topic is deleted.",
      retryAttempt: -1,
    });
  });

  it("while the failure for good is being appended: dropped; it commits alone, nothing follows it", () => {
    const appending = drive(mirroring(), [deleted]).snapshot;
    const dropped = step(appending, fetchError);
    expect(dropped.changed).toBe(false);
    const { snapshot, effects } = drive(appending, [COMMITTED]);
    expect(snapshot.value).toEqual({ FAILED: "awaitingOperator" });
    expect(snapshot.context.record).toMatchObject({
      errorMessage: "The source topic is deleted.",
      retryAttempt: -1,
    });
    expect(snapshot.context.deferredFailure).toBeNull();
    expect(names(effects[0] ?? [])).not.toContain("appendStateRecord");
  });

  it("while the failure for good waits to be appended again: the retry appends it, not the fetch error", () => {
    const { snapshot } = drive(mirroring(), [deleted, refused]);
    expect(snapshot.value).toEqual({ committing: "retrying" });
    const after = step(snapshot, fetchError);
    expect(after.changed).toBe(false);
    const retried = drive(after.snapshot, [{ type: "COMMIT_RETRY_TIMER_FIRED" }, COMMITTED]);
    expect(lastAppended(retried.effects)).toMatchObject({
      state: "FAILED",
      errorMessage: "The source topic is deleted.",
      retryAttempt: -1,
    });
    expect(retried.snapshot.value).toEqual({ FAILED: "awaitingOperator" });
  });

  it("a retryable failure on FAILED still backing off is recorded (its retry count goes on)", () => {
    const failed = drive(mirroring(), [fetchError, COMMITTED]).snapshot;
    expect(failed.value).toEqual({ FAILED: "backingOff" });
    const again = step(failed, { ...fetchError, message: "another fetch error" });
    expect(names(again.effects)).toContain("appendStateRecord");
  });

  it("a non-retryable failure on FAILED for good records its own message", () => {
    const failed = drive(mirroring(), [deleted, COMMITTED]).snapshot;
    const { snapshot } = drive(failed, [
      { type: "FAIL", message: "The source cluster id changed.", retryable: false, random: 0 },
      COMMITTED,
    ]);
    expect(lifecycleStateOf(snapshot)).toBe("FAILED");
    expect(snapshot.context.record).toMatchObject({
      errorMessage: "The source cluster id changed.",
      retryAttempt: -1,
    });
  });
});

describe("a retryable FAIL command against a failure for good", () => {
  it("is refused with the failure it would hide and what to do", () => {
    const failed = drive(mirroring(), [deleted, COMMITTED]).snapshot;
    expect(() => sendCommand(failed, fetchError as MirrorPartitionCommand)).toThrow(
      /failed for good \(The source topic is deleted\.\).*Recover it, or remove the topic/,
    );
  });
});
