import { ManualClock, ManualScheduler } from "@cluster-mirror/cluster";
import { KafkaError } from "@cluster-mirror/protocol";
import { describe, expect, it } from "vitest";
import { flush } from "./core-helpers";
import { executorOver, recordingPartition } from "./executor-helpers";

const HOUR = 3_600_000;

/**
 * A FAILED committed after a step failed on NOT_CONTROLLER (`effectType`'s step; the destination's
 * controller active again by then): the virtual time its retry timer fires at.
 */
async function retryFiresAfter(fail: "source" | "destination"): Promise<number | undefined> {
  const clock = new ManualClock(0);
  const scheduler = new ManualScheduler(clock);
  const notController = () => new KafkaError("NOT_CONTROLLER", 41, true, "no active controller");
  const source = {
    lastMirrorEpoch: async () => {
      throw notController();
    },
  };
  const destination = {
    clusterId: "destination",
    controllerActive: () => true,
    leaderOf: () => 0,
    leaderEpochOf: () => 0,
    replica: () => undefined,
  };
  const executor = executorOver(destination, {
    source,
    clock,
    scheduler,
    fetchers: () => undefined,
  });
  const p = recordingPartition("orders", 0);
  if (fail === "source") {
    executor.run(p.runtime, { type: "lookupLastMirrorEpoch", params: { stateEpoch: 3 } });
  } else {
    // A controller step whose in-place wait ran out: reported as the step's failure.
    (executor as unknown as { reportFailure(...a: unknown[]): void }).reportFailure(
      p.runtime,
      3,
      notController(),
      "truncateToEpoch",
    );
  }
  await flush();
  expect(p.events).toEqual([expect.objectContaining({ type: "EFFECT_FAILED", stateEpoch: 3 })]);
  executor.run(p.runtime, { type: "scheduleRetry", params: { stateEpoch: 4, attempt: 0, delayMs: HOUR } });
  for (const step of [0, 1_000, HOUR]) {
    scheduler.run(step);
    await flush();
    if (p.events.some((e) => e.type === "RETRY_TIMER_FIRED")) return clock.now();
  }
  return undefined;
}

describe("effect executor: a FAILED whose step was refused with NOT_CONTROLLER", () => {
  it("retries at once when the destination's controller, which refused it, is active again", async () => {
    expect(await retryFiresAfter("destination")).toBe(0);
  });

  it("waits its backoff when the NOT_CONTROLLER came from a step that asks no controller (the source)", async () => {
    // Retried at once, each retry refused alike, its budget was gone in a moment.
    expect(await retryFiresAfter("source")).toBe(HOUR + 1_000);
  });
});
