import { ClusterError, ManualClock, ManualScheduler } from "@cluster-mirror/cluster";
import { describe, expect, it } from "vitest";
import { CONTROLLER_RETRY_BACKOFF_MS } from "../src/coordinator/effect-executor";
import { flush } from "./core-helpers";
import { executorOver, recordingPartition } from "./executor-helpers";

/**
 * STOPPED's step (`clearReadOnly`) refused once with NOT_CONTROLLER, then answered. `stateEpochs` holds the
 * partition's state epoch each time the step asked the controller.
 */
function clearRefusedOnce() {
  const clock = new ManualClock(0);
  const scheduler = new ManualScheduler(clock);
  const context = { record: { stateEpoch: 3 }, pending: null };
  const stateEpochs: number[] = [];
  const destination = {
    clusterId: "destination",
    setMirrorReadOnly: () => {
      stateEpochs.push(context.record.stateEpoch);
      if (stateEpochs.length === 1) {
        throw new ClusterError("NOT_CONTROLLER", "the controller is failing over (no active controller)");
      }
    },
  };
  const executor = executorOver(destination, { clock, scheduler });
  const p = recordingPartition("orders", 0, context);
  executor.run(p.runtime, { type: "clearReadOnly", params: { stateEpoch: 3 } });
  return { scheduler, context, stateEpochs, p };
}

describe("effect executor: a step asked again after NOT_CONTROLLER", () => {
  it("is asked again in the task its wait ends in: a change landing in the next task at that instant is not overrun", async () => {
    const { scheduler, context, stateEpochs, p } = clearRefusedOnce();
    await flush();
    expect(stateEpochs).toEqual([3]);
    // A START committed by a task due at the same instant as the retry, run right after it (the simulator's
    // scheduler runs both before any promise continuation): the step must not clear the flag under it.
    scheduler.schedule(() => {
      context.record.stateEpoch = 4;
    }, CONTROLLER_RETRY_BACKOFF_MS);
    scheduler.run(CONTROLLER_RETRY_BACKOFF_MS);
    await flush();
    expect(stateEpochs).toEqual([3, 3]);
    expect(p.events).toEqual([]);
  });

  it("a change that landed before its wait ended: not asked again", async () => {
    const { scheduler, context, stateEpochs, p } = clearRefusedOnce();
    await flush();
    context.record.stateEpoch = 4;
    scheduler.run(10 * CONTROLLER_RETRY_BACKOFF_MS);
    await flush();
    expect(stateEpochs).toEqual([3]);
    expect(p.events).toEqual([]);
  });
});
